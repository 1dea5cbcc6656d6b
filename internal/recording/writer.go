package recording

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

const (
	// blockTicks is how many ticks the flusher encodes and writes at once:
	// half a second, one write and one header update, as when the tick
	// wrote the file itself.
	blockTicks = 25
	// ringTicks bounds the ticks a recording holds for the flusher
	// (1.28 s): the block being written and, behind it, room for a pacer
	// that wakes 780 ms late and records every frame it owes at once, or
	// for a disk that is as slow.
	ringTicks = 64
)

// file is where a recording goes: an *os.File, or a test's stand-in.
type file interface {
	io.WriteSeeker
	io.Closer
}

// Writer records one call. Write, called on the call's media clock every
// 20 ms tick, only copies the tick's two frames into the recording's ring;
// its Store's flusher encodes them and writes them to the file in blocks
// of half a second, one write and one header update each (audio.StereoWAV
// rewrites the sizes in place). So a crash loses only the audio not yet
// written, at most the last 0.52 s while the disk keeps up (a block and a
// flusher round), and the file read meanwhile is a valid WAV of
// everything before it. The file is
// not fsynced: what was written survives the process, not the machine.
//
// A slow disk never holds up a tick: the pacer that calls Write paces
// other calls' RTP. When the disk is so far behind that the ring is full
// (1.28 s held), a tick's audio is dropped instead; the flusher writes
// silence in its place, so the recording still lasts as long as the call,
// both sides in step and later audio at its time, and Close reports how
// much was lost. (When the tick wrote the file itself, a slow disk stalled
// every call on that pacer.)
type Writer struct {
	fl    *flusher
	rate  int
	frame int // samples a ring slot holds per side: 20 ms at rate

	// The flusher's own, once the header is written.
	f   file
	wav *audio.StereoWAV
	err error // the first disk error: the recording stops there

	mu     sync.Mutex
	ring   []int16 // ringTicks slots, each frame samples of the caller's then frame of the agent's
	slots  []slot
	head   int64 // slots the flusher has written and given back
	tail   int64 // slots ticks have filled
	gap    int64 // samples dropped since the last slot was filled
	lost   int64 // samples dropped in all
	queued bool  // on the flusher's list
	closed bool  // Close was called: ticks are ignored
	failed bool  // the disk failed: ticks are ignored

	done     chan struct{} // closed by the flusher once the file is final
	closeErr error         // set before done is closed
	onClose  func()        // set by the Store: called once the file is final
}

// slot says what a ring slot holds.
type slot struct {
	caller, agent int   // samples of each side; the shorter is padded with silence
	gap           int64 // samples of silence before them, dropped while the ring was full
}

// newWriter writes f's WAV header and hands the recording to fl.
func newWriter(fl *flusher, f file, rate int) (*Writer, error) {
	wav, err := audio.NewStereoWAV(f, rate)
	if err != nil {
		return nil, err
	}
	frame := max(media.FrameSamples(rate), 1)
	w := &Writer{
		fl: fl, rate: rate, frame: frame, f: f, wav: wav,
		ring:  make([]int16, ringTicks*2*frame),
		slots: make([]slot, ringTicks),
		done:  make(chan struct{}),
	}
	fl.add()
	return w, nil
}

// Write adds one tick: the caller's side left, the agent's right (the
// shorter padded with silence). It copies them and returns: it never
// waits for the disk, and allocates nothing. A disk error stops the
// recording (reported by Close), never the call.
func (w *Writer) Write(caller, agent []int16) {
	n := max(len(caller), len(agent))
	if n == 0 {
		return
	}
	w.mu.Lock()
	if w.closed || w.failed {
		w.mu.Unlock()
		return
	}
	for at := 0; at < n; at += w.frame {
		if w.tail-w.head == int64(len(w.slots)) {
			w.gap += int64(n - at)
			w.lost += int64(n - at)
			break
		}
		k := int(w.tail % int64(len(w.slots)))
		c := copy(w.ring[2*k*w.frame:(2*k+1)*w.frame], part(caller, at, w.frame))
		a := copy(w.ring[(2*k+1)*w.frame:(2*k+2)*w.frame], part(agent, at, w.frame))
		w.slots[k] = slot{caller: c, agent: a, gap: w.gap}
		w.gap = 0
		w.tail++
	}
	due := !w.queued && w.tail-w.head >= blockTicks
	if due {
		w.queued = true
	}
	w.mu.Unlock()
	if due {
		w.fl.queue(w)
	}
}

// part is s's samples from at, at most n of them.
func part(s []int16, at, n int) []int16 {
	if at >= len(s) {
		return nil
	}
	return s[at:min(at+n, len(s))]
}

// Close finishes the file: the flusher writes what the ring holds and the
// header's final sizes, and closes it. It returns once the file is
// complete. Closing twice is harmless.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return nil
	}
	w.closed = true
	due := !w.queued
	w.queued = true
	w.mu.Unlock()
	if due {
		w.fl.queue(w)
	}
	w.fl.poke()
	<-w.done
	if w.onClose != nil {
		w.onClose()
	}
	return w.closeErr
}

// flush writes the ticks the ring holds in whole blocks or, once the
// recording is closed, all of them, and then finishes the file; it
// reports whether it did. buf is the flusher's block buffer; flush returns
// it, perhaps grown. Only the flusher calls it.
func (w *Writer) flush(buf []byte) ([]byte, bool) {
	w.mu.Lock()
	w.queued = false
	head, tail, final := w.head, w.tail, w.closed
	trailing, lost := w.gap, w.lost
	w.mu.Unlock()
	for w.err == nil && (tail-head >= blockTicks || final && head < tail) {
		end := min(tail, head+blockTicks)
		buf = buf[:0]
		for s := head; s < end; s++ {
			k := int(s % int64(len(w.slots)))
			sl := w.slots[k]
			buf = w.silence(buf, sl.gap)
			left := w.ring[2*k*w.frame:][:sl.caller]
			right := w.ring[(2*k+1)*w.frame:][:sl.agent]
			buf = audio.AppendStereo(buf, left, right)
		}
		w.put(buf)
		head = end
		w.mu.Lock()
		w.head = head
		w.failed = w.err != nil
		w.mu.Unlock()
	}
	if !final {
		return buf, false
	}
	buf = w.silence(buf[:0], trailing)
	w.put(buf)
	err := w.err
	if err == nil {
		err = w.wav.Close()
	}
	err = errors.Join(err, w.f.Close())
	if lost > 0 && w.err == nil {
		d := time.Duration(lost) * time.Second / time.Duration(w.rate)
		err = errors.Join(err, fmt.Errorf("recording: %v of audio dropped while the disk was behind (silence in its place)", d.Round(time.Millisecond)))
	}
	w.closeErr = err
	return buf, true
}

// silence appends n samples of stereo silence to buf, writing out each
// block it fills, so a long gap takes no more memory than a block.
func (w *Writer) silence(buf []byte, n int64) []byte {
	block := blockTicks * w.frame * 4
	for n > 0 && w.err == nil {
		if len(buf) >= block {
			w.put(buf)
			buf = buf[:0]
		}
		c := min(n, int64(block-len(buf))/4)
		buf = audio.AppendStereo(buf, nil, zeros[:min(c, int64(len(zeros)))])
		n -= min(c, int64(len(zeros)))
	}
	return buf
}

// zeros is silence to encode gaps from; read only.
var zeros = make([]int16, 4096)

// put writes a block to the file, unless the disk has already failed.
func (w *Writer) put(block []byte) {
	if w.err != nil || len(block) == 0 {
		return
	}
	w.err = w.wav.WriteBlock(block)
}
