package wer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// Mode is how a recognizer is given an utterance.
type Mode string

const (
	// OnePiece is Transcribe with the whole utterance once it has ended:
	// how Parley uses a Recognizer that does not stream.
	OnePiece Mode = "one-piece"
	// Streamed is Open when the speech starts, a Write per 20 ms frame as
	// it is spoken (in real time), Close at its end: how Parley uses a
	// Streamer.
	Streamed Mode = "streamed"
)

// Recognition is what a recognizer made of a carried set.
type Recognition struct {
	Mode  Mode
	Texts []string // per utterance, normalised ("" for nothing, or a failure)
	// Failed counts utterances the recognizer returned an error for
	// (FirstErr is the first): a caller's turn lost.
	Failed   int
	FirstErr error
	// Final is, per utterance, the time from the end of its audio to its
	// final text: Transcribe's duration (one-piece), or Close's after the
	// last Write (streamed).
	Final []time.Duration
	CPU   time.Duration // of this process and its children, while recognising
	Wall  time.Duration
}

// Transcribe gives each utterance of c to rec whole, workers at a time.
func Transcribe(ctx context.Context, rec stt.Recognizer, c Carried, workers int, language string) (Recognition, error) {
	return recognise(ctx, OnePiece, c, workers, func(ctx context.Context, pcm []int16) (string, time.Duration, error) {
		start := time.Now()
		res, err := rec.Transcribe(ctx, pcm, c.Codec.Rate, language)
		return res.Text, time.Since(start), err
	})
}

// Stream gives each utterance of c to s frame by frame in real time,
// streams at a time, as a call's audio arrives.
func Stream(ctx context.Context, s stt.Streamer, c Carried, streams int, language string) (Recognition, error) {
	rate := c.Codec.Rate
	return recognise(ctx, Streamed, c, streams, func(ctx context.Context, pcm []int16) (string, time.Duration, error) {
		st, err := s.Open(ctx, rate, language)
		if err != nil {
			return "", 0, fmt.Errorf("open: %w", err)
		}
		n := media.FrameSamples(rate)
		start := time.Now()
		var werr error
		for k := 0; k*n < len(pcm) && werr == nil; k++ {
			// Frame k arrives 20 ms after frame k-1 began: wait for it, or,
			// when late, write the frames due at once (as a backlog would
			// reach the engine).
			if wait := time.Until(start.Add(time.Duration(k+1) * media.FrameDuration)); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					werr = ctx.Err()
					continue
				}
			}
			werr = st.Write(pcm[k*n : min(len(pcm), (k+1)*n)])
		}
		end := time.Now()
		res, err := st.Close()
		final := time.Since(end)
		if err == nil {
			err = werr
		}
		return res.Text, final, err
	})
}

// recognise runs one utterance at a time through do, on workers
// goroutines, measuring the CPU the whole run took.
func recognise(ctx context.Context, mode Mode, c Carried, workers int, do func(context.Context, []int16) (string, time.Duration, error)) (Recognition, error) {
	workers = max(1, workers)
	r := Recognition{Mode: mode, Texts: make([]string, len(c.Heard)), Final: make([]time.Duration, len(c.Heard))}
	errs := make([]error, len(c.Heard))
	cpu0, start := cpuTime(), time.Now()
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(c.Heard)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				text, final, err := do(ctx, c.Heard[i].PCM)
				r.Texts[i], r.Final[i], errs[i] = Normalise(text), final, err
			}
		}()
	}
feed:
	for i := range c.Heard {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next) // the feeding loop is next's only sender
	wg.Wait()
	r.CPU, r.Wall = cpuTime()-cpu0, time.Since(start)
	if err := ctx.Err(); err != nil {
		return Recognition{}, err
	}
	for i, err := range errs {
		if err != nil {
			r.Failed++
			r.Texts[i] = ""
			if r.FirstErr == nil {
				r.FirstErr = fmt.Errorf("utterance %s: %w", c.Set.Utterances[i].ID, err)
			}
		}
	}
	if r.Failed == len(c.Heard) {
		return Recognition{}, fmt.Errorf("%s %s: every utterance failed: %w", c.Set.Label(), mode, r.FirstErr)
	}
	if errors.Is(r.FirstErr, stt.ErrLanguage) {
		return Recognition{}, fmt.Errorf("%s %s: %w", c.Set.Label(), mode, r.FirstErr)
	}
	return r, nil
}

// percentile is the p-th percentile (0-100, nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(len(s)-1, i))]
}
