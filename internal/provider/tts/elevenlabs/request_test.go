package elevenlabs

import (
	"math"
	"strconv"
	"testing"

	"github.com/parley-voice/parley/internal/provider/tts"
)

func TestSettings(t *testing.T) {
	for _, c := range []struct {
		speed     float64
		temp      *float64
		stability float64
		wantSpeed float64
	}{
		{0, nil, 0.5, 1},
		{1, ptr(0.0), 1, 1},
		{1.1, ptr(0.3), 0.85, 1.1},
		{0.5, ptr(1.0), 0.5, 0.7}, // the API's floor
		{1.5, ptr(2.0), 0, 1.2},   // and ceiling
		{0.9, ptr(3.0), 0, 0.9},   // temperature clamped to 0..2
		{1, ptr(-1.0), 1, 1},      // likewise
		{math.NaN(), ptr(math.NaN()), 0.5, 1},
	} {
		got := settings(tts.Request{Speed: c.speed, Temperature: c.temp})
		want := voiceSettings{Stability: c.stability, SimilarityBoost: 0.75, Speed: c.wantSpeed}
		if got != want {
			t.Errorf("Speed %v Temperature %v: %+v, want %+v", c.speed, deref(c.temp), got, want)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestOutputFormat(t *testing.T) {
	for rate, want := range map[int]string{
		1: "pcm_8000", 8000: "pcm_8000", 8001: "pcm_16000", 11025: "pcm_16000", 16000: "pcm_16000",
		22050: "pcm_22050", 24000: "pcm_24000", 32000: "pcm_44100", 44100: "pcm_44100", 48000: "pcm_44100",
	} {
		if got, from := outputFormat(rate); got != want || "pcm_"+strconv.Itoa(from) != want {
			t.Errorf("outputFormat(%d) = %s, %d; want %s", rate, got, from, want)
		}
	}
}

func TestLanguageCode(t *testing.T) {
	for _, c := range []struct {
		model, tag, want string
		dropped          bool
	}{
		{"eleven_flash_v2_5", "", "", false},
		{"eleven_flash_v2_5", "en", "en", false},
		{"eleven_flash_v2_5", "en-US", "en", false},
		{"eleven_turbo_v2_5", "PT_br", "pt", false},
		{"eleven_flash_v2_5", "nb-NO", "no", false},
		{"eleven_flash_v2_5", "fil", "fil", false},
		{"eleven_flash_v2_5", "tl", "fil", false},
		{"eleven_flash_v2_5", "sw", "", true},
		{"eleven_flash_v2_5", "-", "", true},
		{"eleven_multilingual_v2", "fr", "", false},
		{"eleven_flash_v2", "en", "", false},
	} {
		got, dropped := languageCode(c.model, c.tag)
		if got != c.want || dropped != c.dropped {
			t.Errorf("languageCode(%q, %q) = %q, %v; want %q, %v", c.model, c.tag, got, dropped, c.want, c.dropped)
		}
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"  Hello\nthere.\t":       "Hello there.",
		"a\x00b\x1bc\uFEFF":       "abc",
		"bad \xff utf-8":          "bad  utf-8",
		"line\u2028separator\r\n": "line separator",
		"\n\n":                    "",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"wss://api.elevenlabs.io":    "wss://api.elevenlabs.io",
		"https://api.elevenlabs.io/": "wss://api.elevenlabs.io",
		"http://127.0.0.1:9/proxy/":  "ws://127.0.0.1:9/proxy",
		"ws://[::1]:8080":            "ws://[::1]:8080",
	} {
		if got, err := baseURL(in); err != nil || got != want {
			t.Errorf("baseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"api.elevenlabs.io", "ftp://x", "wss://", "wss://u:p@host", "wss://h/#f", "::"} {
		if got, err := baseURL(in); err == nil {
			t.Errorf("baseURL(%q) = %q, want an error", in, got)
		}
	}
}

func TestStreamURL(t *testing.T) {
	s := New(Config{BaseURL: "https://example.test/el", Model: "eleven_turbo_v2_5", Logger: quiet()})
	got := s.streamURL("abc_DEF-1", "pcm_16000", "de")
	want := "wss://example.test/el/v1/text-to-speech/abc_DEF-1/stream-input?language_code=de&model_id=eleven_turbo_v2_5&output_format=pcm_16000"
	if got != want {
		t.Errorf("streamURL:\n got %s\nwant %s", got, want)
	}
}
