package pipeline

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/tts"
)

// speech is one agent utterance: sentences synthesized in order on their
// own goroutine and queued on the call's audio as they come (a fixed
// line, whose text is all known, is synthesized on its reply's goroutine
// instead: nothing else would run there meanwhile).
//
// Ownership: the reply goroutine that made the speech is the only sender on
// queue and the only one to close it (close, once it has no more
// sentences). Stopping it from the loop (barge-in, the call ending) cancels
// its context instead: the synthesis goroutine stops reading, and add
// returns at once. Closing the queue from the loop would make a sentence
// the model is still streaming a send on a closed channel, which panics
// whatever select surrounds it.
type speech struct {
	c      *conversation
	turnID string
	lat    *latency
	ctx    context.Context
	cancel context.CancelFunc
	queue  chan string
	synthd chan struct{} // closed when every sentence is synthesized
	played chan struct{} // closed when it has also finished playing

	mu       sync.Mutex
	parts    []part // each sentence and where its audio ends
	written  time.Duration
	began    time.Time // when its first audio went to the line (zero: none yet)
	stopped  bool      // interrupted: nothing more goes to the line
	logged   bool      // its transcript entry is written (in full, or what was heard)
	err      error     // speech synthesis failed
	closeOne sync.Once
}

type part struct {
	text string
	end  time.Duration // cumulative audio up to the end of this sentence
}

// newSpeech starts an utterance whose sentences come as the model
// streams them: synthesized on its own goroutine.
func newSpeech(ctx context.Context, c *conversation, turnID string, lat *latency) *speech {
	s := preparedSpeech(ctx, c, turnID, lat)
	go s.synthesize()
	return s
}

// preparedSpeech is an utterance whose sentences the caller adds and
// closes, then synthesizes itself (s.synthesize).
func preparedSpeech(ctx context.Context, c *conversation, turnID string, lat *latency) *speech {
	sctx, cancel := context.WithCancel(ctx)
	return &speech{c: c, turnID: turnID, lat: lat, ctx: sctx, cancel: cancel, queue: make(chan string, 64),
		synthd: make(chan struct{}), played: make(chan struct{})}
}

// add queues a sentence; the reply goroutine only.
func (s *speech) add(sentence string) {
	select {
	case s.queue <- sentence:
	case <-s.ctx.Done():
	}
}

// close says no more sentences will come; the reply goroutine only.
func (s *speech) close() { s.closeOne.Do(func() { close(s.queue) }) }

// next is the next sentence to say; false once the queue is closed or the
// utterance was stopped.
func (s *speech) next() (string, bool) {
	select {
	case sentence, ok := <-s.queue:
		return sentence, ok && s.ctx.Err() == nil
	case <-s.ctx.Done():
		return "", false
	}
}

func (s *speech) synthesize() {
	defer func() {
		close(s.synthd)
		if s.ctx.Err() == nil {
			_ = s.c.audio.Drain(s.ctx)
		}
		s.mu.Lock()
		full := !s.logged
		s.logged = true
		s.mu.Unlock()
		if full {
			s.c.log.assistant(s.turnID, s.text(), s.startedAt())
		}
		close(s.played)
	}()
	for {
		sentence, ok := s.next()
		if !ok {
			return
		}
		if s.c.e.TTS == nil {
			continue
		}
		s.lat.mark(stageTTSStart)
		st, err := s.c.e.TTS.Synthesize(s.ctx, speechRequest(s.c.agent, sentence), s.c.rate, s.play)
		s.c.metrics.addTTS(st)
		if err != nil && s.ctx.Err() == nil {
			s.c.e.log().Warn("speech failed", "call_id", s.c.live.Call.ID, "err", err)
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
		}
		s.mu.Lock()
		s.parts = append(s.parts, part{text: sentence, end: s.written})
		s.mu.Unlock()
	}
}

// play puts synthesized audio on the line, unless the caller has
// interrupted: under the lock, so nothing follows an interruption's flush.
func (s *speech) play(pcm []int16) error {
	s.lat.mark(stageTTSFirstAudio)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return context.Canceled
	}
	if err := s.c.audio.Write(pcm); err != nil {
		return err
	}
	if s.began.IsZero() {
		s.began = s.c.e.now()
	}
	if s.written == 0 && s.lat != nil {
		s.lat.mark(stageFirstAudio)
		s.c.reportTurn(s.lat)
	}
	s.written += time.Duration(len(pcm)) * time.Second / time.Duration(s.c.rate)
	return nil
}

// failure is the synthesis error, if any sentence could not be spoken.
func (s *speech) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *speech) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b []string
	for _, p := range s.parts {
		b = append(b, p.text)
	}
	return strings.Join(b, " ")
}

// stop abandons the rest of the utterance (barge-in); false when it had
// already played in full (and was logged so).
func (s *speech) stop() bool {
	s.mu.Lock()
	if s.logged {
		s.mu.Unlock()
		return false
	}
	s.stopped, s.logged = true, true
	s.mu.Unlock()
	s.cancel() // not close: the reply goroutine may still be adding sentences
	return true
}

// heard is the text the caller heard, given how much queued audio was
// dropped: whole sentences, and the played share of the one cut off.
func (s *speech) heard(unplayed time.Duration) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	played := s.written - unplayed
	var out []string
	start := time.Duration(0)
	for _, p := range s.parts {
		if played >= p.end {
			out = append(out, p.text)
			start = p.end
			continue
		}
		if span := p.end - start; span > 0 && played > start {
			words := strings.Fields(p.text)
			n := int(float64(len(words)) * float64(played-start) / float64(span))
			if n > 0 {
				out = append(out, strings.Join(words[:n], " ")+"…")
			}
		}
		break
	}
	return strings.Join(out, " ")
}

// done reports whether the utterance has been synthesized and played.
func (s *speech) done() bool {
	select {
	case <-s.played:
		return true
	default:
		return false
	}
}

func (s *speech) wait(ctx context.Context) {
	select {
	case <-s.played:
	case <-ctx.Done():
	}
}

// speechRequest is text in the agent's voice: voiceId, voiceSpeed,
// voiceTemperature and language.
func speechRequest(a model.AgentConfig, text string) tts.Request {
	return tts.Request{Text: text, Language: language(a), Voice: deref(a.VoiceID), Speed: speed(a), Temperature: a.VoiceTemperature}
}

// startedAt is when the utterance's first audio went to the line, where
// the caller starts hearing it (zero when none did: its entry is stamped
// when it is made).
func (s *speech) startedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.began
}
