package openai

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/stt/openai/openaitest"
)

// backstop bounds every Transcribe in these tests: a call that hangs ends
// with context.DeadlineExceeded, which no test accepts.
const backstop = 10 * time.Second

const key = "sk-test-0123456789abcdef"

// setup starts a fake answering with script and a Recognizer for it; change
// applies to the config before New.
func setup(t *testing.T, script func(openaitest.Request) openaitest.Reply, change ...func(*Config)) (*Recognizer, *openaitest.Server) {
	t.Helper()
	server := openaitest.New(t, script)
	cfg := Config{
		BaseURL:    server.URL,
		APIKey:     key,
		Model:      "whisper-test",
		Timeout:    5 * time.Second, // the timeout tests set their own: a loaded machine must not time out the rest,
		HTTPClient: testHTTPClient(t),
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

// transcribe runs one Transcribe under the backstop.
func transcribe(t *testing.T, r *Recognizer, pcm []int16, rate int, language string) (stt.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	res, err := r.Transcribe(ctx, pcm, rate, language)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Transcribe still running after %s", backstop)
	}
	return res, err
}

// speech is a stand-in utterance: 1.5 s of a tone at rate, with the
// extremes of the sample range in it.
func speech(rate int) []int16 {
	pcm := audio.Tone(440, rate, 1500*time.Millisecond, 0.5)
	pcm[10], pcm[11], pcm[12] = 32767, -32768, -1
	return pcm
}

func TestTranscribeRequest(t *testing.T) {
	r, server := setup(t, reply(openaitest.Reply{Text: "  I'd like to book a table.\n"}))
	pcm := speech(8000)
	res, err := transcribe(t, r, pcm, 8000, "en-US")
	if err != nil {
		t.Fatal(err)
	}
	want := stt.Result{Text: "I'd like to book a table.", Language: "en-US", Audio: 1500 * time.Millisecond}
	if res != want {
		t.Errorf("result = %+v, want %+v", res, want)
	}
	reqs := server.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Method != http.MethodPost || got.Path != "/v1/audio/transcriptions" {
		t.Errorf("%s %s", got.Method, got.Path)
	}
	if auth := got.Header.Get("Authorization"); auth != "Bearer "+key {
		t.Errorf("Authorization = %q", auth)
	}
	wantFields := map[string][]string{"model": {"whisper-test"}, "language": {"en"}, "response_format": {"json"}}
	if diff := cmp.Diff(wantFields, got.Fields); diff != "" {
		t.Errorf("form fields (-want +got):\n%s", diff)
	}
	if got.Filename != "utterance.wav" || got.ContentType != "audio/wav" {
		t.Errorf("file part %q of type %q", got.Filename, got.ContentType)
	}
	// The WAV round trip: the very samples, at their own rate.
	if got.Rate != 8000 || got.Channels != 1 || !slices.Equal(got.Samples, pcm) {
		t.Errorf("WAV: %d Hz, %d channels, %d samples (equal: %v); want 8000 Hz mono, %d samples",
			got.Rate, got.Channels, len(got.Samples), slices.Equal(got.Samples, pcm), len(pcm))
	}
}

func TestLanguageField(t *testing.T) {
	r, server := setup(t, reply(openaitest.Reply{Text: "ok"}))
	for _, tc := range []struct{ tag, want string }{
		{"", ""},
		{"de", "de"},
		{"EN", "en"},
		{"fr-CA", "fr"},
		{"zh-Hant-TW", "zh"},
		{"pt_BR", "pt"},
	} {
		res, err := transcribe(t, r, speech(16000), 16000, tc.tag)
		if err != nil {
			t.Errorf("%q: %v", tc.tag, err)
			continue
		}
		if res.Language != tc.tag {
			t.Errorf("%q: Result.Language = %q", tc.tag, res.Language)
		}
		reqs := server.Requests()
		got := reqs[len(reqs)-1]
		_, sent := got.Fields["language"]
		if got.Language != tc.want || sent != (tc.want != "") {
			t.Errorf("%q: language field %q (sent: %v), want %q", tc.tag, got.Language, sent, tc.want)
		}
	}
}

func TestLanguageRefused(t *testing.T) {
	r, server := setup(t, reply(openaitest.Reply{Text: "ok"}))
	// Not a language tag: refused before any request.
	for _, tag := range []string{"english", "e", "12-US", "-en"} {
		if _, err := transcribe(t, r, speech(8000), 8000, tag); !errors.Is(err, stt.ErrLanguage) {
			t.Errorf("%q: err = %v, want ErrLanguage", tag, err)
		}
	}
	if n := len(server.Requests()); n != 0 {
		t.Fatalf("%d requests for tags that are not languages", n)
	}
	// A three-letter code goes out; OpenAI (and the fake) refuse it.
	_, err := transcribe(t, r, speech(8000), 8000, "fil-PH")
	if !errors.Is(err, stt.ErrLanguage) || !strings.Contains(err.Error(), "ISO-639-1") {
		t.Errorf("fil-PH: err = %v, want ErrLanguage with the server's message", err)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		reply openaitest.Reply
		kind  error
		want  string
	}{
		{openaitest.Reply{Status: 401, Message: "Incorrect API key provided: " + key[:7] + "**********cdef. You can find your API key at https://platform.openai.com/account/api-keys."}, stt.ErrUnavailable, "401 Unauthorized: key refused: Incorrect API key provided: [redacted]"},
		{openaitest.Reply{Status: 403, Message: "key " + key + " is not allowed"}, stt.ErrUnavailable, "403 Forbidden: key refused"},
		{openaitest.Reply{Status: 404, Message: "The model `whisper-test` does not exist"}, stt.ErrUnavailable, "does not exist"},
		{openaitest.Reply{Status: 429, Message: "Rate limit reached"}, stt.ErrUnavailable, "429 Too Many Requests: Rate limit reached"},
		{openaitest.Reply{Status: 500}, stt.ErrUnavailable, "500 Internal Server Error"},
		{openaitest.Reply{Status: 503, Message: "overloaded"}, stt.ErrUnavailable, "overloaded"},
		{openaitest.Reply{Status: 400, Message: "Language 'xx' is not supported"}, stt.ErrLanguage, "400 Bad Request: Language 'xx'"},
		{openaitest.Reply{Status: 400, Message: "Audio file is too short"}, stt.ErrUnavailable, "too short"},
		{openaitest.Reply{Status: 413, Message: "Maximum content size limit (26214400) exceeded"}, stt.ErrAudioTooLong, "413"},
	} {
		r, _ := setup(t, reply(tc.reply))
		_, err := transcribe(t, r, speech(8000), 8000, "en")
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d %q: err = %v, want %v containing %q", tc.reply.Status, tc.reply.Message, err, tc.kind, tc.want)
			continue
		}
		for _, other := range []error{stt.ErrUnavailable, stt.ErrLanguage, stt.ErrAudioTooLong} {
			if other != tc.kind && errors.Is(err, other) {
				t.Errorf("%d: err = %v is also %v", tc.reply.Status, err, other)
			}
		}
		if strings.Contains(err.Error(), key[:7]) {
			t.Errorf("%d: the key shows in %q", tc.reply.Status, err)
		}
	}
}

// TestKeyNeverShown: a key of any shape is scrubbed from the server's
// message.
func TestKeyNeverShown(t *testing.T) {
	const local = "local-secret-42"
	r, _ := setup(t, reply(openaitest.Reply{Status: 401, Message: "key '" + local + "' unknown"}),
		func(c *Config) { c.APIKey = local })
	_, err := transcribe(t, r, speech(8000), 8000, "en")
	if !errors.Is(err, stt.ErrUnavailable) || strings.Contains(err.Error(), local) || !strings.Contains(err.Error(), "key refused") {
		t.Errorf("err = %v", err)
	}
}

func TestAudioTooLong(t *testing.T) {
	r, server := setup(t, reply(openaitest.Reply{Text: "ok"}))
	_, err := transcribe(t, r, make([]int16, maxSamples+1), 16000, "en")
	if !errors.Is(err, stt.ErrAudioTooLong) {
		t.Errorf("err = %v, want ErrAudioTooLong", err)
	}
	if n := len(server.Requests()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
	// The longest allowed makes a form within the API's limit, with room
	// for a long model name, and not much room to spare. (The form holds
	// the WAV as it is, so one sample stands for the rest.)
	body, _ := form(make([]int16, 1), 16000, strings.Repeat("m", 64), "en")
	if size := len(body) + 2*(maxSamples-1); size > 25<<20 || size < 25<<20-1<<10 {
		t.Errorf("form of the longest WAV is %d bytes, want just under 25 MiB", size)
	}
}

func TestEmptyAudio(t *testing.T) {
	r, server := setup(t, reply(openaitest.Reply{Text: "ok"}))
	res, err := transcribe(t, r, nil, 8000, "en")
	if err != nil || res != (stt.Result{Language: "en"}) {
		t.Errorf("res = %+v, err = %v", res, err)
	}
	if n := len(server.Requests()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

func TestTimeout(t *testing.T) {
	for name, rep := range map[string]openaitest.Reply{
		"slow": {Text: "late", Delay: time.Second},
		"hang": {Hang: true},
	} {
		r, _ := setup(t, reply(rep), func(c *Config) { c.Timeout = 100 * time.Millisecond })
		start := time.Now()
		_, err := transcribe(t, r, speech(8000), 8000, "en")
		if !errors.Is(err, stt.ErrUnavailable) || err.Error() != "stt: engine unavailable: no transcript within 100ms" {
			t.Errorf("%s: err = %v, want the timeout", name, err)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("%s: returned after %s", name, d)
		}
	}
}

func TestCancel(t *testing.T) {
	r, _ := setup(t, reply(openaitest.Reply{Hang: true}), func(c *Config) { c.Timeout = backstop })
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := r.Transcribe(ctx, speech(8000), 8000, "en")
	if !errors.Is(err, context.Canceled) || errors.Is(err, stt.ErrUnavailable) {
		t.Errorf("err = %v, want context.Canceled and no kind", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("returned %s after the cancel", d)
	}
}

func TestNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := New(Config{BaseURL: "http://" + addr + "/v1", HTTPClient: testHTTPClient(t)})
	_, err = transcribe(t, r, speech(8000), 8000, "")
	if !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "/v1") {
		t.Errorf("err = %v, want ErrUnavailable: connection refused, without the URL", err)
	}
}

func TestNotTheAPI(t *testing.T) {
	// A server on BaseURL that answers 200 with something else.
	srv := newRawServer(t, http.StatusOK, "<html>login</html>")
	r := New(Config{BaseURL: srv, HTTPClient: testHTTPClient(t)})
	_, err := transcribe(t, r, speech(8000), 8000, "")
	if !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("err = %v", err)
	}
}

// TestNoEnvironment: OPENAI_* variables change nothing; what is not
// configured is not sent.
func TestNoEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	r, server := setup(t, reply(openaitest.Reply{Text: "ok"}), func(c *Config) { c.APIKey = "" })
	if _, err := transcribe(t, r, speech(8000), 8000, ""); err != nil {
		t.Fatal(err)
	}
	if auth, ok := server.Requests()[0].Header["Authorization"]; ok {
		t.Errorf("Authorization %q sent without a configured key", auth)
	}
}

func TestDefaults(t *testing.T) {
	r := New(Config{})
	defer r.Close()
	if r.endpoint != "https://api.openai.com/v1/audio/transcriptions" || r.model != DefaultModel || r.timeout != DefaultTimeout {
		t.Errorf("endpoint %q, model %q, timeout %s", r.endpoint, r.model, r.timeout)
	}
	if got := New(Config{BaseURL: "http://x/v1/"}).endpoint; got != "http://x/v1/audio/transcriptions" {
		t.Errorf("trailing slash: endpoint %q", got)
	}
}

func TestOwnTransportClosed(t *testing.T) {
	server := openaitest.New(t, reply(openaitest.Reply{Text: "ok"}))
	r := New(Config{BaseURL: server.URL})
	t.Cleanup(r.Close)
	if _, err := transcribe(t, r, speech(8000), 8000, "en"); err != nil {
		t.Fatal(err)
	}
}
