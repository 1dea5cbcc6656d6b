package deepgramtest

import (
	"context"
	"fmt"
	"time"

	"github.com/coder/websocket"
)

// session serves one accepted stream.
type session struct {
	srv  *Server
	rec  *record
	opts Options
	conn *websocket.Conn

	segs      []segment // the answer, once chosen
	sent      int       // segs sent so far
	chosen    bool
	sentExtra bool
}

type frame struct {
	typ  websocket.MessageType
	data []byte
}

// run serves the stream until it ends or ctx (the server's) is canceled.
func (ss *session) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	ss.conn.SetReadLimit(4 << 20)
	// A reader goroutine, so the loop can also watch the idle timer.
	frames := make(chan frame)
	var readErr error
	go func() {
		defer close(frames)
		for {
			typ, data, err := ss.conn.Read(ctx)
			if err != nil {
				readErr = err
				return
			}
			select {
			case frames <- frame{typ, data}:
			case <-ctx.Done():
				return
			}
		}
	}()
	end := ss.loop(ctx, frames, &readErr)
	cancel()
	_ = ss.conn.CloseNow()
	for range frames { // wait for the reader
	}
	ss.setEnd(end)
}

// setEnd records how the stream ended, the first time. Closes record it
// before their handshake, so a client that has seen the close frame finds
// the End set.
func (ss *session) setEnd(end string) {
	ss.srv.update(ss.rec, func(r *record) {
		if r.info.End == "" {
			r.info.End = end
		}
	})
}

// loop handles the client's messages; it returns how the stream ended.
func (ss *session) loop(ctx context.Context, frames <-chan frame, readErr *error) string {
	o := ss.opts
	if o.CloseCode != 0 && o.CloseAfter <= 0 && !o.Hang {
		return ss.closeWith(o.CloseCode, o.CloseReason)
	}
	var idle <-chan time.Time
	var timer *time.Timer
	if o.IdleTimeout > 0 && !o.Hang {
		timer = time.NewTimer(o.IdleTimeout)
		defer timer.Stop()
		idle = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return "server shut down"
		case <-idle:
			return ss.closeWith(int(websocket.StatusInternalError), "NET-0001")
		case f, ok := <-frames:
			if !ok {
				if code := websocket.CloseStatus(*readErr); code != -1 {
					return fmt.Sprintf("client closed %d", int(code))
				}
				return "client gone"
			}
			if timer != nil {
				timer.Reset(o.IdleTimeout)
			}
			if end := ss.handle(ctx, f); end != "" {
				return end
			}
		}
	}
}

// handle records one message and acts on it: "" to go on, else how the
// stream ended.
func (ss *session) handle(ctx context.Context, f frame) string {
	o := ss.opts
	if f.typ == websocket.MessageBinary {
		if len(f.data) == 0 {
			ss.srv.update(ss.rec, func(r *record) { r.info.EmptyMessages++ })
			if o.Hang {
				return ""
			}
			return ss.closeStream(ctx)
		}
		var total int
		ss.srv.update(ss.rec, func(r *record) {
			r.audio = append(r.audio, f.data...)
			r.info.AudioBytes += len(f.data)
			r.info.AudioMessages++
			total = r.info.AudioBytes
		})
		switch {
		case o.Hang:
			return ""
		case o.CloseCode != 0 && total >= o.CloseAfter:
			return ss.closeWith(o.CloseCode, o.CloseReason)
		case !ss.rec.info.Query.Has("encoding"):
			// Raw PCM without encoding= is no container Deepgram knows.
			return ss.closeWith(int(websocket.StatusPolicyViolation), "DATA-0000")
		}
		if !ss.sentExtra {
			ss.sentExtra = true
			for _, m := range o.Extra {
				if ss.conn.Write(ctx, websocket.MessageText, []byte(m)) != nil {
					return "client gone"
				}
			}
		}
		return ""
	}
	typ := messageType(f.data)
	ss.srv.update(ss.rec, func(r *record) { r.info.Controls = append(r.info.Controls, typ) })
	if o.Hang {
		return ""
	}
	switch typ {
	case "Finalize":
		if ss.answer(ctx, true) != nil {
			return "client gone"
		}
	case "CloseStream":
		return ss.closeStream(ctx)
	}
	return "" // KeepAlive, and anything unknown, is only recorded
}

// closeStream sends the remaining results, an empty final for the trailing
// silence and the Metadata summary, then closes normally.
func (ss *session) closeStream(ctx context.Context) string {
	if ss.answer(ctx, false) != nil {
		return "client gone"
	}
	at := ss.duration()
	model := ss.rec.info.Model
	id := ss.rec.info.RequestID
	for _, m := range [][]byte{
		resultsMessage(segment{start: at, end: at}, true, false, id, model),
		metadataMessage(id, model, ss.audio(), at),
	} {
		if ss.conn.Write(ctx, websocket.MessageText, m) != nil {
			return "client gone"
		}
	}
	ss.setEnd("CloseStream")
	_ = ss.conn.Close(websocket.StatusNormalClosure, "")
	return "CloseStream"
}

// answer waits FinalDelay, chooses the transcript on first use and sends
// the final results not sent yet (each after an interim one when the
// client asked for interim_results).
func (ss *session) answer(ctx context.Context, fromFinalize bool) error {
	if d := ss.opts.FinalDelay; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if !ss.chosen {
		ss.chosen = true
		text := DefaultTranscript
		if ss.opts.Transcript != nil {
			ss.srv.mu.Lock()
			info := ss.rec.snapshot()
			ss.srv.mu.Unlock()
			text = ss.opts.Transcript(info)
		}
		ss.srv.update(ss.rec, func(r *record) { r.info.Transcript = text })
		ss.segs = segments(text, ss.duration())
	}
	interim := ss.rec.info.Query.Get("interim_results") == "true"
	id, model := ss.rec.info.RequestID, ss.rec.info.Model
	for ; ss.sent < len(ss.segs); ss.sent++ {
		seg := ss.segs[ss.sent]
		if interim {
			if err := ss.conn.Write(ctx, websocket.MessageText, resultsMessage(seg, false, false, id, model)); err != nil {
				return err
			}
		}
		last := ss.sent == len(ss.segs)-1
		if err := ss.conn.Write(ctx, websocket.MessageText, resultsMessage(seg, true, fromFinalize && last, id, model)); err != nil {
			return err
		}
	}
	return nil
}

// closeWith closes the stream with an error code, as Deepgram reports
// failures mid-stream.
func (ss *session) closeWith(code int, reason string) string {
	end := fmt.Sprintf("closed %d %s", code, reason)
	ss.setEnd(end)
	_ = ss.conn.Close(websocket.StatusCode(code), reason)
	return end
}

// duration is the audio received so far, in seconds.
func (ss *session) duration() float64 {
	ss.srv.mu.Lock()
	defer ss.srv.mu.Unlock()
	if ss.rec.info.SampleRate <= 0 {
		return 0
	}
	return float64(ss.rec.info.AudioBytes/2) / float64(ss.rec.info.SampleRate)
}

// audio is a copy of the audio bytes received so far.
func (ss *session) audio() []byte {
	ss.srv.mu.Lock()
	defer ss.srv.mu.Unlock()
	return append([]byte(nil), ss.rec.audio...)
}
