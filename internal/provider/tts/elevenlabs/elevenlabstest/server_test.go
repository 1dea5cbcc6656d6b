package elevenlabstest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/media/audio"
)

const rachel = "21m00Tcm4TlvDq8ikWAM"

// client is a bare WebSocket client: the tests speak the protocol by hand.
type client struct {
	t    *testing.T
	c    *websocket.Conn
	ctx  context.Context
	resp *http.Response
}

func dial(t *testing.T, s *Server, voice, query string, key string) (*client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	h := http.Header{}
	if key != "" {
		h.Set("xi-api-key", key)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, resp, err := websocket.Dial(ctx, s.URL+"/v1/text-to-speech/"+voice+"/stream-input?"+query,
		&websocket.DialOptions{HTTPHeader: h, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		return &client{t: t, resp: resp}, err
	}
	c.SetReadLimit(1 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &client{t: t, c: c, ctx: ctx, resp: resp}, nil
}

func (c *client) send(msgs ...string) {
	c.t.Helper()
	for _, m := range msgs {
		if err := c.c.Write(c.ctx, websocket.MessageText, []byte(m)); err != nil {
			c.t.Fatalf("send %s: %v", m, err)
		}
	}
}

// received is a server message as the API documents it.
type received struct {
	Audio               *string         `json:"audio"`
	IsFinal             *bool           `json:"isFinal"`
	NormalizedAlignment json.RawMessage `json:"normalizedAlignment"`
	Message, Error      string
	Code                int
}

// readAll reads messages until the server closes, returning them and the
// close error.
func (c *client) readAll() ([]received, error) {
	c.t.Helper()
	var out []received
	for {
		_, b, err := c.c.Read(c.ctx)
		if err != nil {
			return out, err
		}
		var m received
		if err := json.Unmarshal(b, &m); err != nil {
			c.t.Fatalf("message %s: %v", b, err)
		}
		out = append(out, m)
	}
}

func pcmOf(t *testing.T, msgs []received) []int16 {
	var pcm []int16
	for _, m := range msgs {
		if m.Audio == nil {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(*m.Audio)
		if err != nil || len(b)%2 != 0 {
			t.Fatalf("audio %q: %v", *m.Audio, err)
		}
		for i := 0; i < len(b); i += 2 {
			pcm = append(pcm, int16(uint16(b[i])|uint16(b[i+1])<<8))
		}
	}
	return pcm
}

func TestSession(t *testing.T) {
	s := New(t, Options{})
	c, err := dial(t, s, rachel, "model_id=eleven_flash_v2_5&output_format=pcm_24000&language_code=en", DefaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	c.send(`{"text":" ","voice_settings":{"stability":0.4,"similarity_boost":0.75,"speed":1.1}}`,
		`{"text":"Hello ","try_trigger_generation":true}`,
		`{"text":"there. ","flush":true}`,
		`{"text":""}`)
	msgs, err := c.readAll()
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("closed with %v, want 1000", err)
	}
	last := msgs[len(msgs)-1]
	if last.IsFinal == nil || !*last.IsFinal || last.Audio != nil {
		t.Errorf("last message %+v, want {\"isFinal\":true}", last)
	}
	audioMsgs := msgs[:len(msgs)-1]
	// "Hello there. ": 13 characters, 650 ms at 24 kHz in 100 ms messages.
	if len(audioMsgs) != 7 {
		t.Errorf("%d audio messages, want 7", len(audioMsgs))
	}
	for i, m := range audioMsgs {
		if m.Audio == nil || m.IsFinal != nil || len(m.NormalizedAlignment) == 0 || string(m.NormalizedAlignment) == "null" {
			t.Errorf("audio message %d: %+v", i, m)
		}
	}
	pcm := pcmOf(t, audioMsgs)
	if len(pcm) != 24000*650/1000 || !audio.DetectTone(pcm, 24000, DefaultToneHz) {
		t.Errorf("%d samples (want 15600) of a %g Hz tone: share %.2f", len(pcm), DefaultToneHz, audio.ToneShare(pcm, 24000, DefaultToneHz))
	}

	ss := s.Sessions()
	if len(ss) != 1 {
		t.Fatalf("%d sessions", len(ss))
	}
	got := ss[0]
	if got.Voice != rachel || got.APIKey != DefaultAPIKey || got.Model != "eleven_flash_v2_5" ||
		got.OutputFormat != "pcm_24000" || got.Language != "en" {
		t.Errorf("handshake recorded as %+v", got)
	}
	if vs := got.BOS().VoiceSettings; got.BOS().Text != " " || vs == nil || *vs.Stability != 0.4 || *vs.Speed != 1.1 || vs.Style != nil {
		t.Errorf("BOS %s recorded as %+v", got.BOS().Raw, got.BOS())
	}
	if strings.Join(got.Texts(), "|") != "Hello |there. " || got.Text() != "Hello there. " {
		t.Errorf("texts %q", got.Texts())
	}
	if m := got.Messages; !m[1].TryTriggerGeneration || m[1].Flush || !m[2].Flush || !got.EOS {
		t.Errorf("flags: %+v, EOS %v", m, got.EOS)
	}
	if got.Chunks != 7 || got.Audio != 650*time.Millisecond || !got.Final || got.Error != "" {
		t.Errorf("sent %d chunks, %s, final %v, error %q", got.Chunks, got.Audio, got.Final, got.Error)
	}
}

func TestKeyInFirstMessage(t *testing.T) {
	s := New(t, Options{APIKey: "k-123"})
	c, err := dial(t, s, rachel, "output_format=pcm_8000", "")
	if err != nil {
		t.Fatal(err)
	}
	c.send(`{"text":" ","xi-api-key":"k-123"}`, `{"text":"Hi. "}`, `{"text":""}`)
	msgs, err := c.readAll()
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure || len(pcmOf(t, msgs)) != 8000*4*50/1000 {
		t.Errorf("%v after %d messages", err, len(msgs))
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		name, voice, query, key string
		opts                    Options
		status                  int    // handshake refused with this
		message, kind           string // JSON error message
		close                   string // close reason (code 1008)
	}{
		{name: "wrong key", voice: rachel, query: "output_format=pcm_16000", key: "nope", close: "Invalid API key"},
		{name: "no key", voice: rachel, query: "output_format=pcm_16000", close: "Invalid API key"},
		{name: "wrong key refused", voice: rachel, query: "output_format=pcm_16000", key: "nope",
			opts: Options{RejectKey: true}, status: 401, message: "Invalid API key", kind: "invalid_api_key"},
		{name: "busy", voice: rachel, query: "output_format=pcm_16000", key: DefaultAPIKey,
			opts: Options{HandshakeStatus: 429}, status: 429, message: "Too Many Requests", kind: "too_many_concurrent_requests"},
		{name: "bad path", voice: "a/b", key: DefaultAPIKey, status: 404, message: "Not Found", kind: "not_found"},
		{name: "unknown voice", voice: "Nobody", query: "output_format=pcm_16000", key: DefaultAPIKey,
			message: "A voice for the voice_id Nobody was not found.", kind: "voice_not_found", close: "A voice for the voice_id Nobody was not found."},
		{name: "mp3", voice: rachel, query: "output_format=mp3_44100_128", key: DefaultAPIKey, kind: "invalid_output_format"},
		{name: "language for v2", voice: rachel, query: "model_id=eleven_multilingual_v2&output_format=pcm_16000&language_code=fr",
			key: DefaultAPIKey, kind: "unsupported_language"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(t, c.opts)
			cl, err := dial(t, s, c.voice, c.query, c.key)
			if c.status != 0 {
				if err == nil || cl.resp == nil || cl.resp.StatusCode != c.status {
					t.Fatalf("handshake: %v, want %d", err, c.status)
				}
				body, _ := io.ReadAll(cl.resp.Body)
				var d struct {
					Detail struct{ Status, Message string }
				}
				if json.Unmarshal(body, &d) != nil || d.Detail.Status != c.kind || d.Detail.Message != c.message {
					t.Errorf("body %s, want detail %q %q", body, c.kind, c.message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cl.send(`{"text":" "}`)
			msgs, err := cl.readAll()
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation {
				t.Fatalf("closed with %v, want 1008", err)
			}
			if c.close != "" && ce.Reason != c.close {
				t.Errorf("close reason %q, want %q", ce.Reason, c.close)
			}
			if c.kind == "" {
				if len(msgs) != 0 {
					t.Errorf("messages %+v, want none", msgs)
				}
				return
			}
			if len(msgs) != 1 || msgs[0].Error != c.kind || msgs[0].Code != 1008 || (c.message != "" && msgs[0].Message != c.message) {
				t.Errorf("messages %+v, want one error %q", msgs, c.kind)
			}
			if got := s.Sessions()[0].Error; got == "" {
				t.Error("Session.Error not recorded")
			}
		})
	}
}

func TestBadMessage(t *testing.T) {
	s := New(t, Options{})
	c, err := dial(t, s, rachel, "output_format=pcm_16000", DefaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	c.send(`{"text":" "}`, `{"flush":true}`)
	msgs, err := c.readAll()
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation || len(msgs) != 1 || msgs[0].Error != "invalid_input_message" {
		t.Errorf("%+v, %v: want invalid_input_message and 1008", msgs, err)
	}
}

func TestFailures(t *testing.T) {
	for _, c := range []struct {
		name   string
		fail   Failure
		chunks int
		code   websocket.StatusCode // -1: no close frame
		kind   string
	}{
		{name: "message and close", fail: Failure{After: 2, Message: "quota", Error: "quota_exceeded"}, chunks: 2, code: 1008, kind: "quota_exceeded"},
		{name: "close only", fail: Failure{After: 1, CloseCode: 1011, CloseReason: "internal"}, chunks: 1, code: 1011},
		{name: "drop", fail: Failure{After: 3, Drop: true}, chunks: 3, code: -1},
		{name: "after the audio", fail: Failure{After: 99, CloseReason: "late"}, chunks: 5, code: 1008},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(t, Options{Reply: Reply{Fail: &c.fail}})
			cl, err := dial(t, s, rachel, "output_format=pcm_16000", DefaultAPIKey)
			if err != nil {
				t.Fatal(err)
			}
			cl.send(`{"text":" "}`, `{"text":"Hi there. ","flush":true}`, `{"text":""}`) // 10 characters: 500 ms, 5 messages
			msgs, err := cl.readAll()
			var audioN int
			for _, m := range msgs {
				if m.Audio != nil {
					audioN++
				}
				if m.IsFinal != nil && *m.IsFinal {
					t.Error("isFinal sent")
				}
			}
			if audioN != c.chunks || websocket.CloseStatus(err) != c.code {
				t.Errorf("%d audio messages then %v; want %d then %d", audioN, err, c.chunks, c.code)
			}
			if c.kind != "" && msgs[len(msgs)-1].Error != c.kind {
				t.Errorf("last message %+v, want error %q", msgs[len(msgs)-1], c.kind)
			}
		})
	}
}

func TestTimingAndHang(t *testing.T) {
	s := New(t, Options{Reply: Reply{FirstDelay: 150 * time.Millisecond, Gap: 50 * time.Millisecond, Hang: true, HangAfter: 2}})
	cl, err := dial(t, s, rachel, "output_format=pcm_16000", DefaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cl.send(`{"text":" "}`, `{"text":"Hi there. ","flush":true}`)
	var at []time.Duration
	for range 2 {
		if _, _, err := cl.c.Read(cl.ctx); err != nil {
			t.Fatal(err)
		}
		at = append(at, time.Since(start))
	}
	// Lower bounds from the start only: a late read of the first chunk
	// (a busy machine) shortens the gap the client sees, never the time
	// the server waited before sending each.
	if at[0] < 150*time.Millisecond || at[1] < 200*time.Millisecond {
		t.Errorf("audio at %v: want the first after 150 ms and the second 50 ms after that", at)
	}
	// Hanging: nothing more comes, and messages are still recorded.
	cl.send(`{"text":""}`)
	ctx, cancel := context.WithTimeout(cl.ctx, 200*time.Millisecond)
	defer cancel()
	if _, b, err := cl.c.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("read %s, %v while hanging; want nothing", b, err)
	}
	if ss := s.Sessions()[0]; ss.Chunks != 2 || !ss.EOS || ss.Final {
		t.Errorf("session %+v", ss)
	}
}

func TestScript(t *testing.T) {
	s := New(t, Options{Script: func(ss Session) Reply {
		if strings.Contains(ss.Text(), "beep") {
			return Reply{Audio: func(rate int, text string) []int16 { return audio.Tone(1000, rate, 100*time.Millisecond, 0.5) }}
		}
		return Reply{ToneHz: 300}
	}})
	for text, hz := range map[string]float64{"beep ": 1000, "hum ": 300} {
		cl, err := dial(t, s, rachel, "output_format=pcm_8000", DefaultAPIKey)
		if err != nil {
			t.Fatal(err)
		}
		cl.send(`{"text":" "}`, `{"text":"`+text+`","flush":true}`, `{"text":""}`)
		msgs, _ := cl.readAll()
		if pcm := pcmOf(t, msgs); !audio.DetectTone(pcm, 8000, hz) {
			t.Errorf("%q: no %g Hz tone in %d samples", text, hz, len(pcm))
		}
	}
}
