package openai

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/openai/openaitest"
)

// backstop bounds every Synthesize in these tests: a call that hangs ends
// with context.DeadlineExceeded, which no test accepts.
const backstop = 10 * time.Second

const key = "sk-test-0123456789abcdef"

// setup starts a fake answering with script and a Synthesizer for it;
// change applies to the config before New.
func setup(t *testing.T, script func(openaitest.Request) openaitest.Reply, change ...func(*Config)) (*Synthesizer, *openaitest.Server) {
	t.Helper()
	server := openaitest.New(t, script)
	cfg := Config{
		BaseURL:           server.URL,
		APIKey:            key,
		Model:             "tts-test",
		FirstAudioTimeout: 5 * time.Second, // the timeout tests set their own: a loaded machine must not time out the rest
		StallTimeout:      5 * time.Second,
		HTTPClient:        testHTTPClient(t),
	}
	for _, f := range change {
		f(&cfg)
	}
	return New(cfg), server
}

// testHTTPClient has a transport of its own whose idle connections are
// closed when the test ends, so no keep-alive goroutine outlives it.
func testHTTPClient(t *testing.T) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func reply(r openaitest.Reply) func(openaitest.Request) openaitest.Reply {
	return func(openaitest.Request) openaitest.Reply { return r }
}

// synthesize runs one Synthesize under the backstop, collecting the audio
// and the size of each piece.
func synthesize(t *testing.T, s *Synthesizer, r tts.Request, rate int) (tts.Stats, []int16, []int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	var pcm []int16
	var pieces []int
	stats, err := s.Synthesize(ctx, r, rate, func(p []int16) error {
		pcm = append(pcm, p...)
		pieces = append(pieces, len(p))
		return nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Synthesize still running after %s", backstop)
	}
	return stats, pcm, pieces, err
}

var hello = tts.Request{Text: "Hello, how can I help?"}

func TestRequestBody(t *testing.T) {
	s, server := setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, 24000, 100*time.Millisecond, 0.5)}))
	temp := 1.5
	requests := []tts.Request{
		{Text: "Grüezi", Language: "de-CH", Temperature: &temp},
		{Text: "Hi", Voice: "nova", Speed: 1.25},
		{Text: "Hi", Speed: 10},
		{Text: "Hi", Speed: 0.1},
		{Text: "Hi", Speed: math.NaN()},
	}
	for _, r := range requests {
		if _, _, _, err := synthesize(t, s, r, 8000); err != nil {
			t.Fatalf("%+v: %v", r, err)
		}
	}
	got := server.Requests()
	if len(got) != len(requests) {
		t.Fatalf("server got %d requests, want %d", len(got), len(requests))
	}
	// A WAV (its header says the rate) at the line's rate, asked for.
	want := []map[string]any{
		{"model": "tts-test", "input": "Grüezi", "voice": "alloy", "response_format": "wav", "sample_rate": 8000.0},
		{"model": "tts-test", "input": "Hi", "voice": "nova", "response_format": "wav", "sample_rate": 8000.0, "speed": 1.25},
		{"model": "tts-test", "input": "Hi", "voice": "alloy", "response_format": "wav", "sample_rate": 8000.0, "speed": 4.0},
		{"model": "tts-test", "input": "Hi", "voice": "alloy", "response_format": "wav", "sample_rate": 8000.0, "speed": 0.25},
		{"model": "tts-test", "input": "Hi", "voice": "alloy", "response_format": "wav", "sample_rate": 8000.0},
	}
	for i, r := range got {
		if diff := cmp.Diff(want[i], r.Body); diff != "" {
			t.Errorf("request %d body (-want +got):\n%s", i, diff)
		}
		if r.Method != http.MethodPost || r.Path != "/v1/audio/speech" {
			t.Errorf("request %d: %s %s", i, r.Method, r.Path)
		}
		if auth := r.Header.Get("Authorization"); auth != "Bearer "+key {
			t.Errorf("request %d: Authorization = %q", i, auth)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("request %d: Content-Type = %q", i, ct)
		}
	}
}

// TestStreaming: audio reaches out while the server is still sending.
func TestStreaming(t *testing.T) {
	s, server := setup(t, reply(openaitest.Reply{
		PCM:      audio.Tone(440, 24000, 500*time.Millisecond, 0.5),
		ChunkGap: 50 * time.Millisecond, // 5 chunks of 100 ms: 200 ms of gaps
	}))
	start := time.Now()
	var firstAt time.Duration
	var doneSeen []int
	stats, err := s.Synthesize(t.Context(), hello, 16000, func(p []int16) error {
		if firstAt == 0 {
			firstAt = time.Since(start)
		}
		doneSeen = append(doneSeen, server.Done())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := time.Since(start)
	if len(doneSeen) < 5 || doneSeen[0] != 0 || doneSeen[1] != 0 {
		t.Errorf("out called %d times, seeing the server done %v; want 5 or more, the first before it finished", len(doneSeen), doneSeen)
	}
	if total-firstAt < 150*time.Millisecond {
		t.Errorf("first audio at %s of %s: not streamed", firstAt, total)
	}
	if stats.Audio != 500*time.Millisecond {
		t.Errorf("Audio = %s, want 500ms", stats.Audio)
	}
}

func TestResample(t *testing.T) {
	tone := audio.Tone(440, 24000, time.Second, 0.5)
	for _, rate := range []int{8000, 16000, 24000, 48000} {
		// 4801-byte chunks, each read on its own, split samples between
		// reads.
		s, _ := setup(t, reply(openaitest.Reply{PCM: tone, ChunkBytes: 4801, ChunkGap: 5 * time.Millisecond}))
		stats, pcm, pieces, err := synthesize(t, s, hello, rate)
		if err != nil {
			t.Fatalf("%d Hz: %v", rate, err)
		}
		frame := rate / 50
		if d := len(pcm) - rate; d < -frame || d > frame {
			t.Errorf("%d Hz: %d samples for 1 s, want %d within a 20 ms frame", rate, len(pcm), rate)
		}
		if want := time.Duration(len(pcm)) * time.Second / time.Duration(rate); stats.Audio != want {
			t.Errorf("%d Hz: Audio = %s, want the %s handed to out", rate, stats.Audio, want)
		}
		if len(pieces) < 5 {
			t.Errorf("%d Hz: audio in %d pieces, want it as it arrived", rate, len(pieces))
		}
		// Past the resampler's start-up delay, the tone is 440 Hz, clean.
		steady := pcm[rate/10:]
		if !audio.DetectTone(steady, rate, 440) || audio.ToneShare(steady, rate, 440) < 0.95 {
			t.Errorf("%d Hz: 440 Hz share %.3f, want a clean 440 Hz tone", rate, audio.ToneShare(steady, rate, 440))
		}
		for _, wrong := range []float64{440 * 24000 / float64(rate), 1000} {
			if wrong != 440 && audio.DetectTone(steady, rate, wrong) {
				t.Errorf("%d Hz: tone at %.0f Hz", rate, wrong)
			}
		}
	}
}

func TestStats(t *testing.T) {
	s, _ := setup(t, reply(openaitest.Reply{}))
	stats, pcm, _, err := synthesize(t, s, tts.Request{Text: "Grüße, wörld!"}, 8000)
	if err != nil {
		t.Fatal(err)
	}
	// The fake's default: 50 ms per character.
	if stats.Characters != 13 || stats.Audio != 650*time.Millisecond || len(pcm) != 5200 {
		t.Errorf("stats = %+v with %d samples; want 13 characters, 650 ms", stats, len(pcm))
	}
}

func TestTextLimits(t *testing.T) {
	s, server := setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, 24000, 100*time.Millisecond, 0.5)}))
	for _, text := range []string{"", "  \n\t "} {
		stats, pcm, _, err := synthesize(t, s, tts.Request{Text: text}, 8000)
		if err != nil || stats != (tts.Stats{}) || pcm != nil {
			t.Errorf("%q: %+v, %d samples, %v; want nothing", text, stats, len(pcm), err)
		}
	}
	if _, _, _, err := synthesize(t, s, tts.Request{Text: strings.Repeat("ü", MaxText+1)}, 8000); !errors.Is(err, tts.ErrTextTooLong) {
		t.Errorf("%d characters: err = %v, want ErrTextTooLong", MaxText+1, err)
	}
	if n := len(server.Requests()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
	stats, _, _, err := synthesize(t, s, tts.Request{Text: strings.Repeat("ü", MaxText)}, 8000)
	if err != nil || stats.Characters != MaxText {
		t.Errorf("%d characters: %+v, %v", MaxText, stats, err)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		voice string
		reply openaitest.Reply
		kind  error
		want  string
	}{
		{"bob", openaitest.Reply{}, tts.ErrUnknownVoice, "400 Bad Request: Invalid value: 'bob'"},
		{"", openaitest.Reply{Status: 404, Message: "Voice 'af_x' not found"}, tts.ErrUnknownVoice, "not found"},
		{"", openaitest.Reply{Status: 400, Message: "Input is too long: at most 1000 characters"}, tts.ErrTextTooLong, "at most 1000"},
		{"", openaitest.Reply{Status: 400, Message: "Something else"}, tts.ErrUnavailable, "Something else"},
		{"", openaitest.Reply{Status: 401, Message: "Incorrect API key provided: " + key[:7] + "******cdef."}, tts.ErrUnavailable, "401 Unauthorized: key refused: Incorrect API key provided: [redacted]"},
		{"", openaitest.Reply{Status: 403, Message: "key " + key + " blocked"}, tts.ErrUnavailable, "403 Forbidden: key refused"},
		{"", openaitest.Reply{Status: 429, Message: "Rate limit reached"}, tts.ErrUnavailable, "429 Too Many Requests: Rate limit reached"},
		{"", openaitest.Reply{Status: 500}, tts.ErrUnavailable, "500 Internal Server Error"},
		{"", openaitest.Reply{Status: 503, Message: "overloaded"}, tts.ErrUnavailable, "overloaded"},
		{"", openaitest.Reply{PCM: []int16{}}, tts.ErrUnavailable, "no audio"},
	} {
		s, _ := setup(t, reply(tc.reply))
		_, pcm, _, err := synthesize(t, s, tts.Request{Text: "Hi", Voice: tc.voice}, 8000)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d %q: err = %v, want %v containing %q", tc.reply.Status, tc.reply.Message, err, tc.kind, tc.want)
			continue
		}
		for _, other := range []error{tts.ErrUnavailable, tts.ErrUnknownVoice, tts.ErrTextTooLong} {
			if other != tc.kind && errors.Is(err, other) {
				t.Errorf("%d: err = %v is also %v", tc.reply.Status, err, other)
			}
		}
		if strings.Contains(err.Error(), key[:7]) {
			t.Errorf("%d: the key shows in %q", tc.reply.Status, err)
		}
		if len(pcm) != 0 {
			t.Errorf("%d: %d samples handed out", tc.reply.Status, len(pcm))
		}
	}
}

// TestKeyNeverShown: a key of any shape is scrubbed from the server's
// message.
func TestKeyNeverShown(t *testing.T) {
	const local = "local-secret-42"
	s, _ := setup(t, reply(openaitest.Reply{Status: 401, Message: "key '" + local + "' unknown"}),
		func(c *Config) { c.APIKey = local })
	_, _, _, err := synthesize(t, s, hello, 8000)
	if !errors.Is(err, tts.ErrUnavailable) || strings.Contains(err.Error(), local) || !strings.Contains(err.Error(), "key refused") {
		t.Errorf("err = %v", err)
	}
}

func TestNotAudio(t *testing.T) {
	for _, tc := range []struct{ contentType, body, want string }{
		{"application/json", `{"error":{"message":"model is warming up"}}`, "model is warming up"},
		{"text/html; charset=utf-8", "<html>Sign in</html>", "text/html"},
		{"audio/pcm", "", "no audio"},
	} {
		s := New(Config{BaseURL: newRawServer(t, http.StatusOK, tc.contentType, tc.body), HTTPClient: testHTTPClient(t)})
		_, pcm, _, err := synthesize(t, s, hello, 8000)
		if !errors.Is(err, tts.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) || len(pcm) != 0 {
			t.Errorf("%s: err = %v, %d samples", tc.contentType, err, len(pcm))
		}
	}
}

// TestOddLength: a last byte without its pair is dropped, not an error.
func TestOddLength(t *testing.T) {
	s := New(Config{BaseURL: newRawServer(t, http.StatusOK, "audio/pcm", "\x01\x00\x02\x00\x03"), HTTPClient: testHTTPClient(t), Format: FormatPCM})
	_, pcm, _, err := synthesize(t, s, hello, 24000)
	if err != nil || !cmp.Equal(pcm, []int16{1, 2}) {
		t.Errorf("pcm = %v, err = %v; want [1 2]", pcm, err)
	}
}

func TestFirstAudioTimeout(t *testing.T) {
	for name, rep := range map[string]openaitest.Reply{
		"no headers":  {Delay: time.Second},
		"no audio":    {Hang: true},
		"slow status": {Status: 500, Delay: time.Second},
	} {
		s, _ := setup(t, reply(rep), func(c *Config) {
			c.FirstAudioTimeout = 100 * time.Millisecond
			c.StallTimeout = backstop
		})
		start := time.Now()
		_, _, _, err := synthesize(t, s, hello, 8000)
		if !errors.Is(err, tts.ErrUnavailable) || err.Error() != "tts: engine unavailable: no audio within 100ms" {
			t.Errorf("%s: err = %v, want the first-audio timeout", name, err)
		}
		if d := time.Since(start); d > 600*time.Millisecond {
			t.Errorf("%s: returned after %s", name, d)
		}
	}
}

func TestStall(t *testing.T) {
	s, _ := setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, 24000, 200*time.Millisecond, 0.5), Hang: true}),
		func(c *Config) {
			c.FirstAudioTimeout = backstop
			c.StallTimeout = 100 * time.Millisecond
		})
	start := time.Now()
	stats, _, _, err := synthesize(t, s, hello, 8000)
	if !errors.Is(err, tts.ErrUnavailable) || err.Error() != "tts: engine unavailable: no audio for 100ms" {
		t.Errorf("err = %v, want the stall timeout", err)
	}
	if stats.Audio != 200*time.Millisecond {
		t.Errorf("Audio = %s, want the 200ms sent before the stall", stats.Audio)
	}
	if d := time.Since(start); d > 600*time.Millisecond {
		t.Errorf("returned after %s", d)
	}
}

// TestGapsWithinTimeouts: many gaps, each shorter than the stall timeout,
// add up to more than either timeout without failing.
func TestGapsWithinTimeouts(t *testing.T) {
	s, _ := setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, 24000, 800*time.Millisecond, 0.5), ChunkGap: 50 * time.Millisecond}),
		func(c *Config) {
			c.FirstAudioTimeout = 150 * time.Millisecond
			c.StallTimeout = 150 * time.Millisecond
		})
	if stats, _, _, err := synthesize(t, s, hello, 8000); err != nil || stats.Audio != 800*time.Millisecond {
		t.Errorf("stats %+v, err = %v", stats, err)
	}
}

// TestSlowOut: the time out takes (a caller pacing playback) is not a
// stall of the server.
func TestSlowOut(t *testing.T) {
	s, _ := setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, 24000, 500*time.Millisecond, 0.5), ChunkGap: 10 * time.Millisecond}),
		func(c *Config) { c.StallTimeout = 50 * time.Millisecond })
	stats, err := s.Synthesize(t.Context(), hello, 8000, func([]int16) error {
		time.Sleep(100 * time.Millisecond)
		return nil
	})
	if err != nil || stats.Audio != 500*time.Millisecond {
		t.Errorf("stats %+v, err = %v", stats, err)
	}
}

func TestOutErrorStops(t *testing.T) {
	// Raw samples, so each chunk is 100 ms of audio.
	s, server := setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, 24000, time.Second, 0.5), ChunkGap: 50 * time.Millisecond}),
		func(c *Config) { c.Format = FormatPCM })
	errBargeIn := errors.New("caller spoke")
	calls := 0
	start := time.Now()
	stats, err := s.Synthesize(t.Context(), hello, 8000, func([]int16) error {
		calls++
		if calls == 2 {
			return errBargeIn
		}
		return nil
	})
	if err != errBargeIn {
		t.Fatalf("err = %v, want out's error as it is", err)
	}
	if calls != 2 || stats.Audio != 200*time.Millisecond || stats.Characters != len(hello.Text) {
		t.Errorf("%d calls, stats %+v; want the read stopped at the error", calls, stats)
	}
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("returned after %s: the rest was read", d)
	}
	if server.Done() != 0 {
		t.Errorf("the server sent everything")
	}
}

func TestCancel(t *testing.T) {
	for name, rep := range map[string]openaitest.Reply{
		"before audio": {Delay: backstop},
		"mid-stream":   {PCM: audio.Tone(440, 24000, 100*time.Millisecond, 0.5), Hang: true},
	} {
		s, _ := setup(t, reply(rep), func(c *Config) {
			c.FirstAudioTimeout = backstop
			c.StallTimeout = backstop
		})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		var after int
		_, err := s.Synthesize(ctx, hello, 8000, func([]int16) error {
			if ctx.Err() != nil {
				after++
			}
			return nil
		})
		cancel()
		if !errors.Is(err, context.Canceled) || errors.Is(err, tts.ErrUnavailable) {
			t.Errorf("%s: err = %v, want context.Canceled and no kind", name, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: returned %s after the cancel", name, d)
		}
		if after != 0 {
			t.Errorf("%s: audio handed out after the cancel", name)
		}
	}
}

// TestCancelInOut: audio already read when out cancels is not handed out.
func TestCancelInOut(t *testing.T) {
	s, _ := setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, 24000, time.Second, 0.5), ChunkBytes: 960}))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	_, err := s.Synthesize(ctx, hello, 8000, func([]int16) error {
		calls++
		cancel()
		time.Sleep(20 * time.Millisecond) // the rest arrives meanwhile
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("err = %v after %d calls of out, want context.Canceled after 1", err, calls)
	}
}

func TestNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := New(Config{BaseURL: "http://" + addr + "/v1", HTTPClient: testHTTPClient(t)})
	_, _, _, err = synthesize(t, s, hello, 8000)
	if !errors.Is(err, tts.ErrUnavailable) || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "/v1") {
		t.Errorf("err = %v, want ErrUnavailable: connection refused, without the URL", err)
	}
}

func TestBadRate(t *testing.T) {
	s, server := setup(t, reply(openaitest.Reply{}))
	for _, rate := range []int{0, -8000, 1 << 30} {
		if _, _, _, err := synthesize(t, s, hello, rate); err == nil {
			t.Errorf("rate %d: no error", rate)
		}
	}
	if n := len(server.Requests()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

// TestNoEnvironment: OPENAI_* variables change nothing; what is not
// configured is not sent.
func TestNoEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	s, server := setup(t, reply(openaitest.Reply{}), func(c *Config) { c.APIKey = "" })
	if _, _, _, err := synthesize(t, s, hello, 8000); err != nil {
		t.Fatal(err)
	}
	if auth, ok := server.Requests()[0].Header["Authorization"]; ok {
		t.Errorf("Authorization %q sent without a configured key", auth)
	}
}

func TestDefaults(t *testing.T) {
	s := New(Config{})
	defer s.Close()
	if s.endpoint != "https://api.openai.com/v1/audio/speech" || s.model != DefaultModel || s.voice != DefaultVoice ||
		s.firstAudio != DefaultFirstAudioTimeout || s.stall != DefaultStallTimeout || s.format != FormatWAV ||
		s.pcmRate != Rate || s.pcmRateAsked != 0 {
		t.Errorf("%+v", s)
	}
	if got := New(Config{BaseURL: "http://x/v1/"}).endpoint; got != "http://x/v1/audio/speech" {
		t.Errorf("trailing slash: endpoint %q", got)
	}
}

func TestOwnTransportClosed(t *testing.T) {
	server := openaitest.New(t, reply(openaitest.Reply{}))
	s := New(Config{BaseURL: server.URL, Voice: "echo"})
	t.Cleanup(s.Close)
	if _, _, _, err := synthesize(t, s, hello, 8000); err != nil {
		t.Fatal(err)
	}
	if v := server.Requests()[0].Voice; v != "echo" {
		t.Errorf("voice %q, want the configured echo", v)
	}
}
