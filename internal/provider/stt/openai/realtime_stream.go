package openai

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
)

const (
	// writeTimeout bounds sending one event: a server that stops reading
	// must not block the caller's audio forever.
	writeTimeout = 5 * time.Second
	// maxAppend is the most samples (at 24 kHz) in one append event.
	maxAppend = realtimeRate / 2
)

// realtimeConfig is what a stream takes from its Streamer and Open.
type realtimeConfig struct {
	rate     int // the line's
	language string
	key      string
	final    time.Duration
	log      *slog.Logger
}

// realtimeStream is one utterance in one realtime transcription session.
// Write, Close and the sends run on the caller's goroutine; a reader
// goroutine applies the server's events to the segments, which Partial
// and Close read under mu.
//
// The server's VAD commits a segment at each pause of the caller's and
// transcribes it while the caller goes on; Close commits what is left and
// waits for every committed segment's final text. A commit the server
// makes is announced by speech_stopped first, so a committed event not
// preceded by one answers Parley's own commit.
type realtimeStream struct {
	realtimeConfig
	conn    *websocket.Conn
	parent  context.Context // the caller's: its end is reported as it is
	ctx     context.Context // parent, also canceled once Close is done
	cancel  context.CancelFunc
	unwatch func() bool // stops closing the connection when parent ends

	// Caller's goroutine only.
	rs      *audio.Resampler
	in      []int16
	msg     []byte
	samples int   // written, at the line's rate
	broken  error // what Write returned when the stream broke
	closed  bool
	res     stt.Result // Close's outcome, returned again by a second Close
	err     error

	done    chan struct{} // closed when the reader stops
	changed chan struct{} // capacity 1: an event was applied
	end     error         // why reading stopped; read after done

	mu         sync.Mutex
	segments   []*segment // in the order the server first named them
	byID       map[string]*segment
	vadOwed    int    // speech_stopped events not yet matched by their commit
	commitSent bool   // Parley's commit went out
	commitDone bool   // ... and was answered (committed, or refused as empty)
	fatal      string // an error event not about the commit
	failures   []string
}

// segment is one item the server transcribes.
type segment struct {
	committed bool
	done      bool
	partial   string // deltas so far, or speaches' partial transcript
	text      string // the completed transcript
}

var (
	_ stt.Stream  = (*realtimeStream)(nil)
	_ stt.Partial = (*realtimeStream)(nil)
)

// startRealtime runs a stream on conn, a session set up for it.
func startRealtime(ctx context.Context, conn *websocket.Conn, c realtimeConfig) *realtimeStream {
	s := &realtimeStream{
		realtimeConfig: c,
		conn:           conn,
		parent:         ctx,
		rs:             audio.NewResampler(c.rate, realtimeRate),
		done:           make(chan struct{}),
		changed:        make(chan struct{}, 1),
		byID:           map[string]*segment{},
	}
	// The library closes the connection when the context of a blocked Read
	// or Write ends, not when it ended before the call: the caller's
	// cancellation closes it here, whatever is running.
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.unwatch = context.AfterFunc(ctx, func() { _ = conn.CloseNow() })
	go s.read()
	return s
}

// Write implements stt.Stream: pcm goes out resampled to 24 kHz, in
// append events of at most half a second.
func (s *realtimeStream) Write(pcm []int16) error {
	if s.closed {
		return errors.New("openai stt: Write after Close")
	}
	if s.broken != nil {
		return s.broken
	}
	s.mu.Lock()
	fatal := s.fatal
	s.mu.Unlock()
	if fatal != "" {
		s.broken = fmt.Errorf("%w: openai realtime: %s", stt.ErrUnavailable, fatal)
		return s.broken
	}
	s.in = s.rs.Process(s.in[:0], pcm)
	for rest := s.in; len(rest) > 0; {
		n := min(len(rest), maxAppend)
		s.msg = appendEvent(s.msg, rest[:n])
		if err := s.send(s.msg); err != nil {
			s.broken = s.writeError(err)
			return s.broken
		}
		rest = rest[n:]
	}
	s.samples += len(pcm)
	return nil
}

// send writes one event within writeTimeout.
func (s *realtimeStream) send(p []byte) error {
	ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
	defer cancel()
	return s.conn.Write(ctx, websocket.MessageText, p)
}

// writeError explains a failed send: the caller's cancellation, else how
// the server ended the connection when the reader has seen it, else the
// send's own error.
func (s *realtimeStream) writeError(err error) error {
	if s.parent.Err() != nil {
		return s.parent.Err()
	}
	select {
	case <-s.done:
		return fmt.Errorf("%w: openai realtime: the server ended the session: %s", stt.ErrUnavailable, closeReason(s.end, s.key))
	default:
	}
	return fmt.Errorf("%w: openai realtime: sending audio: %v", stt.ErrUnavailable, err)
}

// Partial implements stt.Partial: the completed segments' text and the
// deltas of those in progress, in order.
func (s *realtimeStream) Partial() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for _, g := range s.segments {
		t := g.partial
		if g.done {
			t = g.text
		}
		if t = strings.TrimSpace(t); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}

// Close implements stt.Stream: it commits the audio not yet committed,
// waits (up to the final timeout) for every segment's final text, and
// closes the connection. The Result holds the text received even when
// there is an error.
func (s *realtimeStream) Close() (stt.Result, error) {
	if s.closed {
		return s.res, s.err
	}
	s.closed = true
	asked := time.Now()
	ctx, cancel := context.WithTimeout(s.ctx, s.final)
	defer cancel()
	s.mu.Lock()
	s.commitSent = s.broken == nil && s.samples > 0
	s.commitDone = !s.commitSent
	s.mu.Unlock()
	if s.commitSent {
		if err := s.send(commitEvent); err != nil && s.broken == nil {
			s.broken = s.writeError(err)
		}
	}
	finished := s.broken == nil && s.wait(ctx)
	_ = s.conn.CloseNow()
	<-s.done
	s.unwatch()
	s.cancel()

	s.mu.Lock()
	defer s.mu.Unlock()
	var texts []string
	for _, g := range s.segments {
		if t := strings.TrimSpace(g.text); g.done && t != "" {
			texts = append(texts, t)
		}
	}
	res := stt.Result{Text: strings.Join(texts, " "), Language: s.language, Audio: stt.Duration(s.samples, s.rate)}
	var err error
	switch {
	case s.parent.Err() != nil:
		err = s.parent.Err()
	case s.broken != nil:
		err = s.broken
	case s.fatal != "":
		err = fmt.Errorf("%w: openai realtime: %s", stt.ErrUnavailable, s.fatal)
	case !finished && ctx.Err() != nil:
		err = fmt.Errorf("%w: openai realtime: no final transcript within %s", stt.ErrUnavailable, s.final)
	case !finished:
		err = fmt.Errorf("%w: openai realtime: the server ended the session before the final transcript: %s", stt.ErrUnavailable, closeReason(s.end, s.key))
	case len(s.failures) > 0:
		err = fmt.Errorf("%w: openai realtime: transcription failed: %s", stt.ErrUnavailable, strings.Join(s.failures, "; "))
	}
	s.log.Debug("openai realtime stream closed", "audio", res.Audio, "segments", len(s.segments),
		"wait", time.Since(asked).Round(time.Millisecond), "err", err)
	s.res, s.err = res, err
	return res, err
}

// wait waits until the commit is answered and every committed segment is
// done (true), or an error event, the reader's end or ctx's.
func (s *realtimeStream) wait(ctx context.Context) bool {
	for {
		s.mu.Lock()
		fatal, finished := s.fatal != "", s.finished()
		s.mu.Unlock()
		if finished || fatal {
			return finished
		}
		select {
		case <-s.changed:
		case <-s.done:
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.finished()
		case <-ctx.Done():
			return false
		}
	}
}

// finished: Parley's commit is answered and every committed segment has
// its final text (or failed). Called with mu held.
func (s *realtimeStream) finished() bool {
	if !s.commitDone {
		return false
	}
	for _, g := range s.segments {
		if g.committed && !g.done {
			return false
		}
	}
	return true
}

// read applies the server's events until the connection ends.
func (s *realtimeStream) read() {
	defer close(s.done)
	for {
		typ, data, err := s.conn.Read(s.ctx)
		if err != nil {
			s.end = err
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		e, err := parseEvent(data, s.key)
		if err != nil {
			s.log.Warn("openai realtime: unreadable event", "err", err, "bytes", len(data))
			continue
		}
		s.mu.Lock()
		s.apply(e)
		s.mu.Unlock()
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
}

// apply takes one event into the segments. Called with mu held.
func (s *realtimeStream) apply(e serverEvent) {
	switch e.Type {
	case "input_audio_buffer.speech_stopped":
		s.vadOwed++
	case "input_audio_buffer.committed":
		s.segment(e.ItemID).committed = true
		switch {
		case s.vadOwed > 0:
			s.vadOwed--
		case s.commitSent:
			s.commitDone = true
		}
	case "conversation.item.input_audio_transcription.delta":
		if g := s.segment(e.ItemID); !g.done {
			g.partial += e.Delta
		}
	case "input_audio_buffer.partial_transcription": // speaches: the segment so far, again
		if g := s.segment(e.ItemID); !g.done {
			g.partial = e.Transcript
		}
	case "conversation.item.input_audio_transcription.completed":
		g := s.segment(e.ItemID)
		g.text, g.done = e.Transcript, true
	case "conversation.item.input_audio_transcription.failed":
		g := s.segment(e.ItemID)
		g.done = true
		s.failures = append(s.failures, e.Error.describe(s.key))
	case "error":
		if s.commitSent && !s.commitDone && aboutCommit(e.Error) {
			s.commitDone = true // nothing was left to commit
			return
		}
		if s.fatal == "" {
			s.fatal = e.Error.describe(s.key)
		}
	}
}

// segment is the segment of item id, made when first named.
func (s *realtimeStream) segment(id string) *segment {
	g, ok := s.byID[id]
	if !ok {
		g = &segment{}
		s.byID[id] = g
		s.segments = append(s.segments, g)
	}
	return g
}

// aboutCommit reports whether an error event answers Parley's commit: it
// names it (OpenAI echoes the event id), or says the buffer was empty or
// too small to commit (speaches names no event).
func aboutCommit(e *eventError) bool {
	if e == nil {
		return false
	}
	msg := strings.ToLower(e.Message)
	return e.EventID == commitEventID || e.Code == "input_audio_buffer_commit_empty" ||
		strings.Contains(msg, "commit") && (strings.Contains(msg, "empty") || strings.Contains(msg, "too small"))
}
