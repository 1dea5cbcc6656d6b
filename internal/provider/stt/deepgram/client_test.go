package deepgram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/stt/deepgram/deepgramtest"
)

// backstop bounds every call in these tests: a call that hangs ends with
// context.DeadlineExceeded, which no test accepts.
const backstop = 10 * time.Second

// setup starts a fake with o and a client for it; change applies to the
// config before New.
func setup(t *testing.T, o deepgramtest.Options, change ...func(*Config)) (*Client, *deepgramtest.Server) {
	t.Helper()
	srv := deepgramtest.New(t, o)
	cfg := Config{
		BaseURL:      srv.URL,
		APIKey:       deepgramtest.DefaultAPIKey,
		DialTimeout:  2 * time.Second,
		FinalTimeout: 2 * time.Second,
		Logger:       slog.New(slog.DiscardHandler),
	}
	for _, f := range change {
		f(&cfg)
	}
	return New(cfg), srv
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	t.Cleanup(cancel)
	return ctx
}

// speech is n samples of a sawtooth spanning negative and positive values,
// offset by seed so streams differ.
func speech(n, seed int) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16((i*997 + seed*131) % 65536)
	}
	return pcm
}

// open opens a stream or fails the test.
func open(t *testing.T, ctx context.Context, c *Client, rate int, language string) stt.Stream {
	t.Helper()
	s, err := c.Open(ctx, rate, language)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func onlyStream(t *testing.T, srv *deepgramtest.Server) deepgramtest.StreamInfo {
	t.Helper()
	streams := srv.Streams()
	if len(streams) != 1 {
		t.Fatalf("server saw %d streams, want 1", len(streams))
	}
	return streams[0]
}

func TestStream(t *testing.T) {
	c, srv := setup(t, deepgramtest.Options{})
	ctx := testContext(t)
	s := open(t, ctx, c, 16000, "")
	// Sizes around maxChunk: a write is split, an empty one sends nothing.
	var sent []int16
	for i, n := range []int{320, 0, maxChunk, maxChunk + 1, 3*maxChunk + 17, 1} {
		pcm := speech(n, i)
		if err := s.Write(pcm); err != nil {
			t.Fatalf("Write %d: %v", i, err)
		}
		sent = append(sent, pcm...)
	}
	res, err := s.Close()
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	want := stt.Result{
		Text:     deepgramtest.DefaultTranscript, // two finals and an empty one
		Language: "en",
		Audio:    stt.Duration(len(sent), 16000),
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}

	info := onlyStream(t, srv)
	wantQuery := url.Values{
		"model":           {"nova-3"},
		"language":        {"en"},
		"encoding":        {"linear16"},
		"sample_rate":     {"16000"},
		"channels":        {"1"},
		"interim_results": {"true"},
		"punctuate":       {"true"},
		"smart_format":    {"true"},
	}
	if diff := cmp.Diff(wantQuery, info.Query); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if got := info.Header.Get("Authorization"); got != "Token "+deepgramtest.DefaultAPIKey {
		t.Errorf("Authorization = %q", got)
	}
	if !slices.Equal(info.Audio, sent) {
		t.Errorf("server got %d samples, want the %d sent, in order", len(info.Audio), len(sent))
	}
	if info.AudioMessages != 1+1+2+4+1 || info.EmptyMessages != 0 {
		t.Errorf("audio messages = %d, empty = %d; want 9 (at most %d samples each) and 0",
			info.AudioMessages, info.EmptyMessages, maxChunk)
	}
	if diff := cmp.Diff([]string{"CloseStream"}, info.Controls); diff != "" {
		t.Errorf("control messages (-want +got):\n%s", diff)
	}
	if info.End != "CloseStream" {
		t.Errorf("stream ended with %q", info.End)
	}
}

func TestTranscribe(t *testing.T) {
	c, srv := setup(t, deepgramtest.Options{
		Transcript: func(s deepgramtest.StreamInfo) string {
			return fmt.Sprintf("Heard %d samples at %d Hz. In %s!  Bye.", len(s.Audio), s.SampleRate, s.Language)
		},
	}, func(c *Config) { c.Model = "nova-2" })
	pcm := speech(12345, 1)
	res, err := c.Transcribe(testContext(t), pcm, 8000, "de-DE")
	if err != nil {
		t.Fatalf("Transcribe: %v", err)
	}
	want := stt.Result{
		Text:     "Heard 12345 samples at 8000 Hz. In de-DE! Bye.",
		Language: "de-DE",
		Audio:    stt.Duration(12345, 8000),
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}
	info := onlyStream(t, srv)
	if info.Model != "nova-2" || info.Language != "de-DE" || info.SampleRate != 8000 {
		t.Errorf("model, language, rate = %q, %q, %d", info.Model, info.Language, info.SampleRate)
	}
	if !slices.Equal(info.Audio, pcm) {
		t.Error("the server did not get the audio as sent")
	}
}

func TestTranscribeEmpty(t *testing.T) {
	c, srv := setup(t, deepgramtest.Options{})
	res, err := c.Transcribe(testContext(t), nil, 16000, "")
	if err != nil || res != (stt.Result{Language: "en"}) {
		t.Fatalf("Transcribe(nil) = %+v, %v", res, err)
	}
	if n := len(srv.Streams()); n != 0 {
		t.Errorf("server saw %d streams for no audio", n)
	}
	if _, err := c.Transcribe(testContext(t), speech(10, 0), 0, ""); err == nil {
		t.Error("rate 0 accepted")
	}
}

// Only final results are text: interim results, events and messages of
// unknown types or shapes are skipped.
func TestIgnoresOtherMessages(t *testing.T) {
	c, _ := setup(t, deepgramtest.Options{
		Transcript: func(deepgramtest.StreamInfo) string { return "Only this." },
		Extra: []string{
			`{"type":"Results","is_final":false,"channel":{"alternatives":[{"transcript":"WRONG interim"}]}}`,
			`{"type":"SpeechStarted","channel":[0],"timestamp":0.1}`,
			`{"type":"UtteranceEnd","channel":[0,1],"last_word_end":0.5}`,
			`{"type":"Metadata","request_id":"x"}`,
			`{"type":"Whatever","is_final":true,"channel":{"alternatives":[{"transcript":"WRONG type"}]}}`,
			`{"type":"Results","is_final":true,"channel":{"alternatives":[]}}`,
			`not json at all`,
		},
	})
	ctx := testContext(t)
	s := open(t, ctx, c, 16000, "en-US")
	for range 3 {
		if err := s.Write(speech(1600, 0)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Only this." {
		t.Errorf("Text = %q", res.Text)
	}
}

func TestKeepAlive(t *testing.T) {
	// The fake closes a stream silent for 300 ms with NET-0001, as
	// Deepgram does after 10 s; KeepAlive every 40 ms keeps it open.
	c, srv := setup(t, deepgramtest.Options{IdleTimeout: 300 * time.Millisecond},
		func(c *Config) { c.KeepAlive = 40 * time.Millisecond })
	ctx := testContext(t)
	s := open(t, ctx, c, 16000, "")
	if err := s.Write(speech(160, 0)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // the caller paused
	if err := s.Write(speech(160, 1)); err != nil {
		t.Fatalf("Write after a pause: %v", err)
	}
	if _, err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctl := onlyStream(t, srv).Controls
	n := 0
	for _, c := range ctl {
		if c == "KeepAlive" {
			n++
		}
	}
	if n < 5 || ctl[len(ctl)-1] != "CloseStream" {
		t.Errorf("control messages %q: want about 17 KeepAlive, CloseStream last", ctl)
	}
}

// While audio flows no KeepAlive is sent.
func TestNoKeepAliveWhileSpeaking(t *testing.T) {
	// Writes every 15 ms for twice the keep-alive interval (250 ms).
	c, srv := setup(t, deepgramtest.Options{}, func(c *Config) { c.KeepAlive = 250 * time.Millisecond })
	s := open(t, testContext(t), c, 16000, "")
	for range 34 {
		if err := s.Write(speech(240, 0)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(15 * time.Millisecond)
	}
	if _, err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if ctl := onlyStream(t, srv).Controls; !slices.Equal(ctl, []string{"CloseStream"}) {
		t.Errorf("control messages = %q, want only CloseStream", ctl)
	}
}

func TestRefusedKey(t *testing.T) {
	const key = "sk-live-secret-0123456789"
	for _, tc := range []struct {
		name string
		o    deepgramtest.Options
	}{
		{"401", deepgramtest.Options{}}, // the fake wants DefaultAPIKey
		{"403", deepgramtest.Options{APIKey: key, RefuseStatus: 403, RefuseMessage: "Insufficient permissions."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, srv := setup(t, tc.o, func(c *Config) { c.APIKey = key })
			_, err := c.Open(testContext(t), 16000, "en")
			if !errors.Is(err, stt.ErrUnavailable) || errors.Is(err, stt.ErrLanguage) {
				t.Fatalf("err = %v, want stt.ErrUnavailable", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "refused the API key") || !strings.Contains(msg, tc.name) {
				t.Errorf("err = %q, want it to say the key was refused, with the status", msg)
			}
			if strings.Contains(msg, key) || strings.Contains(msg, "secret") {
				t.Errorf("err = %q shows the key", msg)
			}
			if id := onlyStream(t, srv).RequestID; !strings.Contains(msg, id) {
				t.Errorf("err = %q, want the request id %s", msg, id)
			}
		})
	}
}

func TestLanguageRefused(t *testing.T) {
	c, _ := setup(t, deepgramtest.Options{Languages: []string{"en", "de"}})
	_, err := c.Open(testContext(t), 16000, "tlh")
	if !errors.Is(err, stt.ErrLanguage) {
		t.Fatalf("err = %v, want stt.ErrLanguage", err)
	}
	if !strings.Contains(err.Error(), "No such model/language/tier combination found") {
		t.Errorf("err = %q, want Deepgram's message", err)
	}
	s := open(t, testContext(t), c, 16000, "de")
	if _, err := s.Close(); err != nil {
		t.Errorf("a served language: %v", err)
	}
}

// A 400 that is not about the language, and any other refusal, is
// ErrUnavailable.
func TestOtherRefusals(t *testing.T) {
	for _, tc := range []struct {
		status int
		msg    string
	}{
		{400, "Bad Request: invalid encoding"},
		{429, "Too many concurrent requests."},
		{503, ""},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			c, _ := setup(t, deepgramtest.Options{RefuseStatus: tc.status, RefuseMessage: tc.msg})
			_, err := c.Open(testContext(t), 16000, "en")
			if !errors.Is(err, stt.ErrUnavailable) || errors.Is(err, stt.ErrLanguage) {
				t.Fatalf("err = %v, want only stt.ErrUnavailable", err)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(tc.status)) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %q, want the status and the message", err)
			}
		})
	}
}

func TestErrorClose(t *testing.T) {
	for _, tc := range []struct {
		code   int
		reason string
		after  int
	}{
		{1008, "DATA-0000", 3200},
		{1011, "NET-0000", 0},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			c, srv := setup(t, deepgramtest.Options{
				Transcript: func(deepgramtest.StreamInfo) string { return "Never sent." },
				CloseCode:  tc.code, CloseReason: tc.reason, CloseAfter: tc.after,
			})
			s := open(t, testContext(t), c, 16000, "")
			var werr error
			for i := 0; i < 50 && werr == nil; i++ {
				werr = s.Write(speech(1600, i))
				time.Sleep(2 * time.Millisecond)
			}
			if werr != nil && !errors.Is(werr, stt.ErrUnavailable) {
				t.Errorf("Write: %v, want stt.ErrUnavailable", werr)
			}
			res, err := s.Close()
			if !errors.Is(err, stt.ErrUnavailable) {
				t.Fatalf("Close: %v, want stt.ErrUnavailable", err)
			}
			want := fmt.Sprintf("%d %s", tc.code, tc.reason)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Close: %q, want %q in it", err, want)
			}
			if res.Text != "" {
				t.Errorf("Text = %q", res.Text)
			}
			if end := onlyStream(t, srv).End; end != "closed "+want {
				t.Errorf("server: stream ended with %q", end)
			}
		})
	}
}

func TestFinalDelay(t *testing.T) {
	c, _ := setup(t, deepgramtest.Options{FinalDelay: 150 * time.Millisecond},
		func(c *Config) { c.FinalTimeout = time.Second })
	res, err := c.Transcribe(testContext(t), speech(1600, 0), 16000, "")
	if err != nil || res.Text != deepgramtest.DefaultTranscript {
		t.Fatalf("Transcribe = %+v, %v", res, err)
	}
}

func TestFinalTimeout(t *testing.T) {
	for _, o := range []deepgramtest.Options{
		{Hang: true},
		{FinalDelay: 5 * time.Second},
	} {
		t.Run(fmt.Sprintf("hang=%v", o.Hang), func(t *testing.T) {
			const timeout = 200 * time.Millisecond
			c, _ := setup(t, o, func(c *Config) { c.FinalTimeout = timeout })
			s := open(t, testContext(t), c, 16000, "")
			if err := s.Write(speech(1600, 0)); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := s.Close()
			took := time.Since(start)
			if !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), timeout.String()) {
				t.Errorf("Close: %v, want stt.ErrUnavailable naming %s", err, timeout)
			}
			if took < timeout || took > timeout+time.Second {
				t.Errorf("Close took %s, want about %s", took, timeout)
			}
			if res.Audio != 100*time.Millisecond || res.Language != "en" {
				t.Errorf("Result = %+v, want the audio and language even so", res)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Run("while streaming", func(t *testing.T) {
		c, srv := setup(t, deepgramtest.Options{Hang: true})
		ctx, cancel := context.WithCancel(testContext(t))
		s := open(t, ctx, c, 16000, "")
		if err := s.Write(speech(1600, 0)); err != nil {
			t.Fatal(err)
		}
		cancel()
		waitFor(t, "the server to see the connection close", func() bool {
			return onlyStream(t, srv).End == "client gone"
		})
		if err := s.Write(speech(1600, 0)); !errors.Is(err, context.Canceled) {
			t.Errorf("Write after cancel: %v", err)
		}
		start := time.Now()
		if _, err := s.Close(); err != context.Canceled {
			t.Errorf("Close: %v, want context.Canceled", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("Close took %s", took)
		}
	})
	t.Run("during Close", func(t *testing.T) {
		c, _ := setup(t, deepgramtest.Options{Hang: true}, func(c *Config) { c.FinalTimeout = 5 * time.Second })
		ctx, cancel := context.WithCancel(testContext(t))
		s := open(t, ctx, c, 16000, "")
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		if _, err := s.Close(); err != context.Canceled {
			t.Errorf("Close: %v, want context.Canceled", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("Close took %s after cancel", took)
		}
	})
	t.Run("before Open", func(t *testing.T) {
		c, srv := setup(t, deepgramtest.Options{})
		ctx, cancel := context.WithCancel(testContext(t))
		cancel()
		if _, err := c.Open(ctx, 16000, ""); err != context.Canceled {
			t.Errorf("Open: %v", err)
		}
		if n := len(srv.Streams()); n != 0 {
			t.Errorf("server saw %d streams", n)
		}
	})
	t.Run("during the handshake", func(t *testing.T) {
		addr := silentListener(t)
		c := New(Config{BaseURL: "ws://" + addr, APIKey: "k", DialTimeout: 5 * time.Second})
		ctx, cancel := context.WithCancel(testContext(t))
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		if _, err := c.Open(ctx, 16000, ""); err != context.Canceled {
			t.Errorf("Open: %v", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("Open took %s after cancel", took)
		}
	})
}

func TestDialFailure(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		addr := silentListener(t)
		c := New(Config{BaseURL: "http://" + addr, APIKey: "k", DialTimeout: 150 * time.Millisecond})
		_, err := c.Open(testContext(t), 16000, "")
		if !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "150ms") {
			t.Errorf("Open: %v, want stt.ErrUnavailable naming the timeout", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		c := New(Config{BaseURL: "ws://" + addr, APIKey: "k"})
		_, err = c.Open(testContext(t), 16000, "")
		if !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "refused") {
			t.Errorf("Open: %v, want stt.ErrUnavailable, connection refused", err)
		}
	})
	t.Run("bad base URL", func(t *testing.T) {
		c := New(Config{BaseURL: "ftp://example.com", APIKey: "k"})
		if _, err := c.Open(testContext(t), 16000, ""); !errors.Is(err, stt.ErrUnavailable) {
			t.Errorf("Open: %v", err)
		}
	})
}

// silentListener accepts TCP connections and never answers; it is closed
// when the test ends.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

func TestCloseTwiceAndWriteAfterClose(t *testing.T) {
	c, _ := setup(t, deepgramtest.Options{})
	s := open(t, testContext(t), c, 16000, "")
	if err := s.Write(speech(160, 0)); err != nil {
		t.Fatal(err)
	}
	res1, err1 := s.Close()
	res2, err2 := s.Close()
	if err1 != nil || res1 != res2 || err2 != nil {
		t.Errorf("Close twice: %+v, %v then %+v, %v", res1, err1, res2, err2)
	}
	if err := s.Write(speech(160, 0)); err == nil {
		t.Error("Write after Close accepted")
	}
}

// Streams of one Client are independent.
func TestConcurrentStreams(t *testing.T) {
	c, _ := setup(t, deepgramtest.Options{
		Transcript: func(s deepgramtest.StreamInfo) string {
			return fmt.Sprintf("Stream %d.", s.Audio[0])
		},
	})
	ctx := testContext(t)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			pcm := make([]int16, 800*(i+1))
			pcm[0] = int16(i)
			res, err := c.Transcribe(ctx, pcm, 16000, "")
			if err != nil || res.Text != fmt.Sprintf("Stream %d.", i) || res.Audio != stt.Duration(len(pcm), 16000) {
				t.Errorf("stream %d: %+v, %v", i, res, err)
			}
		})
	}
	wg.Wait()
}

func TestEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"wss://api.deepgram.com":          "wss://api.deepgram.com/v1/listen",
		"https://api.deepgram.com/":       "wss://api.deepgram.com/v1/listen",
		"https://api.deepgram.com/v1":     "wss://api.deepgram.com/v1/listen",
		"http://127.0.0.1:8080/v1/listen": "ws://127.0.0.1:8080/v1/listen",
		"https://eu.example/proxy/v1/":    "wss://eu.example/proxy/v1/listen",
		" ws://host:1?x=y#z ":             "ws://host:1/v1/listen",
	} {
		u, err := endpoint(in)
		if err != nil || u.String() != want {
			t.Errorf("endpoint(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, in := range []string{"api.deepgram.com", "ftp://x", "wss://", "://"} {
		if _, err := endpoint(in); !errors.Is(err, stt.ErrUnavailable) {
			t.Errorf("endpoint(%q): %v, want stt.ErrUnavailable", in, err)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A stream says its text so far (stt.Partial): the finals received and the
// latest interim result after them, while the audio still flows; the final
// text is the finals alone.
func TestPartial(t *testing.T) {
	c, _ := setup(t, deepgramtest.Options{
		Transcript: func(deepgramtest.StreamInfo) string { return "Wait, stop please." },
		Extra: []string{
			`{"type":"Results","is_final":false,"channel":{"alternatives":[{"transcript":"wait"}]}}`,
			`{"type":"Results","is_final":true,"channel":{"alternatives":[{"transcript":"Wait,"}]}}`,
			`{"type":"Results","is_final":false,"channel":{"alternatives":[{"transcript":"stop"}]}}`,
		},
	})
	ctx := testContext(t)
	s := open(t, ctx, c, 16000, "")
	p, ok := s.(stt.Partial)
	if !ok {
		t.Fatal("a deepgram stream does not implement stt.Partial")
	}
	if got := p.Partial(); got != "" {
		t.Errorf("Partial before any result = %q", got)
	}
	if err := s.Write(speech(1600, 0)); err != nil {
		t.Fatal(err)
	}
	for p.Partial() != "Wait, stop" {
		select {
		case <-ctx.Done():
			t.Fatalf("Partial = %q, want %q", p.Partial(), "Wait, stop")
		case <-time.After(5 * time.Millisecond):
		}
	}
	res, err := s.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The fake's own answer follows the injected results: the finals are
	// the text, interims never.
	if res.Text != "Wait, Wait, stop please." {
		t.Errorf("Text = %q", res.Text)
	}
}
