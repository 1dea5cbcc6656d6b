package elevenlabs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/tts"
)

const (
	// maxMessage bounds one server message: a second of pcm_44100 is
	// 118 KB of base64, and the API sends far less at a time.
	maxMessage = 4 << 20
	// closeWait is how long to wait, after isFinal, for the server to
	// close the socket as it does, before dropping it.
	closeWait = time.Second
)

// dial opens the WebSocket for one utterance.
func (s *Synthesizer) dial(ctx context.Context, u string) (*websocket.Conn, error) {
	late := timeoutError{fmt.Sprintf("no handshake within %s", s.dialT)}
	dctx, cancel := context.WithTimeoutCause(ctx, s.dialT, late)
	defer cancel()
	h := http.Header{}
	if s.key != "" {
		h.Set("xi-api-key", s.key)
	}
	traced, sent := apierr.Trace(dctx)
	conn, resp, err := websocket.Dial(traced, u, &websocket.DialOptions{HTTPClient: s.http, HTTPHeader: h})
	switch {
	case err == nil:
		conn.SetReadLimit(maxMessage)
		return conn, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
		return nil, s.handshake(resp)
	case context.Cause(dctx) == late:
		return nil, fmt.Errorf("%w: elevenlabs: %w", tts.ErrUnavailable, late)
	}
	return nil, s.unreachable(err, sent())
}

// exchange is one utterance on an open socket.
type exchange struct {
	s    *Synthesizer
	conn *websocket.Conn
	from int // output_format rate
	rate int // rate out wants
	out  func([]int16) error

	rs         *audio.Resampler
	odd        []byte // a sample split across messages
	sent       bool   // the text went out
	emitted    int64  // samples handed to out
	firstAudio time.Duration
}

// run sends the text and streams the audio back until isFinal. The socket
// is closed when it returns.
func (x *exchange) run(ctx context.Context, text string, vs voiceSettings) error {
	defer x.conn.CloseNow() // a no-op after a clean close
	start := time.Now()
	// The three messages go out before anything is read. If the server
	// refuses the first one and closes, a write may fail; the reason is in
	// what it sent, so it is read anyway.
	werr := x.send(ctx, bosMessage{Text: " ", VoiceSettings: vs})
	if werr == nil {
		werr = x.send(ctx, textMessage{Text: text + " ", Flush: true})
		x.sent = werr == nil
	}
	if werr == nil {
		werr = x.send(ctx, eosMessage{})
	}
	x.rs = audio.NewResampler(x.from, x.rate)

	noAudio := timeoutError{fmt.Sprintf("no audio within %s", x.s.firstT)}
	stalled := timeoutError{fmt.Sprintf("no message for %s", x.s.stallT)}
	firstBy := start.Add(x.s.firstT)
	for {
		// Only the wait for the server counts, not the time out takes.
		var rctx context.Context
		var cancel context.CancelFunc
		if x.firstAudio == 0 {
			rctx, cancel = context.WithDeadlineCause(ctx, firstBy, noAudio)
		} else {
			rctx, cancel = context.WithTimeoutCause(ctx, x.s.stallT, stalled)
		}
		_, data, err := x.conn.Read(rctx)
		cause := context.Cause(rctx)
		cancel()
		if err != nil {
			return x.readError(ctx, err, cause, werr)
		}
		m, err := parseMessage(data)
		if err != nil {
			return fmt.Errorf("%w: elevenlabs: unreadable message: %w", tts.ErrUnavailable, err)
		}
		if m.err != nil {
			return x.s.reported(*m.err)
		}
		if err := ctx.Err(); err != nil {
			return err // what the socket still held is not handed out
		}
		if len(m.audio) > 0 {
			if x.firstAudio == 0 {
				x.firstAudio = max(time.Since(start), time.Nanosecond)
			}
			if err := x.play(m.audio); err != nil {
				return err // out's, as it is
			}
		}
		if m.final {
			x.closeAfterFinal(ctx)
			return nil
		}
	}
}

func (x *exchange) send(ctx context.Context, m any) error {
	return x.conn.Write(ctx, websocket.MessageText, encode(m))
}

// play decodes s16le bytes, resamples them and hands them to out.
func (x *exchange) play(b []byte) error {
	if len(x.odd) > 0 {
		b = append(x.odd, b...)
		x.odd = nil
	}
	if len(b)%2 == 1 {
		x.odd = []byte{b[len(b)-1]}
		b = b[:len(b)-1]
	}
	in := make([]int16, len(b)/2)
	for i := range in {
		in[i] = int16(uint16(b[2*i]) | uint16(b[2*i+1])<<8)
	}
	pcm := x.rs.Process(nil, in)
	if len(pcm) == 0 {
		return nil
	}
	x.emitted += int64(len(pcm))
	return x.out(pcm)
}

// readError explains why reading failed.
func (x *exchange) readError(ctx context.Context, err, cause, werr error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if t, ok := cause.(timeoutError); ok {
		return fmt.Errorf("%w: elevenlabs: %w", tts.ErrUnavailable, t)
	}
	if ce, ok := errors.AsType[websocket.CloseError](err); ok {
		return x.s.closed(ce)
	}
	if werr != nil {
		err = werr
	}
	return fmt.Errorf("%w: elevenlabs: the connection broke%s", tts.ErrUnavailable, apierr.Quote(err.Error(), x.s.key))
}

// closeAfterFinal lets the server close the socket, as it does after
// isFinal, so both ends close cleanly; whatever comes meanwhile is
// dropped, and after closeWait the socket is dropped too.
func (x *exchange) closeAfterFinal(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, closeWait)
	defer cancel()
	for {
		if _, _, err := x.conn.Read(ctx); err != nil {
			return
		}
	}
}
