package openai

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/stt/openai/openaitest"
)

// Two "words" the fake tells apart by pitch.
const (
	first  = "I would like"
	second = "a table for two"
)

// byPitch transcribes a segment by its loudest tone: 440 Hz is first,
// 880 Hz second, silence nothing.
func byPitch(r openaitest.Request) openaitest.Reply {
	lo, hi := audio.ToneShare(r.Samples, r.Rate, 440), audio.ToneShare(r.Samples, r.Rate, 880)
	switch {
	case audio.RMS(r.Samples) < 0.01:
		return openaitest.Reply{}
	case lo > hi:
		return openaitest.Reply{Text: first}
	}
	return openaitest.Reply{Text: second}
}

// counting is an HTTP client that counts its requests by path.
type counting struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n[r.URL.Path]++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *counting) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[path]
}

// logs collects log records' messages.
type logs struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	slog *slog.Logger
}

func newLogs() *logs {
	l := &logs{}
	l.slog = slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.buf.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	return l
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// streamSetup starts a fake with opts answering with script and a
// Streamer for it, without a key; change applies to the config.
func streamSetup(t *testing.T, script func(openaitest.Request) openaitest.Reply, opts []openaitest.Option, change ...func(*Config)) (*Streamer, *openaitest.Server, *counting, *logs) {
	t.Helper()
	server := openaitest.New(t, script, opts...)
	tr := &counting{n: map[string]int{}}
	l := newLogs()
	cfg := Config{BaseURL: server.URL, Model: "whisper-test", Timeout: 2 * time.Second, FinalTimeout: 2 * time.Second,
		HTTPClient: &http.Client{Transport: tr}, Logger: l.slog}
	for _, f := range change {
		f(&cfg)
	}
	t.Cleanup(func() { http.DefaultTransport.(*http.Transport).CloseIdleConnections() })
	return NewStreamer(cfg), server, tr, l
}

// say writes pcm in 20 ms frames at rate.
func say(t *testing.T, st stt.Stream, pcm []int16, rate int) {
	t.Helper()
	frame := rate / 50
	for len(pcm) > 0 {
		n := min(frame, len(pcm))
		if err := st.Write(pcm[:n]); err != nil {
			t.Fatalf("Write: %v", err)
		}
		pcm = pcm[n:]
	}
}

// waitFor polls cond until it holds, failing after the backstop.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(backstop)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, backstop)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func open(t *testing.T, s *Streamer, rate int, language string) stt.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	t.Cleanup(cancel)
	st, err := s.Open(ctx, rate, language)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return st
}

// TestRealtimeSegments: in every dialect, the caller's pause lets the
// server transcribe the first phrase while the second is spoken; Partial
// has it before the end, and the final text is both in order.
func TestRealtimeSegments(t *testing.T) {
	for name, d := range map[string]openaitest.Dialect{"ga": openaitest.GA, "beta": openaitest.Beta, "beta-transcription": openaitest.BetaTranscription} {
		t.Run(name, func(t *testing.T) {
			s, server, tr, _ := streamSetup(t, byPitch, []openaitest.Option{openaitest.Realtime(d)})
			st := open(t, s, 8000, "en-US")
			p, ok := st.(stt.Partial)
			if !ok {
				t.Fatalf("%T is no stt.Partial", st)
			}
			if got := p.Partial(); got != "" {
				t.Errorf("Partial before any audio = %q", got)
			}
			say(t, st, audio.Tone(440, 8000, 600*time.Millisecond, 0.5), 8000)
			say(t, st, audio.Silence(8000, 300*time.Millisecond), 8000)
			waitFor(t, "the first phrase in Partial", func() bool { return p.Partial() == first })
			say(t, st, audio.Tone(880, 8000, 600*time.Millisecond, 0.5), 8000)
			res, err := st.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := stt.Result{Text: first + " " + second, Language: "en-US", Audio: 1500 * time.Millisecond}
			if res != want {
				t.Errorf("result %+v, want %+v", res, want)
			}
			if got := p.Partial(); got != want.Text {
				t.Errorf("Partial after Close = %q", got)
			}
			sessions := server.Sessions()
			if len(sessions) != 1 {
				t.Fatalf("%d sessions", len(sessions))
			}
			ss := sessions[0]
			if ss.Model != "whisper-test" || ss.Language != "en" || !ss.VAD || ss.Silence != DefaultSegmentSilence ||
				ss.Commits != 1 || ss.Items != 2 || ss.Query.Get("intent") != "transcription" || ss.Query.Get("model") != "whisper-test" {
				t.Errorf("session %+v", ss)
			}
			// 1.5 s at 24 kHz, within the resampler's ceiling.
			if ss.Appended < 36000 || ss.Appended > 36000+50 {
				t.Errorf("%d samples appended, want 1.5 s at 24 kHz", ss.Appended)
			}
			if _, sent := ss.Header["Authorization"]; sent {
				t.Errorf("Authorization sent without a key")
			}
			if n := tr.count("/v1/audio/transcriptions"); n != 0 {
				t.Errorf("%d whole-utterance requests", n)
			}
		})
	}
}

// TestRealtimeCommitAfterPause: speech then a pause the server's VAD
// commits, so Parley's commit finds the buffer empty: the error answers
// it (with OpenAI's code, or speaches' bare message) and nothing fails.
func TestRealtimeCommitAfterPause(t *testing.T) {
	for name, d := range map[string]openaitest.Dialect{"ga": openaitest.GA, "beta": openaitest.Beta} {
		s, server, _, _ := streamSetup(t, byPitch, []openaitest.Option{openaitest.Realtime(d)}, func(c *Config) { c.APIKey = key })
		st := open(t, s, 16000, "")
		say(t, st, audio.Tone(880, 16000, 400*time.Millisecond, 0.5), 16000)
		say(t, st, audio.Silence(16000, 220*time.Millisecond), 16000)
		waitFor(t, name+": the VAD's commit", func() bool { return len(server.Sessions()) == 1 && server.Sessions()[0].Items == 1 })
		res, err := st.Close()
		if err != nil || res.Text != second {
			t.Errorf("%s: %+v, %v", name, res, err)
		}
		ss := server.Sessions()[0]
		if ss.Commits != 1 || ss.Items != 1 || ss.Header.Get("Authorization") != "Bearer "+key || ss.Language != "" {
			t.Errorf("%s: session %+v", name, ss)
		}
	}
}

// TestRealtimeOneSegment: speech without a pause is one item, committed by
// Parley.
func TestRealtimeOneSegment(t *testing.T) {
	s, server, _, _ := streamSetup(t, byPitch, []openaitest.Option{openaitest.Realtime(openaitest.GA)})
	st := open(t, s, 8000, "de")
	say(t, st, audio.Tone(440, 8000, time.Second, 0.5), 8000)
	res, err := st.Close()
	if err != nil || res.Text != first || res.Language != "de" || res.Audio != time.Second {
		t.Errorf("%+v, %v", res, err)
	}
	if ss := server.Sessions()[0]; ss.Items != 1 || ss.Commits != 1 || ss.Language != "de" {
		t.Errorf("session %+v", ss)
	}
}

// TestRealtimeNothingSaid: a stream closed without audio commits nothing.
func TestRealtimeNothingSaid(t *testing.T) {
	s, server, _, _ := streamSetup(t, byPitch, []openaitest.Option{openaitest.Realtime(openaitest.GA)})
	st := open(t, s, 8000, "en")
	res, err := st.Close()
	if err != nil || res != (stt.Result{Language: "en"}) {
		t.Errorf("%+v, %v", res, err)
	}
	if ss := server.Sessions()[0]; ss.Commits != 0 {
		t.Errorf("%d commits", ss.Commits)
	}
	if err := st.Write(make([]int16, 160)); err == nil {
		t.Error("Write after Close succeeded")
	}
	if res2, err2 := st.Close(); res2 != res || err2 != err {
		t.Errorf("second Close: %+v, %v", res2, err2)
	}
}

// TestRealtimeFallback: a server without realtime sessions (404) gets
// whole-utterance requests from then on, after one try; with
// --stt-streaming realtime its refusal is the error.
func TestRealtimeFallback(t *testing.T) {
	s, server, tr, l := streamSetup(t, byPitch, nil)
	for i := range 3 {
		st := open(t, s, 8000, "en")
		if _, ok := st.(stt.Partial); ok {
			t.Errorf("utterance %d: a whole-utterance stream claims partial text", i)
		}
		say(t, st, audio.Tone(880, 8000, 500*time.Millisecond, 0.5), 8000)
		res, err := st.Close()
		if err != nil || res.Text != second || res.Audio != 500*time.Millisecond {
			t.Errorf("utterance %d: %+v, %v", i, res, err)
		}
	}
	if n, m := tr.count("/v1/realtime"), tr.count("/v1/audio/transcriptions"); n != 1 || m != 3 {
		t.Errorf("%d realtime handshakes and %d whole requests, want 1 and 3", n, m)
	}
	if got := server.Requests(); len(got) != 3 || got[0].Rate != 8000 || got[0].Language != "en" {
		t.Errorf("requests %+v", got)
	}
	if n := strings.Count(l.String(), "offers no realtime transcription"); n != 1 || !strings.Contains(l.String(), "404") {
		t.Errorf("logged the fallback %d times:\n%s", n, l)
	}

	s, _, _, _ = streamSetup(t, byPitch, nil, func(c *Config) { c.Streaming = StreamingRealtime })
	_, err := s.Open(t.Context(), 8000, "en")
	if !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "refused a realtime session: 404 Not Found") {
		t.Errorf("realtime only: %v", err)
	}

	// Off: never tries.
	s, _, tr, _ = streamSetup(t, byPitch, []openaitest.Option{openaitest.Realtime(openaitest.GA)}, func(c *Config) { c.Streaming = StreamingOff })
	st := open(t, s, 8000, "en")
	say(t, st, audio.Tone(440, 8000, 300*time.Millisecond, 0.5), 8000)
	if res, err := st.Close(); err != nil || res.Text != first || tr.count("/v1/realtime") != 0 {
		t.Errorf("off: %+v, %v, %d handshakes", res, err, tr.count("/v1/realtime"))
	}
}

// TestRealtimeSessionRefused: an error event instead of the session's
// settings is a refusal: the utterance goes whole (auto) or fails
// (realtime) with the server's message.
func TestRealtimeSessionRefused(t *testing.T) {
	s, _, _, _ := streamSetup(t, byPitch, []openaitest.Option{openaitest.Realtime(openaitest.GA)}, func(c *Config) { c.Streaming = StreamingRealtime })
	_, err := s.Open(t.Context(), 8000, "fil")
	if !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "invalid_language_format: Invalid language 'fil'") {
		t.Errorf("realtime: %v", err)
	}
	s, _, tr, _ := streamSetup(t, byPitch, []openaitest.Option{openaitest.Realtime(openaitest.GA)})
	st := open(t, s, 8000, "fil")
	say(t, st, audio.Tone(440, 8000, 300*time.Millisecond, 0.5), 8000)
	// The whole request is refused too: the language is the error.
	if _, err := st.Close(); !errors.Is(err, stt.ErrLanguage) || tr.count("/v1/audio/transcriptions") != 1 {
		t.Errorf("auto: %v", err)
	}
}

func TestRealtimeTranscriptionFails(t *testing.T) {
	s, _, _, _ := streamSetup(t, func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: 500, Message: "decoder crashed"}
	}, []openaitest.Option{openaitest.Realtime(openaitest.GA)})
	st := open(t, s, 8000, "en")
	say(t, st, audio.Tone(440, 8000, 300*time.Millisecond, 0.5), 8000)
	if _, err := st.Close(); !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "transcription failed: audio_unintelligible: decoder crashed") {
		t.Errorf("%v", err)
	}
}

func TestRealtimeFinalTimeout(t *testing.T) {
	s, _, _, _ := streamSetup(t, func(openaitest.Request) openaitest.Reply { return openaitest.Reply{Hang: true} },
		[]openaitest.Option{openaitest.Realtime(openaitest.GA)}, func(c *Config) { c.FinalTimeout = 100 * time.Millisecond })
	st := open(t, s, 8000, "en")
	say(t, st, audio.Tone(440, 8000, 300*time.Millisecond, 0.5), 8000)
	if _, err := st.Close(); !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "no final transcript within 100ms") {
		t.Errorf("%v", err)
	}
}

// TestRealtimeCancel: canceling the stream's context ends it at once;
// Close says so, without a kind.
func TestRealtimeCancel(t *testing.T) {
	s, _, _, _ := streamSetup(t, func(openaitest.Request) openaitest.Reply { return openaitest.Reply{Hang: true} },
		[]openaitest.Option{openaitest.Realtime(openaitest.GA)}, func(c *Config) { c.FinalTimeout = backstop })
	ctx, cancel := context.WithCancel(t.Context())
	st, err := s.Open(ctx, 8000, "en")
	if err != nil {
		t.Fatal(err)
	}
	say(t, st, audio.Tone(440, 8000, 300*time.Millisecond, 0.5), 8000)
	var closed atomic.Bool
	time.AfterFunc(50*time.Millisecond, func() {
		closed.Store(true)
		cancel()
	})
	_, err = st.Close()
	if !errors.Is(err, context.Canceled) || errors.Is(err, stt.ErrUnavailable) || !closed.Load() {
		t.Errorf("%v", err)
	}
	if err := st.Write([]int16{1}); err == nil {
		t.Error("Write after Close succeeded")
	}
	if _, err := s.Open(ctx, 8000, "en"); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a canceled context: %v", err)
	}
}

func TestRealtimeURL(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"http://127.0.0.1:8000/v1", "ws://127.0.0.1:8000/v1/realtime?intent=transcription&model=m"},
		{"https://speech.example/v1/", "wss://speech.example/v1/realtime?intent=transcription&model=m"},
		{"https://api.openai.com/v1", "wss://api.openai.com/v1/realtime?intent=transcription"},
		{"ws://h/x", "ws://h/x/realtime?intent=transcription&model=m"},
	} {
		if got, err := realtimeURL(tc.base, "m"); got != tc.want || err != nil {
			t.Errorf("%s: %q, %v; want %q", tc.base, got, err, tc.want)
		}
	}
	if _, err := realtimeURL("ftp://h/v1", "m"); !errors.Is(err, stt.ErrUnavailable) {
		t.Errorf("ftp: %v", err)
	}
}

// FuzzParseEvent: any bytes from the server give an event with a type,
// or an error, without panicking; the dialect of any first event is one
// of the three or none.
func FuzzParseEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"session.created","session":{"type":"transcription","audio":{}}}`,
		`{"type":"session.created","session":{"turn_detection":null}}`,
		`{"type":"transcription_session.created"}`,
		`{"type":"conversation.item.input_audio_transcription.delta","item_id":"i","delta":"a"}`,
		`{"type":"error","error":{"code":"x","message":"m","event_id":"e"}}`,
		`{"type":1}`, `[]`, `{"type":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := parseEvent(data, "k")
		if err != nil {
			if e.Type != "" {
				t.Errorf("type %q with error %v", e.Type, err)
			}
			return
		}
		if e.Type == "" {
			t.Error("an event without a type")
		}
		if d, ok := dialectOf(e); ok && (d < dialectGA || d > dialectBetaTranscription) {
			t.Errorf("dialect %d", d)
		}
		_ = e.Error.describe("k")
		s := &realtimeStream{byID: map[string]*segment{}, commitSent: true}
		s.apply(e)
		_ = s.finished()
	})
}
