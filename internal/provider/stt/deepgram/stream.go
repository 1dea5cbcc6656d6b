package deepgram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// writeTimeout bounds sending one message: a peer that stops reading
// must not block the caller's audio loop forever.
const writeTimeout = 5 * time.Second

// streamConfig is what a stream takes from its Client and Open.
type streamConfig struct {
	rate      int
	language  string
	requestID string
	key       string // the API key, kept out of error text
	final     time.Duration
	keepAlive time.Duration
	log       *slog.Logger
}

// stream is one utterance on one WebSocket connection. Write and Close
// run on the caller's goroutine; a reader goroutine collects the server's
// messages and a keep-alive goroutine speaks up when the audio pauses.
type stream struct {
	streamConfig
	conn   *websocket.Conn
	parent context.Context // the caller's: its end is reported as is
	ctx    context.Context // parent, also canceled once Close is done
	cancel context.CancelFunc
	// unwatch stops the closing of the connection when parent ends.
	unwatch func() bool

	// Caller's goroutine only.
	buf     []byte
	samples int   // written and sent
	broken  error // what Write returned when the stream broke
	closed  bool
	res     stt.Result // Close's outcome, returned again by a second Close
	err     error

	lastSent      atomic.Int64 // UnixNano of the last message sent
	stopKeepAlive chan struct{}
	keepAliveDone chan struct{}

	// Written by the reader goroutine, read after done is closed.
	done      chan struct{}
	described string // the last Error message's description
	end       error  // why reading stopped (a CloseError when the server closed)

	// Written by the reader goroutine, read by Partial at any time.
	mu      sync.Mutex
	finals  []string
	interim string // the latest interim result after the last final
}

var (
	_ stt.Stream  = (*stream)(nil)
	_ stt.Partial = (*stream)(nil)
)

// Partial implements stt.Partial: the final results so far and the latest
// interim one after them (Deepgram revises an interim result until its
// final).
func (s *stream) Partial() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interim == "" {
		return joinFinals(s.finals)
	}
	return joinFinals(append(s.finals[:len(s.finals):len(s.finals)], s.interim))
}

// startStream runs the stream's goroutines on conn, a connection the
// server has just accepted.
func startStream(ctx context.Context, conn *websocket.Conn, c streamConfig) *stream {
	s := &stream{
		streamConfig:  c,
		conn:          conn,
		parent:        ctx,
		stopKeepAlive: make(chan struct{}),
		keepAliveDone: make(chan struct{}),
		done:          make(chan struct{}),
	}
	// The library closes the connection when the context of a blocked Read
	// or Write ends, but not when it has ended before the call: the
	// caller's cancellation closes it here, at once, whatever is running.
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.unwatch = context.AfterFunc(ctx, func() { _ = conn.CloseNow() })
	s.lastSent.Store(time.Now().UnixNano())
	go s.read()
	go s.keepAliveLoop()
	return s
}

// Write implements stt.Stream: pcm goes out as binary messages of
// little-endian samples, at most maxChunk samples each.
func (s *stream) Write(pcm []int16) error {
	if s.closed {
		return errors.New("stt/deepgram: Write after Close")
	}
	if s.broken != nil {
		return s.broken
	}
	// An empty message is never sent: Deepgram takes it as the end of the
	// stream (its protocol before CloseStream existed).
	for len(pcm) > 0 {
		n := min(len(pcm), maxChunk)
		s.buf = encodePCM(s.buf[:0], pcm[:n])
		if err := s.send(websocket.MessageBinary, s.buf); err != nil {
			s.broken = s.writeError(err)
			return s.broken
		}
		s.samples += n
		pcm = pcm[n:]
	}
	return nil
}

// send writes one message within writeTimeout.
func (s *stream) send(typ websocket.MessageType, p []byte) error {
	ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
	defer cancel()
	if err := s.conn.Write(ctx, typ, p); err != nil {
		return err
	}
	s.lastSent.Store(time.Now().UnixNano())
	return nil
}

// writeError explains a failed send: the caller's cancellation, else the
// server's close when the reader has seen it, else the send's own error.
func (s *stream) writeError(err error) error {
	if s.parent.Err() != nil {
		return s.parent.Err()
	}
	select {
	case <-s.done:
		if e := endError(s.end, s.described, s.requestID, s.key); e != nil {
			return e
		}
	default:
	}
	return fmt.Errorf("%w: deepgram: sending audio: %v", stt.ErrUnavailable, err)
}

// Close implements stt.Stream: it sends CloseStream, collects the final
// results until the server closes the connection (or FinalTimeout passes)
// and releases the connection and goroutines. The Result holds the text
// received even when there is an error.
func (s *stream) Close() (stt.Result, error) {
	if s.closed {
		return s.res, s.err
	}
	s.closed = true
	asked := time.Now()
	ctx, cancel := context.WithTimeout(s.ctx, s.final)
	defer cancel()
	close(s.stopKeepAlive)
	ended := s.finish(ctx)
	_ = s.conn.CloseNow() // already closed when the server ended the stream
	<-s.keepAliveDone
	<-s.done
	s.unwatch()
	s.cancel()

	res := stt.Result{
		Text:     joinFinals(s.finals),
		Language: s.language,
		Audio:    stt.Duration(s.samples, s.rate),
	}
	var err error
	switch {
	case s.parent.Err() != nil:
		err = s.parent.Err()
	case !ended:
		err = fmt.Errorf("%w: deepgram sent no end of stream within %s%s", stt.ErrUnavailable, s.final, requestSuffix(s.requestID))
	default:
		err = endError(s.end, s.described, s.requestID, s.key)
	}
	s.log.Debug("deepgram stream closed", "audio", res.Audio, "finals", len(s.finals),
		"wait", time.Since(asked).Round(time.Millisecond), "err", err)
	s.res, s.err = res, err
	return res, err
}

// finish asks the server to end the stream and waits for it to close the
// connection: false when ctx ended first.
func (s *stream) finish(ctx context.Context) bool {
	// No KeepAlive may follow CloseStream.
	select {
	case <-s.keepAliveDone:
	case <-ctx.Done():
		return false
	}
	if s.broken == nil {
		// On failure the connection is closed and the reader says why.
		_ = s.conn.Write(ctx, websocket.MessageText, msgCloseStream)
	}
	select {
	case <-s.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// read collects the final transcripts until the connection ends.
func (s *stream) read() {
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
		m, err := parseMessage(data)
		if err != nil {
			s.log.Warn("deepgram: unreadable message", "err", err, "bytes", len(data))
			continue
		}
		switch m.Type {
		case "Results":
			// Interim results (is_final false) are revised later; only
			// finals are the text, interims only the text so far.
			// speech_final marks a pause, not the end.
			s.mu.Lock()
			if m.Final {
				s.finals = append(s.finals, m.Transcript)
				s.interim = ""
			} else {
				s.interim = m.Transcript
			}
			s.mu.Unlock()
		case "Error":
			s.described = m.Error
		}
		// Metadata, SpeechStarted, UtteranceEnd: nothing to do.
	}
}

// keepAliveLoop sends KeepAlive whenever nothing was sent for keepAlive,
// so a pause in the audio does not get the stream closed (NET-0001).
func (s *stream) keepAliveLoop() {
	defer close(s.keepAliveDone)
	t := time.NewTimer(s.keepAlive)
	defer t.Stop()
	for {
		select {
		case <-s.stopKeepAlive:
			return
		case <-s.done:
			return
		case <-t.C:
		}
		idle := time.Since(time.Unix(0, s.lastSent.Load()))
		if idle < s.keepAlive {
			t.Reset(s.keepAlive - idle)
			continue
		}
		if err := s.send(websocket.MessageText, msgKeepAlive); err != nil {
			return // the connection is closed; the reader says why
		}
		t.Reset(s.keepAlive)
	}
}
