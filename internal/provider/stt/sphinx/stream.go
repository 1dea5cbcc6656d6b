package sphinx

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// pad is conditioned silence decoded before and after the speech: the
// acoustic model's context and the live cepstral mean need a few frames
// of the line's background at each edge (the VAD cuts close to speech).
const pad = 200 * time.Millisecond

// stream is one utterance being decoded as it is written, on a decoder
// borrowed from a pool for its whole life. Write and Close come from one
// goroutine; Partial from any. mu guards every C call on the decoder.
type stream struct {
	ctx  context.Context
	pool *pool
	rate int

	mu     sync.Mutex
	d      *decoder // nil once given back
	cond   *Conditioner
	buf    []int16 // conditioned audio of the last write
	n      int     // samples written, at rate
	max    int     // samples decoded at most, at rate (MaxAudio)
	err    error   // why the stream broke
	closed bool
	since  int // samples written since the hypothesis was last read

	// hyp is the last hypothesis read (the final text after Close), for
	// Partial calls that find the decoder busy.
	hyp atomic.Pointer[string]
}

var (
	_ stt.Stream  = (*stream)(nil)
	_ stt.Partial = (*stream)(nil)
)

// open borrows a decoder from the pool get returns and starts an
// utterance on it.
func open(ctx context.Context, get func(rate int) (*pool, error), rate int, language string) (*stream, error) {
	if err := request(rate, language); err != nil {
		return nil, err
	}
	p, err := get(rate)
	if err != nil {
		return nil, err
	}
	d, err := p.borrow(ctx)
	if errors.Is(err, errClosed) {
		// A domain's pool closed since get: get now says what replaces it
		// (the generic pool, or errClosed when the Recognizer is closed).
		if p, err = get(rate); err != nil {
			return nil, err
		}
		d, err = p.borrow(ctx)
	}
	if err != nil {
		return nil, err
	}
	s := &stream{ctx: ctx, pool: p, rate: rate, d: d, cond: NewConditioner(rate), max: int(MaxAudio/time.Second) * rate}
	if err := d.start(); err != nil {
		p.giveBack(d)
		return nil, err
	}
	if err := s.decode(make([]int16, int(pad)*rate/int(time.Second))); err != nil {
		d.end()
		s.giveBack()
		return nil, err
	}
	return s, nil
}

// decode conditions pcm (at the line's rate) and decodes it; mu held.
func (s *stream) decode(pcm []int16) error {
	s.buf = s.cond.Process(s.buf[:0], pcm)
	return s.d.process(s.buf)
}

// Write implements stt.Stream: it decodes pcm before returning.
func (s *stream) Write(pcm []int16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errors.New("stt/sphinx: write after close")
	case s.err != nil:
		return s.err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return err
	}
	if left := s.max - s.n; len(pcm) > left {
		pcm = pcm[:max(0, left)]
	}
	if len(pcm) == 0 {
		return nil
	}
	s.n += len(pcm)
	if err := s.decode(pcm); err != nil {
		s.err = err
		return err
	}
	if s.since += len(pcm); s.since >= s.rate/10 {
		s.readHyp()
	}
	return nil
}

// readHyp reads the decoder's best hypothesis into hyp; mu held.
func (s *stream) readHyp() string {
	h := s.d.hyp()
	s.hyp.Store(&h)
	s.since = 0
	return h
}

// Partial implements stt.Partial: the decoder's best hypothesis of the
// audio written so far (the final text after Close). It never waits for
// the decoder: while a Write is decoding it returns the hypothesis read
// last (Write reads one every tenth of a second of audio), so the call's
// loop can ask at any time.
func (s *stream) Partial() string {
	if s.mu.TryLock() {
		defer s.mu.Unlock()
		if s.d != nil && s.err == nil {
			return s.readHyp()
		}
	}
	if h := s.hyp.Load(); h != nil {
		return *h
	}
	return ""
}

// Close implements stt.Stream: it decodes the trailing pad, ends the
// utterance (pocketsphinx's final search passes run here) and gives the
// decoder back. After ctx is canceled it ends the utterance without
// reading its text and returns ctx.Err().
func (s *stream) Close() (stt.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return stt.Result{}, errors.New("stt/sphinx: stream closed twice")
	}
	s.closed = true
	defer s.giveBack()
	if s.err == nil {
		s.err = s.ctx.Err()
	}
	if s.err == nil && s.n > 0 {
		s.err = s.decode(make([]int16, int(pad)*s.rate/int(time.Second)))
	}
	if err := s.d.end(); err != nil && s.err == nil {
		s.err = err
	}
	if s.err != nil {
		return stt.Result{}, s.err
	}
	res := stt.Result{Language: Language, Audio: stt.Duration(s.n, s.rate)}
	if s.n > 0 {
		res.Text = s.d.hyp()
	}
	s.hyp.Store(&res.Text)
	return res, nil
}

// giveBack returns the decoder to its pool; mu held (or not yet shared).
func (s *stream) giveBack() {
	if s.d != nil {
		s.pool.giveBack(s.d)
		s.d = nil
	}
}
