package recording

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

// tick is one call to a recorder: what the caller said, what we sent.
type tick struct{ caller, agent []int16 }

// ticks is a call's recording as the pacer hands it over: n 20 ms frames
// of noise on both sides; with odd, the odd frame's caller side is short or
// missing (the recorder pads it) or the agent's carries three frames.
func ticks(rate, n int, odd bool) []tick {
	frame := rate / 50
	rng := rand.New(rand.NewPCG(uint64(rate), uint64(n)))
	out := make([]tick, n)
	for i := range out {
		c, a := make([]int16, frame), make([]int16, frame)
		for j := range c {
			c[j], a[j] = int16(rng.IntN(65536)-32768), int16(rng.IntN(2000)-1000)
		}
		switch {
		case odd && i%17 == 5:
			c = c[:frame/3]
		case odd && i%17 == 9:
			c = nil
		case odd && i%17 == 13:
			a = append(a, a...)
			a = append(a, a[:frame]...)
		}
		out[i] = tick{c, a}
	}
	return out
}

// oldRecording is the file the recorder made before its writes left the
// tick: a StereoWAV handed every tick as it came.
func oldRecording(t *testing.T, rate int, ts []tick) []byte {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "old.wav"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := audio.NewStereoWAV(f, rate)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range ts {
		if err := w.Write(tk.caller, tk.agent); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The recording written off the tick is the file the tick used to write,
// byte for byte, at both rates.
func TestWriterMakesTheSameFileAsBefore(t *testing.T) {
	for _, rate := range []int{8000, 16000} {
		t.Run(strconv.Itoa(rate), func(t *testing.T) {
			ts := ticks(rate, 3*ringTicks+7, true)
			s := &Store{Dir: t.TempDir(), Key: []byte("k")}
			w, err := s.Create("org", "call", rate)
			if err != nil {
				t.Fatal(err)
			}
			for i, tk := range ts {
				w.Write(tk.caller, tk.agent)
				if i%blockTicks == 0 {
					settleTest(t, w) // a disk that keeps up, as it does between real ticks
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(s.Path("org", "call"))
			if err != nil {
				t.Fatal(err)
			}
			if want := oldRecording(t, rate, ts); !bytes.Equal(got, want) {
				t.Errorf("the recording differs from the old writer's: %d bytes, want %d", len(got), len(want))
			}
		})
	}
}

// settleTest waits until w's flusher has written every whole block it
// holds.
func settleTest(t *testing.T, w *Writer) {
	t.Helper()
	for behind(w) {
		runtime.Gosched()
	}
}

// diskRecording starts a recording at rate on a disk of its own, with a
// flusher of its own.
func diskRecording(t *testing.T, rate int) (*disk, *Writer) {
	t.Helper()
	d := newDisk(t)
	w, err := newWriter(new(flusher), d, rate)
	if err != nil {
		t.Fatal(err)
	}
	return d, w
}

// disk is a file in memory whose writes can be held, as a slow disk holds
// them. bytes() is what a reader would find on disk at any moment, crash
// included.
type disk struct {
	t       *testing.T
	mu      sync.Mutex
	buf     []byte
	off     int64
	held    chan struct{} // while open, writes wait for it to close
	writing chan struct{} // a write has started waiting
	patched chan struct{} // a header was rewritten
	fail    error         // every write fails with it
}

func newDisk(t *testing.T) *disk {
	return &disk{t: t, held: closedChan(), writing: make(chan struct{}, 1), patched: make(chan struct{}, 1)}
}

func closedChan() chan struct{} { c := make(chan struct{}); close(c); return c }

// onTick fails the test when a write comes from a recorder's tick: the
// pacer would have waited for the disk.
func (d *disk) onTick() bool {
	stack := make([]byte, 64<<10)
	stack = stack[:runtime.Stack(stack, false)]
	if bytes.Contains(stack, []byte("recording.(*Writer).Write(")) {
		d.t.Errorf("a tick wrote to the disk:\n%s", stack)
		return true
	}
	return false
}

func (d *disk) wait() {
	d.mu.Lock()
	held := d.held
	d.mu.Unlock()
	select {
	case d.writing <- struct{}{}:
	default:
	}
	<-held
}

// hold makes writes wait until release.
func (d *disk) hold() {
	d.mu.Lock()
	d.held = make(chan struct{})
	d.mu.Unlock()
}

func (d *disk) release() {
	d.mu.Lock()
	close(d.held)
	d.mu.Unlock()
}

// enter is the start of every write: it waits while the disk is held
// (never on a tick, which is reported instead), then locks the disk and
// says whether it fails writes.
func (d *disk) enter() error {
	if !d.onTick() {
		d.wait()
	}
	d.mu.Lock()
	return d.fail
}

func (d *disk) Write(p []byte) (int, error) {
	err := d.enter()
	defer d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if end := d.off + int64(len(p)); end > int64(len(d.buf)) {
		d.buf = append(d.buf, make([]byte, end-int64(len(d.buf)))...)
	}
	copy(d.buf[d.off:], p)
	d.off += int64(len(p))
	return len(p), nil
}

func (d *disk) WriteAt(p []byte, off int64) (int, error) {
	err := d.enter()
	defer d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n := copy(d.buf[off:], p)
	select {
	case d.patched <- struct{}{}:
	default:
	}
	return n, nil
}

func (d *disk) Seek(offset int64, whence int) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if whence == io.SeekCurrent {
		offset += d.off
	}
	d.off = offset
	return offset, nil
}

func (d *disk) Close() error { return nil }

func (d *disk) bytes() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return bytes.Clone(d.buf)
}

// A tick never waits for the disk: with the disk stuck in a write, the
// ticks of three seconds go on returning. The ring keeps what it can hold
// (1.28 s); what it cannot is written as silence once the disk is back,
// so the recording still lasts as long as the call and what follows is at
// its time, and Close says how much was lost.
func TestTickNeverWaitsForTheDisk(t *testing.T) {
	const rate = 8000
	d, w := diskRecording(t, rate)
	d.hold()
	ts := ticks(rate, 150+blockTicks, false)
	for _, tk := range ts[:blockTicks] {
		w.Write(tk.caller, tk.agent)
	}
	<-d.writing // the flusher is stuck writing the first block
	for _, tk := range ts[blockTicks:150] {
		w.Write(tk.caller, tk.agent)
	}
	d.release()
	settleTest(t, w)
	for _, tk := range ts[150:] { // the disk is back
		w.Write(tk.caller, tk.agent)
	}
	err := w.Close()
	if err == nil || !strings.Contains(err.Error(), "1.72s of audio dropped") {
		t.Errorf("Close = %v, want the 1.72 s dropped reported", err)
	}
	// What the ring held, silence for the ticks it could not, then the
	// ticks after the disk came back.
	want := slices.Clone(ts)
	for i := ringTicks; i < 150; i++ {
		want[i] = tick{agent: make([]int16, rate/50)}
	}
	if got, want := d.bytes(), oldRecording(t, rate, want); !bytes.Equal(got, want) {
		t.Errorf("recording after a stuck disk: %d bytes, want the ring's ticks, silence, the ticks after (%d bytes)", len(got), len(want))
	}
}

// Ticks allocate nothing, including the one that completes a block.
func TestTickAllocatesNothing(t *testing.T) {
	s := &Store{Dir: t.TempDir(), Key: []byte("k")}
	w, err := s.Create("org", "call", 8000)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	caller := audio.Tone(440, 8000, 20*time.Millisecond, 0.5)
	agent := audio.Tone(1000, 8000, 20*time.Millisecond, 0.5)
	block := func() {
		for range blockTicks {
			w.Write(caller, agent)
		}
	}
	if n := testing.AllocsPerRun(100, block); n != 0 {
		t.Errorf("%v allocations per half second of ticks, want none", n)
	}
}

// A recording read while the call goes on (or after a crash) is a valid
// WAV of every block written so far: the header is rewritten with each.
func TestRecordingIsAWAVWhileWritten(t *testing.T) {
	const rate = 8000
	d, w := diskRecording(t, rate)
	ts := ticks(rate, 2*blockTicks+10, false)
	for _, tk := range ts {
		w.Write(tk.caller, tk.agent)
	}
	want := oldRecording(t, rate, ts[:2*blockTicks])
	ref, err := audio.ReadWAV(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for !bytes.Equal(got, want) {
		<-d.patched
		got = d.bytes()
		// A block's audio may be on disk before its header update: the
		// file then reads as the blocks before it.
		wav, err := audio.ReadWAV(bytes.NewReader(got))
		if err != nil {
			t.Fatalf("mid-call the file is not a WAV: %v", err)
		}
		n := len(wav.Channels[0])
		if len(got) > len(want) || n%(blockTicks*rate/50) != 0 ||
			!slices.Equal(wav.Channels[0], ref.Channels[0][:n]) || !slices.Equal(wav.Channels[1], ref.Channels[1][:n]) {
			t.Fatalf("mid-call the file (%d bytes) reads as %d samples that are not the recording's first blocks", len(got), n)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.bytes(), oldRecording(t, rate, ts)) {
		t.Error("the closed file is not the whole recording")
	}
}

// A disk error stops the recording, not the ticks: later ticks are
// dropped, and Close reports the error.
func TestDiskErrorStopsTheRecording(t *testing.T) {
	d, w := diskRecording(t, 8000)
	full := errors.New("no space left on device")
	d.mu.Lock()
	d.fail = full
	d.mu.Unlock()
	for _, tk := range ticks(8000, 4*ringTicks, true) {
		w.Write(tk.caller, tk.agent)
	}
	if err := w.Close(); !errors.Is(err, full) {
		t.Errorf("Close = %v, want the disk's error", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}
