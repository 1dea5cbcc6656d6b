package pipeline

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-voice/parley/internal/pipeline/turntaking"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// onFrame runs voice activity detection on one caller frame: the caller's
// utterance is streamed to the recognizer as it is spoken, speech past the
// interruption threshold (with enough real words, when the recognizer says
// them as they come) stops the agent, and the end of the utterance, after
// a silence that depends on the words so far, ends the caller's turn.
func (c *conversation) onFrame(ctx context.Context, f frame) {
	v := c.vad.Process(f.pcm)
	// The silence the turn-taking rules call for, should this frame end
	// the turn: the VAD's own hangover (the longest wait) unless the
	// words end it sooner.
	wait := c.turns.MaxSilence
	if v.Talking && !v.Speech && c.listening != nil && c.waited(v.Silence, f, c.turns.MinSilence) {
		// The adaptive end of turn: the VAD would wait out the longest
		// silence; the words may say the caller is done sooner.
		if wait = c.turnWait(); c.waited(v.Silence, f, wait) {
			c.vad.EndUtterance()
			v.Talking, v.End = false, true
		}
	}
	c.talking.Store(v.Talking)
	now := c.e.now()
	if v.Speech {
		c.lastSpeechAt = f.at
	}
	if v.Talking || v.End {
		c.lastHeard = now
		c.nudged = false
	}
	if v.Start && c.reply != nil {
		c.reply.hush() // never a filler over the caller
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
		// Length runs from the start of the first speech frame to the end
		// of this one, which arrived at f.at.
		c.listening.said.began = f.at.Add(-v.Length)
	}
	if c.listening != nil && (v.Talking || v.End) {
		c.listening.write(f.pcm)
	}
	if c.reply != nil && v.Talking && v.Length >= c.interruptAfter() && c.interruptible() && c.listening.saidEnough(c.turns.MinWords) {
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
		switch {
		case v.Length < c.interruptAfter() || c.reply.pinned():
			t.abandon() // a backchannel ("mm-hm") while we talk, or a transfer under way: not a turn
			return
		case c.interruptible() && c.wordsDecide(t):
			// Long enough, but not yet enough real words to stop the
			// agent: the final text decides (onHeard).
			t.held = true
		default:
			t.deferred = true // interruptions are off: heard after the agent's turn
		}
	}
	t.said.ended = c.lastSpeechAt
	t.lat = newLatency(c.lastSpeechAt, f.at, wait)
	t.finish()
}

// waited: silence, counted in whole frames, is as near the wait as the
// frame grid gets. A wait between two frame ends takes the nearer one
// (525 ms ends on the 520 ms frame, not 540), so the grid adds no
// systematic delay to the policy's wait.
func (c *conversation) waited(silence time.Duration, f frame, wait time.Duration) bool {
	half := time.Duration(len(f.pcm)) * time.Second / time.Duration(2*c.rate)
	return silence+half > wait
}

// turnWait is the silence that ends the caller's turn, given their words
// so far (turntaking's rules): without partial text the fixed minimum.
// Asked only once the silence has reached the minimum, as no wait is
// shorter and a recognizer's partial text is not free to read.
func (c *conversation) turnWait() time.Duration {
	words, ok := c.listening.words()
	if !ok {
		return c.turns.MinSilence
	}
	return c.turns.Silence(words)
}

// wordsDecide: caller speech over the agent is judged by its words too
// (interruption.minWords), as t's recognizer says them.
func (c *conversation) wordsDecide(t *transcription) bool {
	_, ok := t.words()
	return ok && c.turns.MinWords > 0
}

func (c *conversation) interruptAfter() time.Duration {
	return time.Duration(c.agent.InterruptionThresholdMs) * time.Millisecond
}

// interruptible: the caller may stop the agent (disableInterruptions off,
// and no transfer under way).
func (c *conversation) interruptible() bool {
	if c.reply.pinned() {
		return false
	}
	if v := c.reply.nodeInterruptible(); v != nil { // a flow node's own setting
		return *v
	}
	return c.agent.DisableInterruptions == nil || !*c.agent.DisableInterruptions
}

// transcription is one caller utterance on its way to text.
type transcription struct {
	frames    *frameQueue // to a streaming recognizer's goroutine (nil: in one piece)
	pcm       []int16     // the utterance so far, for a recognizer that takes it in one piece
	limit     int         // samples kept in one piece
	recognize func()      // starts the one-piece recognition (nil: no recognizer)
	cancel    context.CancelFunc
	lat       *latency // set when the utterance ended as a turn
	deferred  bool     // heard while the agent kept talking
	held      bool     // said over the agent, long enough but without enough real words so far: its final text decides
	ended     bool     // no more frames
	screened  bool     // heard while screening for voicemail: not a turn
	said      span     // from the first speech frame to the last: the transcript entry's "at" and "endAt"

	// partial is the stream's text so far, once a streaming recognizer
	// with partial text has opened it (nil: none); set by the
	// recognition's goroutine, read by the loop.
	partial atomic.Pointer[partialText]
}

// partialText is a stream that says what it has recognised so far.
type partialText struct{ stream stt.Partial }

// words is what the recognizer has made of the utterance so far; false
// when it cannot say (it has no partial text, or its stream is not open
// yet).
func (t *transcription) words() (string, bool) {
	p := t.partial.Load()
	if p == nil {
		return "", false
	}
	return p.stream.Partial(), true
}

// saidEnough: the utterance holds minWords real words (not backchannels),
// or its words cannot be known, or the rule is off (minWords 0).
func (t *transcription) saidEnough(minWords int) bool {
	if minWords <= 0 {
		return true
	}
	words, ok := t.words()
	return !ok || turntaking.RealWords(words) >= minWords
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
	switch r := c.stt.(type) {
	case nil:
	case stt.Streamer:
		t.frames = newFrameQueue(int(maxUtterance/time.Second) * c.rate)
		pending := c.adapting
		go c.report(tctx, t, func() (stt.Result, error) {
			if pending != nil {
				if c.e.onAwaitAdapted != nil {
					c.e.onAwaitAdapted()
				}
				r = pending.streamer(tctx, t.frames.ended, r)
			}
			return stream(tctx, r, t, c.rate, lang)
		})
	default:
		t.limit = int(maxUtterance/time.Second) * c.rate
		t.recognize = func() {
			r := c.stt // on the loop, at the end of the utterance: adapted if it is ready by now
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
		t.frames.push(pcm)
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
		t.frames.close()
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
			t.frames.close()
		}
	}
}

// The recognizer gets the audio at the line's rate, as the line carried
// it: one that wants another rate for its model resamples the utterance
// itself (stt/sphinx does), so audio is resampled for recognition only
// while the caller is being listened to, never frame by frame for the
// whole call.

// stream transcribes an utterance with a streaming recognizer as its
// frames come; a stream that says its text so far offers it to the loop
// (t.partial).
func stream(ctx context.Context, s stt.Streamer, t *transcription, rate int, lang string) (stt.Result, error) {
	frames := t.frames
	st, err := s.Open(ctx, rate, lang)
	if p, ok := st.(stt.Partial); ok && err == nil {
		t.partial.Store(&partialText{p})
	}
	var batch [][]int16
	var ok bool
	if err != nil {
		for batch, ok = frames.take(batch); ok; batch, ok = frames.take(batch) { // let the utterance end before answering
		}
		return stt.Result{}, err
	}
	var werr error
	for batch, ok = frames.take(batch); ok; batch, ok = frames.take(batch) {
		for _, f := range batch {
			if werr == nil {
				werr = st.Write(f)
			}
		}
	}
	return st.Close()
}

// frameQueue hands the caller's frames from the loop to a streaming
// recognizer's goroutine: the loop never waits, the recognizer may fall
// behind by up to a whole utterance (maxUtterance), and nothing is set
// aside for that up front (a channel that deep cost 72 KB an utterance).
// The loop pushes and closes; the recognizer's goroutine takes.
type frameQueue struct {
	mu     sync.Mutex
	frames [][]int16
	n      int // samples pushed
	limit  int // samples taken at most: the rest is not transcribed
	closed bool
	ready  chan struct{} // capacity 1: something was pushed, or the close
	ended  chan struct{} // closed by close
}

// newFrameQueue is an open queue passing at most limit samples.
func newFrameQueue(limit int) *frameQueue {
	return &frameQueue{ready: make(chan struct{}, 1), ended: make(chan struct{}), limit: limit}
}

func (q *frameQueue) push(pcm []int16) {
	q.mu.Lock()
	if q.closed || q.n >= q.limit {
		q.mu.Unlock()
		return
	}
	q.frames = append(q.frames, pcm)
	q.n += len(pcm)
	q.mu.Unlock()
	q.signal()
}

// close says no more frames will come.
func (q *frameQueue) close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.ended)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *frameQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take waits for the frames pushed since the last take and returns them
// in buf; false once the queue is closed and empty.
func (q *frameQueue) take(buf [][]int16) ([][]int16, bool) {
	for {
		q.mu.Lock()
		if len(q.frames) > 0 {
			buf = append(buf[:0], q.frames...)
			clear(q.frames)
			q.frames = q.frames[:0]
			q.mu.Unlock()
			return buf, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return buf[:0], false
		}
		<-q.ready
	}
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
	if h.t.held && turntaking.RealWords(text) < c.turns.MinWords {
		// Said over the agent, and only a backchannel ("uh-huh") or too
		// few words: the agent went on, and it is not a turn.
		c.e.log().Debug("backchannel", "call_id", c.live.Call.ID, "text", text)
		return
	}
	h.t.lat.mark(stageSTT)
	if h.t.screened {
		c.log.user(c.turnID(), text, h.res.Language, h.t.said) // on the record, not answered
		c.screenText(ctx, text)
		return
	}
	c.turn++
	msg := llm.Message{Role: llm.RoleUser, Content: text}
	if h.t.deferred && c.reply != nil {
		// Logged when the agent's turn is over: the transcript reads in
		// the order the agent took things in.
		c.queued = append(c.queued, queuedTurn{msg, c.turnID(), h.res.Language, h.t.said})
		return
	}
	c.log.user(c.turnID(), text, h.res.Language, h.t.said)
	if c.reply != nil {
		// A reply to something else (a nudge) is moot now; so is one the
		// caller talked over with enough words in the end (held).
		c.interrupt()
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
	said   span // from the caller's first word to their last
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
