package openai

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/tts"
)

// Rate is the sample rate of OpenAI's "pcm" format, and the rate a raw
// answer is taken to have when Config.PCMRate is not set.
const Rate = 24000

// readSize is the most read at once: 170 ms of audio at 24 kHz, so a fast
// server's stream reaches out in pieces a caller can start playing.
const readSize = 8192

// outError carries an error returned by out, to be returned as it is.
type outError struct{ err error }

func (e outError) Error() string { return e.err.Error() }

// stream reads the answer's samples from src and hands them to out at
// rate as they arrive, until their end. The watchdog is armed (with the
// first-audio timeout) on entry; it is stopped while out runs and armed
// with the stall timeout before every later read. It returns how many
// samples went to out, and an outError when out failed.
func (s *Synthesizer) stream(ctx context.Context, src source, rate int, dog *watchdog, out func([]int16) error) (int64, error) {
	stalled := fmt.Errorf("%w: no audio for %s", tts.ErrUnavailable, s.stall)
	rs := audio.NewResampler(src.rate, rate)
	var (
		buf     = make([]byte, readSize)
		in, pcm []int16
		emitted int64
	)
	for {
		n, rerr := src.r.Read(buf)
		if n > 0 {
			dog.stop()
			in = src.dec.decode(in[:0], buf[:n])
			pcm = rs.Process(pcm[:0], in)
			// What arrived with the cancel is not handed out.
			if err := ctx.Err(); err != nil {
				return emitted, err
			}
			if len(pcm) > 0 {
				emitted += int64(len(pcm))
				if err := out(pcm); err != nil {
					return emitted, outError{err}
				}
			}
			dog.arm(s.stall, stalled)
		}
		if rerr == io.EOF {
			return emitted, nil
		}
		if rerr != nil {
			return emitted, fmt.Errorf("reading the audio: %w", rerr)
		}
	}
}

// watchdog cancels a request when its timer runs out.
type watchdog struct {
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	cause error
	timer *time.Timer
}

// arm (re)starts the timer: after d, the request is canceled with cause.
func (w *watchdog) arm(d time.Duration, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cause = cause
	if w.timer == nil {
		w.timer = time.AfterFunc(d, w.fire)
		return
	}
	w.timer.Reset(d)
}

func (w *watchdog) fire() {
	w.mu.Lock()
	cause := w.cause
	w.mu.Unlock()
	w.cancel(cause)
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
}
