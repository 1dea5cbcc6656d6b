package sherpa

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unsafe"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// tailPadding is the silence put after an utterance before its input is
// finished: a streaming model decodes in chunks and needs audio past the
// last word to emit it (sherpa-onnx's own examples pad similarly).
const tailPadding = 500 * time.Millisecond

// maxText bounds a result text read from the library (a safety net on a
// C string: real ones are a few hundred bytes).
const maxText = 1 << 20

// stream is one utterance in a sherpa-onnx online stream. Write and Close
// run on the caller's goroutine (one at a time, as stt.Stream requires),
// which also decodes: the C stream is touched by that goroutine only.
// Partial may be called from any goroutine.
type stream struct {
	api      *api
	rec, h   uintptr
	ctx      context.Context
	rate     int
	language string
	done     func() // tells the Recognizer the stream is freed

	n       int              // samples written
	rs      *audio.Resampler // line rate to the model's
	model   []int16          // the last write at the model's rate
	buf     []float32        // the same, as the library takes it
	err     error            // why the stream broke
	closed  bool
	partial atomic.Pointer[string]
}

var (
	_ stt.Stream  = (*stream)(nil)
	_ stt.Partial = (*stream)(nil)
)

// Write implements stt.Stream: it hands pcm to the library and decodes
// every chunk that is ready, updating Partial.
func (s *stream) Write(pcm []int16) error {
	switch {
	case s.closed:
		return errors.New("stt/sherpa: write after close")
	case s.err != nil:
		return s.err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return err
	}
	if len(pcm) == 0 {
		return nil
	}
	s.model = s.rs.Process(s.model[:0], pcm)
	s.buf = s.buf[:0]
	for _, v := range s.model {
		s.buf = append(s.buf, float32(v)/32768)
	}
	s.accept(s.buf)
	s.n += len(pcm)
	if err := s.decodeReady(); err != nil {
		s.err = err
		return err
	}
	return nil
}

// accept gives samples (in [-1, 1)) at the model's rate to the library.
// Parley resamples rather than the library, which would log to stderr for
// every stream at another rate.
func (s *stream) accept(samples []float32) {
	if len(samples) == 0 {
		return
	}
	s.api.acceptWaveform(s.h, featureRate, &samples[0], int32(len(samples)))
	runtime.KeepAlive(samples)
}

// decodeReady runs the model over every chunk the library has features
// for, then reads the text so far into Partial. ctx is looked at between
// chunks (one chunk's decoding cannot be interrupted).
func (s *stream) decodeReady() error {
	decoded := false
	for s.api.isReady(s.rec, s.h) != 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		s.api.decode(s.rec, s.h)
		decoded = true
	}
	if decoded {
		t := s.text()
		s.partial.Store(&t)
	}
	return nil
}

// text is the library's text for the utterance so far.
func (s *stream) text() string {
	r := s.api.result(s.rec, s.h)
	if r == nil {
		return ""
	}
	t := goString(r.text)
	s.api.destroyResult(r)
	return tidy(t)
}

// Partial implements stt.Partial: the text as of the last chunk decoded.
func (s *stream) Partial() string {
	if p := s.partial.Load(); p != nil {
		return *p
	}
	return ""
}

// Close implements stt.Stream: it pads the utterance with silence, marks
// its input finished, decodes what is left and frees the stream.
func (s *stream) Close() (stt.Result, error) {
	if s.closed {
		return stt.Result{}, errors.New("stt/sherpa: stream closed twice")
	}
	s.closed = true
	defer s.free()
	if s.err != nil {
		return stt.Result{}, s.err
	}
	if err := s.ctx.Err(); err != nil {
		return stt.Result{}, err
	}
	res := stt.Result{Language: s.language, Audio: stt.Duration(s.n, s.rate)}
	if s.n == 0 {
		return res, nil // nothing said: no model run on padding alone
	}
	s.accept(make([]float32, int(tailPadding)*featureRate/int(time.Second)))
	s.api.inputFinished(s.h)
	if err := s.decodeReady(); err != nil {
		return stt.Result{}, err
	}
	res.Text = s.text()
	s.partial.Store(&res.Text)
	return res, nil
}

func (s *stream) free() {
	s.api.destroyStream(s.h)
	s.h = 0
	s.done()
}

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for n < maxText && *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// tidy makes the library's text read like the other engines': single
// spaces (BPE word marks ▁ become spaces), and lower case when the model
// writes in capitals only (models trained on LibriSpeech do), as
// pocketsphinx does.
func tidy(t string) string {
	t = strings.Join(strings.Fields(strings.ReplaceAll(t, "\u2581", " ")), " ")
	if strings.IndexFunc(t, unicode.IsLower) < 0 {
		t = strings.ToLower(t)
	}
	return t
}
