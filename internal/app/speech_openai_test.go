package app

import (
	"bytes"
	"flag"
	"log/slog"
	"strings"
	"testing"

	sttopenai "github.com/parley-voice/parley/internal/provider/stt/openai"
	ttsopenai "github.com/parley-voice/parley/internal/provider/tts/openai"
)

// serveConfig parses args and env as `parley serve` does.
func serveConfig(t *testing.T, args []string, environ map[string]string) Config {
	t.Helper()
	var c Config
	fs := newFlagSet("serve", &bytes.Buffer{})
	serveFlags(fs, &c)
	if err := parse(fs, args, env(environ)); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return c
}

func TestAudioAPIFlags(t *testing.T) {
	// Defaults: both sides on --openai-base-url, streaming where offered,
	// a WAV asked for.
	c := serveConfig(t, nil, nil)
	a := c.Speech.Audio
	if c.Speech.sttBaseURL() != "https://api.openai.com/v1" || c.Speech.ttsBaseURL() != "https://api.openai.com/v1" ||
		a.STTStreaming != "auto" || a.TTSFormat != "wav" || a.TTSSampleRate != 0 {
		t.Errorf("defaults: %+v", a)
	}
	c = serveConfig(t, []string{"--openai-base-url", "http://gpu:9000/v1"}, nil)
	if c.Speech.sttBaseURL() != "http://gpu:9000/v1" || c.Speech.ttsBaseURL() != "http://gpu:9000/v1" {
		t.Errorf("the shared URL is not each side's default: %q %q", c.Speech.sttBaseURL(), c.Speech.ttsBaseURL())
	}
	// Every setting from its environment twin; a flag wins.
	c = serveConfig(t, []string{"--tts-sample-rate", "16000"}, map[string]string{
		"PARLEY_STT_BASE_URL": "http://127.0.0.1:8000/v1", "PARLEY_TTS_BASE_URL": "http://127.0.0.1:8880/v1",
		"PARLEY_STT_API_KEY": "stt-key", "PARLEY_TTS_API_KEY": "tts-key", "PARLEY_STT_STREAMING": "off",
		"PARLEY_TTS_FORMAT": "pcm", "PARLEY_TTS_SAMPLE_RATE": "22050",
	})
	want := AudioAPIConfig{STTBaseURL: "http://127.0.0.1:8000/v1", STTAPIKey: "stt-key", STTStreaming: "off",
		TTSBaseURL: "http://127.0.0.1:8880/v1", TTSAPIKey: "tts-key", TTSFormat: "pcm", TTSSampleRate: 16000}
	if c.Speech.Audio != want {
		t.Errorf("from env: %+v\nwant %+v", c.Speech.Audio, want)
	}
	if c.sttKey() != "stt-key" || c.ttsKey() != "tts-key" {
		t.Errorf("keys %q %q", c.sttKey(), c.ttsKey())
	}
}

// TestAudioKeys: each side's key is its own, else --openai-api-key, else
// --llm-api-key only for OpenAI's API or the model's own host.
func TestAudioKeys(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		stt, tts string
	}{
		{[]string{"--llm-api-key", "llm"}, "llm", "llm"}, // all on OpenAI
		{[]string{"--llm-api-key", "llm", "--stt-base-url", "http://127.0.0.1:8000/v1"}, "", "llm"},
		{[]string{"--llm-base-url", "http://gpu:11434/v1", "--llm-api-key", "llm", "--openai-base-url", "http://gpu:8000/v1"}, "llm", "llm"},
		{[]string{"--llm-base-url", "http://gpu:11434/v1", "--llm-api-key", "llm", "--openai-base-url", "http://other:8000/v1"}, "", ""},
		{[]string{"--llm-api-key", "llm", "--openai-api-key", "audio", "--tts-base-url", "http://127.0.0.1:8880/v1"}, "audio", "audio"},
		{[]string{"--openai-api-key", "audio", "--stt-api-key", "s", "--tts-api-key", "t"}, "s", "t"},
		{[]string{"--stt-base-url", "http://127.0.0.1:8000/v1", "--tts-base-url", "http://127.0.0.1:8880/v1"}, "", ""},
	} {
		c := serveConfig(t, tc.args, nil)
		if c.sttKey() != tc.stt || c.ttsKey() != tc.tts {
			t.Errorf("%v: stt key %q, tts key %q; want %q, %q", tc.args, c.sttKey(), c.ttsKey(), tc.stt, tc.tts)
		}
	}
}

func TestAudioAPIChecks(t *testing.T) {
	local := []string{"--stt", "openai", "--tts", "openai", "--stt-base-url", "http://127.0.0.1:8000/v1", "--tts-base-url", "http://127.0.0.1:8880/v1"}
	for _, tc := range []struct {
		args []string
		want string // in the error; "" = accepted
	}{
		{local, ""}, // a local stack needs no key
		{append(local, "--stt-streaming", "realtime", "--tts-format", "pcm", "--tts-sample-rate", "22050"), ""},
		{append(local, "--tts-format", "pcm"), ""},
		{[]string{"--stt", "openai", "--tts-base-url", "http://127.0.0.1:8880/v1"},
			"--stt openai needs a key for OpenAI's API (https://api.openai.com/v1): set --stt-api-key, --openai-api-key or --llm-api-key, or point --stt-base-url at a local server"},
		{[]string{"--tts", "openai", "--stt-base-url", "http://127.0.0.1:8000/v1"}, "--tts openai needs a key for OpenAI's API"},
		{[]string{"--tts", "openai", "--tts-base-url", "https://api.openai.com/v1/"}, "--tts openai needs a key"},
		{[]string{"--tts", "openai", "--tts-api-key", "k"}, ""},
		{[]string{"--stt", "openai", "--llm-api-key", "k"}, ""},
		{[]string{"--stt", "openai", "--openai-base-url", "http://127.0.0.1:8000/v1", "--stt-base-url", "https://api.openai.com/v1"}, "--stt openai needs a key"},
		{append(local, "--stt-base-url", "ws://127.0.0.1:8000/v1"), "--stt-base-url must be an http(s) URL"},
		{append(local, "--tts-base-url", "127.0.0.1:8880"), "--tts-base-url must be an http(s) URL"},
		{append(local, "--stt-streaming", "sse"), `--stt-streaming must be auto, realtime or off, not "sse"`},
		{append(local, "--tts-format", "mp3"), `--tts-format must be wav or pcm, not "mp3"`},
		{append(local, "--tts-sample-rate", "22050"), "--tts-sample-rate goes with --tts-format pcm"},
		{append(local, "--tts-format", "pcm", "--tts-sample-rate", "-1"), "--tts-sample-rate must be between 1 and 384000"},
		// Without --stt openai the cloud default needs nothing.
		{[]string{"--stt-base-url", "https://api.openai.com/v1"}, ""},
	} {
		var c Config
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		serveFlags(fs, &c)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := c.check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestAudioAPIWiring: the engines get each side's settings.
func TestAudioAPIWiring(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	c := serveConfig(t, []string{"--stt", "openai", "--tts", "openai", "--stt-base-url", "http://127.0.0.1:8000/v1",
		"--tts-base-url", "http://127.0.0.1:8880/v1", "--tts-format", "pcm", "--tts-sample-rate", "22050"}, nil)
	if _, ok := c.recognizer(log).(*sttopenai.Streamer); !ok {
		t.Errorf("--stt-streaming auto: %T, want a Streamer", c.recognizer(log))
	}
	if _, ok := c.synthesizer(log).(*ttsopenai.Synthesizer); !ok {
		t.Errorf("--tts openai: %T", c.synthesizer(log))
	}
	c.Speech.Audio.STTStreaming = "off"
	if _, ok := c.recognizer(log).(*sttopenai.Recognizer); !ok {
		t.Errorf("--stt-streaming off: %T, want the whole-utterance Recognizer", c.recognizer(log))
	}
	attrs := func(kv []any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	stt, tts := attrs(sttAttrs(c)), attrs(ttsAttrs(c))
	if stt["base_url"] != "http://127.0.0.1:8000/v1" || stt["api_key"] != "unset" || stt["streaming"] != "off" {
		t.Errorf("stt attrs %v", stt)
	}
	if tts["base_url"] != "http://127.0.0.1:8880/v1" || tts["format"] != "pcm" || tts["sample_rate"] != "22050" || tts["api_key"] != "unset" {
		t.Errorf("tts attrs %v", tts)
	}
}
