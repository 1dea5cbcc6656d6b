package pipeline

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// onFrame runs voice activity detection on one caller frame: the caller's
// utterance is streamed to the recognizer as it is spoken, speech past the
// interruption threshold stops the agent, and the end of the utterance
// ends the caller's turn.
func (c *conversation) onFrame(ctx context.Context, f frame) {
	v := c.vad.Process(f.pcm)
	now := c.e.now()
	if v.Speech {
		c.lastSpeechAt = f.at
	}
	if v.Talking || v.End {
		c.lastHeard = now
		c.nudged = false
	}
	if c.screening != nil {
		c.screen(ctx, f.pcm)
	}
	if c.closing || c.endCause != "" {
		return
	}
	if v.Talking && c.listening == nil {
		c.listening = c.transcribe(ctx)
		c.listening.screened = c.screening != nil
	}
	if c.listening != nil && (v.Talking || v.End) {
		c.listening.write(f.pcm)
	}
	if c.reply != nil && v.Talking && v.Length >= c.interruptAfter() && c.interruptible() {
		d := c.interrupt().Sub(f.at)
		c.metrics.interrupted(d)
		if c.e.onInterrupt != nil {
			c.e.onInterrupt(d)
		}
	}
	if !v.End || c.listening == nil {
		return
	}
	t := c.listening
	c.listening = nil
	if c.reply != nil {
		if v.Length < c.interruptAfter() || c.reply.pinned() {
			t.abandon() // a backchannel ("mm-hm") while we talk, or a transfer under way: not a turn
			return
		}
		t.deferred = true // interruptions are off: heard after the agent's turn
	}
	t.lat = newLatency(c.lastSpeechAt, f.at)
	t.finish()
}

func (c *conversation) interruptAfter() time.Duration {
	return time.Duration(c.agent.InterruptionThresholdMs) * time.Millisecond
}

// interruptible: the caller may stop the agent (disableInterruptions off,
// and no transfer under way).
func (c *conversation) interruptible() bool {
	if c.agent.DisableInterruptions != nil && *c.agent.DisableInterruptions {
		return false
	}
	return !c.reply.pinned()
}

// transcription is one caller utterance on its way to text.
type transcription struct {
	frames    chan []int16 // to a streaming recognizer's goroutine (nil: in one piece)
	pcm       []int16      // the utterance so far, for a recognizer that takes it in one piece
	limit     int          // samples kept in one piece
	recognize func()       // starts the one-piece recognition (nil: no recognizer)
	cancel    context.CancelFunc
	lat       *latency // set when the utterance ended as a turn
	deferred  bool     // heard while the agent kept talking
	ended     bool     // no more frames
	screened  bool     // heard while screening for voicemail: not a turn
}

// heard is a finished transcription.
type heard struct {
	t   *transcription
	res stt.Result
	err error
}

// maxUtterance bounds what one utterance sends to the recognizer.
const maxUtterance = time.Minute

// transcribe starts transcribing the utterance that began: streamed as it
// is spoken when the recognizer can (the text is then ready moments after
// the turn ends), otherwise gathered on the loop and recognized in one
// piece at the end, so no goroutine waits while the caller speaks.
func (c *conversation) transcribe(ctx context.Context) *transcription {
	tctx, cancel := context.WithCancel(ctx)
	t := &transcription{cancel: cancel}
	lang := language(c.agent)
	switch r := c.e.STT.(type) {
	case nil:
	case stt.Streamer:
		t.frames = make(chan []int16, int(maxUtterance/media.FrameDuration))
		go c.report(tctx, t, func() (stt.Result, error) { return stream(tctx, r, t.frames, c.rate, lang) })
	default:
		t.limit = int(maxUtterance/time.Second) * c.rate
		t.recognize = func() {
			go c.report(tctx, t, func() (stt.Result, error) { return transcribeAll(tctx, r, t.pcm, c.rate, lang) })
		}
	}
	return t
}

// report hands the transcription's result to the loop, unless it was
// abandoned; the recognition's goroutine.
func (c *conversation) report(ctx context.Context, t *transcription, recognize func() (stt.Result, error)) {
	res, err := recognize()
	if ctx.Err() != nil {
		return // abandoned
	}
	select {
	case c.heard <- heard{t, res, err}:
		c.wake.wake()
	case <-ctx.Done():
	}
}

func (t *transcription) write(pcm []int16) {
	if t.frames != nil {
		select {
		case t.frames <- pcm:
		default: // over a minute of speech: the rest is not transcribed
		}
		return
	}
	if t.recognize != nil && len(t.pcm) < t.limit {
		t.pcm = append(t.pcm, pcm...)
	}
}

// finish ends the utterance: its text comes back on the heard channel.
func (t *transcription) finish() {
	t.ended = true
	if t.frames != nil {
		close(t.frames)
	}
	if t.recognize != nil {
		t.recognize()
	}
}

// abandon drops the utterance (a backchannel, or the call is ending).
func (t *transcription) abandon() {
	t.cancel()
	if !t.ended {
		t.ended = true
		if t.frames != nil {
			close(t.frames)
		}
	}
}

// The recognizer gets the audio at the line's rate, as the line carried
// it: one that wants another rate for its model resamples the utterance
// itself (stt/sphinx does), so audio is resampled for recognition only
// while the caller is being listened to, never frame by frame for the
// whole call.

// stream transcribes an utterance with a streaming recognizer as its
// frames come.
func stream(ctx context.Context, s stt.Streamer, frames <-chan []int16, rate int, lang string) (stt.Result, error) {
	st, err := s.Open(ctx, rate, lang)
	if err != nil {
		for range frames { // let the utterance end before answering
		}
		return stt.Result{}, err
	}
	var werr error
	for f := range frames {
		if werr == nil {
			werr = st.Write(f)
		}
	}
	return st.Close()
}

// transcribeAll transcribes a whole utterance in one request.
func transcribeAll(ctx context.Context, r stt.Recognizer, pcm []int16, rate int, lang string) (stt.Result, error) {
	if len(pcm) == 0 {
		return stt.Result{}, nil
	}
	res, err := r.Transcribe(ctx, pcm, rate, lang)
	if res.Audio == 0 {
		res.Audio = stt.Duration(len(pcm), rate)
	}
	return res, err
}

// onHeard takes a finished transcription: the caller's turn.
func (c *conversation) onHeard(ctx context.Context, h heard) {
	h.t.cancel()
	c.metrics.addSTT(h.res.Audio)
	if c.closing {
		return
	}
	if h.err != nil {
		c.e.log().Warn("transcription failed", "call_id", c.live.Call.ID, "err", h.err)
		c.providerFailed(ctx, whatSTT, h.err, "Sorry, I didn't catch that. Could you say it again?")
		return
	}
	text := strings.TrimSpace(h.res.Text)
	if text == "" {
		return // noise, or nothing the recognizer could make out
	}
	delete(c.failures, whatSTT)
	h.t.lat.mark(stageSTT)
	if h.t.screened {
		c.log.user(c.turnID(), text, h.res.Language) // on the record, not answered
		c.screenText(ctx, text)
		return
	}
	c.turn++
	msg := llm.Message{Role: llm.RoleUser, Content: text}
	if h.t.deferred && c.reply != nil {
		// Logged when the agent's turn is over: the transcript reads in
		// the order the agent took things in.
		c.queued = append(c.queued, queuedTurn{msg, c.turnID(), h.res.Language})
		return
	}
	c.log.user(c.turnID(), text, h.res.Language)
	if c.reply != nil {
		c.interrupt() // a reply to something else (a nudge) is moot now
	}
	c.history = append(c.history, msg)
	c.startReply(ctx, h.t.lat)
}

// queuedTurn is a caller turn heard while the agent could not be
// interrupted.
type queuedTurn struct {
	msg    llm.Message
	turnID string
	lang   string
}

// providerFailCause ends a call whose providers keep failing.
const providerFailCause = "PROVIDER_ERROR"

// maxFailures is how many failures in a row of one provider end the call.
const maxFailures = 3

// The providers, as failure messages name them.
const (
	whatSTT = "speech recognition"
	whatLLM = "the language model"
	whatTTS = "speech synthesis"
)

// providerFailed handles a failed provider request: an apology while the
// call can still recover, then, after maxFailures in a row, the end of the
// call, FAILED with the cause.
func (c *conversation) providerFailed(ctx context.Context, what string, err error, apology string) {
	if errors.Is(err, context.Canceled) {
		return
	}
	c.failures[what]++
	if n := c.failures[what]; n >= maxFailures {
		c.endCause = providerFailCause
		c.failure = what + " failed " + strconv.Itoa(n) + " times in a row: " + err.Error()
		return
	}
	if c.reply == nil && apology != "" {
		c.speak(ctx, fixedLine{text: apology})
	}
}
