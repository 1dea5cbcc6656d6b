package elevenlabs

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/elevenlabs/elevenlabstest"
)

// backstop bounds every Synthesize in these tests: a call that hangs ends
// with context.DeadlineExceeded, which no test accepts.
const backstop = 10 * time.Second

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// setup starts a fake with o and a Synthesizer for it; change applies to
// the config before New. Timeouts are generous unless a test shortens them.
func setup(t *testing.T, o elevenlabstest.Options, change ...func(*Config)) (*Synthesizer, *elevenlabstest.Server) {
	t.Helper()
	srv := elevenlabstest.New(t, o)
	cfg := Config{
		BaseURL:           srv.URL,
		APIKey:            elevenlabstest.DefaultAPIKey,
		DialTimeout:       2 * time.Second,
		FirstAudioTimeout: 2 * time.Second,
		StallTimeout:      2 * time.Second,
		Logger:            quiet(),
	}
	for _, f := range change {
		f(&cfg)
	}
	return New(cfg), srv
}

// result is what one Synthesize produced.
type result struct {
	pcm   []int16
	calls int
	stats tts.Stats
	err   error
	took  time.Duration
}

// synth runs one Synthesize under the backstop, collecting what out gets.
func synth(t *testing.T, s *Synthesizer, r tts.Request, rate int) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	var res result
	start := time.Now()
	res.stats, res.err = s.Synthesize(ctx, r, rate, func(p []int16) error {
		res.pcm = append(res.pcm, p...)
		res.calls++
		return nil
	})
	res.took = time.Since(start)
	if errors.Is(res.err, context.DeadlineExceeded) {
		t.Fatalf("Synthesize still running after %s", backstop)
	}
	return res
}

func ptr[T any](v T) *T { return &v }

func dur(n, rate int) time.Duration { return time.Duration(n) * time.Second / time.Duration(rate) }

func onlySession(t *testing.T, srv *elevenlabstest.Server) elevenlabstest.Session {
	t.Helper()
	ss := srv.Sessions()
	if len(ss) != 1 {
		t.Fatalf("%d sessions, want 1", len(ss))
	}
	return ss[0]
}

func TestMessagesOnTheWire(t *testing.T) {
	s, srv := setup(t, elevenlabstest.Options{})
	res := synth(t, s, tts.Request{Text: "  Hello\nthere. ", Language: "en-US", Speed: 1.1, Temperature: ptr(0.6)}, 16000)
	if res.err != nil {
		t.Fatal(res.err)
	}
	ss := onlySession(t, srv)
	if ss.APIKey != elevenlabstest.DefaultAPIKey {
		t.Errorf("xi-api-key %q, want the configured key", ss.APIKey)
	}
	if ss.Voice != DefaultVoice || ss.Model != DefaultModel || ss.OutputFormat != "pcm_16000" || ss.Language != "en" {
		t.Errorf("voice %q model %q format %q language %q; want %q %q pcm_16000 en",
			ss.Voice, ss.Model, ss.OutputFormat, ss.Language, DefaultVoice, DefaultModel)
	}
	if len(ss.Query) != 3 {
		t.Errorf("query %v: want model_id, output_format and language_code only", ss.Query)
	}
	want := []string{
		`{"text":" ","voice_settings":{"stability":0.7,"similarity_boost":0.75,"speed":1.1}}`,
		`{"text":"Hello there. ","flush":true}`,
		`{"text":""}`,
	}
	if len(ss.Messages) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(ss.Messages), len(want), ss.Messages)
	}
	for i, m := range ss.Messages {
		if string(m.Raw) != want[i] {
			t.Errorf("message %d:\n got %s\nwant %s", i, m.Raw, want[i])
		}
	}
	if !ss.EOS || !ss.Final {
		t.Errorf("EOS %v, final %v: want both", ss.EOS, ss.Final)
	}
	if res.stats.Characters != len("Hello there.") {
		t.Errorf("Stats.Characters %d, want %d", res.stats.Characters, len("Hello there."))
	}
}

func TestVoiceAndDefaults(t *testing.T) {
	s, srv := setup(t, elevenlabstest.Options{}, func(c *Config) { c.Model = "eleven_multilingual_v2" })
	if res := synth(t, s, tts.Request{Text: "Bonjour.", Voice: "JBFqnCBsd6RMkjVDRZzb", Language: "fr"}, 16000); res.err != nil {
		t.Fatal(res.err)
	}
	ss := onlySession(t, srv)
	if ss.Voice != "JBFqnCBsd6RMkjVDRZzb" {
		t.Errorf("voice in the path %q, want the Request's", ss.Voice)
	}
	// The API refuses language_code for models other than v2.5.
	if ss.Model != "eleven_multilingual_v2" || ss.Query.Has("language_code") {
		t.Errorf("model %q, query %v: want no language_code", ss.Model, ss.Query)
	}
	vs := ss.BOS().VoiceSettings
	if vs == nil || *vs.Stability != 0.5 || *vs.SimilarityBoost != 0.75 || *vs.Speed != 1 {
		t.Errorf("voice_settings %s: want the API defaults and speed 1", ss.BOS().Raw)
	}
}

// TestAudio checks the format asked for, the duration and the pitch after
// resampling, for rates that need none, resampling down and resampling up.
func TestAudio(t *testing.T) {
	const text = "Hello there, how are you?" // 26 runes with the trailing space
	const tone = 1000.0
	for _, c := range []struct {
		rate   int
		format string
	}{{8000, "pcm_8000"}, {16000, "pcm_16000"}, {12000, "pcm_16000"}, {24000, "pcm_24000"}, {48000, "pcm_44100"}} {
		t.Run(strconv.Itoa(c.rate), func(t *testing.T) {
			s, srv := setup(t, elevenlabstest.Options{Reply: elevenlabstest.Reply{ToneHz: tone}})
			res := synth(t, s, tts.Request{Text: text}, c.rate)
			if res.err != nil {
				t.Fatal(res.err)
			}
			ss := onlySession(t, srv)
			if ss.OutputFormat != c.format {
				t.Errorf("output_format %q, want %q", ss.OutputFormat, c.format)
			}
			want := 26 * elevenlabstest.DefaultPerChar
			got := dur(len(res.pcm), c.rate)
			if d := got - want; d < -20*time.Millisecond || d > 20*time.Millisecond {
				t.Errorf("%s of audio, want %s within a 20 ms frame", got, want)
			}
			if res.stats.Audio != got {
				t.Errorf("Stats.Audio %s, want %s (what out got)", res.stats.Audio, got)
			}
			// The middle, past the resampler's delay and the tone's ends.
			mid := res.pcm[len(res.pcm)/4 : 3*len(res.pcm)/4]
			if !audio.DetectTone(mid, c.rate, tone) || audio.ToneShare(mid, c.rate, tone) < 0.95 {
				t.Errorf("%g Hz tone lost: share %.3f", tone, audio.ToneShare(mid, c.rate, tone))
			}
			// Samples passed on unresampled would play the tone at this pitch.
			from, _ := strconv.Atoi(strings.TrimPrefix(c.format, "pcm_"))
			if from != c.rate {
				if sh := audio.ToneShare(mid, c.rate, tone*float64(from)/float64(c.rate)); sh > 0.05 {
					t.Errorf("tone at the wrong pitch: share %.3f at the unresampled frequency", sh)
				}
			}
		})
	}
}

func TestStreamsAsMessagesArrive(t *testing.T) {
	gap := 80 * time.Millisecond
	s, srv := setup(t, elevenlabstest.Options{Reply: elevenlabstest.Reply{Gap: gap}})
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	var calls []elevenlabstest.Session
	st, err := s.Synthesize(ctx, tts.Request{Text: "Hello there."}, 16000, func(p []int16) error {
		calls = append(calls, srv.Sessions()[0])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := onlySession(t, srv).Chunks // 650 ms in 100 ms messages: 7
	if total != 7 || len(calls) != total {
		t.Fatalf("%d out calls for %d messages; want one per message, 7", len(calls), total)
	}
	if first := calls[0]; first.Final || first.Chunks >= total {
		t.Errorf("first out call after %d of %d messages (final %v): want it while the server still streams", first.Chunks, total, first.Final)
	}
	if st.Audio != 650*time.Millisecond {
		t.Errorf("Stats.Audio %s, want 650ms", st.Audio)
	}
}

func TestEmptyTextConnectsNowhere(t *testing.T) {
	s, srv := setup(t, elevenlabstest.Options{})
	res := synth(t, s, tts.Request{Text: " \n\t\x00 "}, 8000)
	if res.err != nil || res.calls != 0 || res.stats != (tts.Stats{}) {
		t.Errorf("got %d calls, %+v, %v; want nothing", res.calls, res.stats, res.err)
	}
	if n := len(srv.Sessions()); n != 0 {
		t.Errorf("%d sessions, want none", n)
	}
}

func TestConcurrentUse(t *testing.T) {
	s, srv := setup(t, elevenlabstest.Options{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), backstop)
			defer cancel()
			var n int
			st, err := s.Synthesize(ctx, tts.Request{Text: "Number " + strconv.Itoa(i) + "."}, 8000, func(p []int16) error {
				n += len(p)
				return nil
			})
			if err != nil || st.Audio != dur(n, 8000) || n == 0 {
				t.Errorf("call %d: %v, %+v, %d samples", i, err, st, n)
			}
		})
	}
	wg.Wait()
	if n := len(srv.Sessions()); n != 4 {
		t.Errorf("%d sessions, want 4", n)
	}
}

func TestLanguageWarnsOnce(t *testing.T) {
	var logged []string
	var mu sync.Mutex
	h := slog.NewTextHandler(writerFunc(func(p []byte) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, string(p))
	}), &slog.HandlerOptions{Level: slog.LevelWarn})
	s, srv := setup(t, elevenlabstest.Options{}, func(c *Config) { c.Logger = slog.New(h) })
	for range 2 {
		if res := synth(t, s, tts.Request{Text: "Habari.", Language: "sw"}, 8000); res.err != nil {
			t.Fatal(res.err)
		}
	}
	for _, ss := range srv.Sessions() {
		if ss.Query.Has("language_code") {
			t.Errorf("language_code %q sent for a language flash v2.5 does not speak", ss.Language)
		}
	}
	if len(logged) != 1 {
		t.Errorf("%d warnings, want 1: %q", len(logged), logged)
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
