package app

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/parley-voice/parley/internal/provider/stt"
	sttopenai "github.com/parley-voice/parley/internal/provider/stt/openai"
	"github.com/parley-voice/parley/internal/provider/tts"
	ttsopenai "github.com/parley-voice/parley/internal/provider/tts/openai"
)

// AudioAPIConfig holds the settings of each side of --stt openai and
// --tts openai: its own API root and key (a speech-to-text server and a
// speech server are often two programs), defaulting to the shared
// --openai-base-url and --openai-api-key, and how each speaks.
type AudioAPIConfig struct {
	STTBaseURL, STTAPIKey, STTStreaming string
	TTSBaseURL, TTSAPIKey, TTSFormat    string
	TTSSampleRate                       int
}

func audioAPIFlags(fs *flag.FlagSet, c *AudioAPIConfig) {
	fs.StringVar(&c.STTBaseURL, "stt-base-url", "", "OpenAI-compatible API root for --stt openai, e.g. http://127.0.0.1:8000/v1 for speaches (unset: --openai-base-url)")
	fs.StringVar(&c.STTAPIKey, "stt-api-key", "", "key for --stt-base-url (unset: --openai-api-key; a local server needs none)")
	fs.StringVar(&c.STTStreaming, "stt-streaming", string(sttopenai.StreamingAuto), "--stt openai: auto (realtime transcription while the caller speaks where the server offers it, else whole utterances), realtime or off")
	fs.StringVar(&c.TTSBaseURL, "tts-base-url", "", "OpenAI-compatible API root for --tts openai, e.g. http://127.0.0.1:8880/v1 for Kokoro-FastAPI (unset: --openai-base-url)")
	fs.StringVar(&c.TTSAPIKey, "tts-api-key", "", "key for --tts-base-url (unset: --openai-api-key; a local server needs none)")
	fs.StringVar(&c.TTSFormat, "tts-format", ttsopenai.FormatWAV, "--tts openai: wav (the answer's header says its sample rate) or pcm (raw samples at --tts-sample-rate)")
	fs.IntVar(&c.TTSSampleRate, "tts-sample-rate", 0, "--tts openai with --tts-format pcm: the server's sample rate, asked for and assumed (0: 24000, OpenAI's, not asked)")
}

// openAIHost is OpenAI's own API, which takes no request without a key.
const openAIHost = "api.openai.com"

// sttBaseURL and ttsBaseURL are each side's API root.
func (s SpeechConfig) sttBaseURL() string { return cmp.Or(s.Audio.STTBaseURL, s.OpenAIBaseURL) }
func (s SpeechConfig) ttsBaseURL() string { return cmp.Or(s.Audio.TTSBaseURL, s.OpenAIBaseURL) }

// sttKey and ttsKey are the keys each side sends.
func (c Config) sttKey() string { return c.audioKey(c.Speech.Audio.STTAPIKey, c.Speech.sttBaseURL()) }
func (c Config) ttsKey() string { return c.audioKey(c.Speech.Audio.TTSAPIKey, c.Speech.ttsBaseURL()) }

// audioKey is the key for the audio API at base: the side's own, else
// --openai-api-key, else --llm-api-key where that key belongs (OpenAI's
// API, or the model's own host), so no key goes to a server it was not
// meant for.
func (c Config) audioKey(own, base string) string {
	if own != "" {
		return own
	}
	if c.Speech.OpenAIAPIKey != "" {
		return c.Speech.OpenAIAPIKey
	}
	if host := hostOf(base); host != "" && (host == openAIHost || host == hostOf(c.LLMBaseURL)) {
		return c.LLMAPIKey
	}
	return ""
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// checkAudioAPI refuses what --stt openai and --tts openai cannot work
// with: a URL that is not http(s), OpenAI's API without a key, an unknown
// streaming mode or format.
func (c Config) checkAudioAPI() []error {
	s, a := c.Speech, c.Speech.Audio
	var errs []error
	for flagName, u := range map[string]string{"--openai-base-url": s.OpenAIBaseURL, "--stt-base-url": a.STTBaseURL, "--tts-base-url": a.TTSBaseURL} {
		if u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			errs = append(errs, errors.New(flagName+" must be an http(s) URL"))
		}
	}
	needsKey := func(side, base, key string) {
		if key == "" && hostOf(base) == openAIHost {
			errs = append(errs, fmt.Errorf("--%[1]s openai needs a key for OpenAI's API (%[2]s): set --%[1]s-api-key, --openai-api-key or --llm-api-key, "+
				"or point --%[1]s-base-url at a local server, which needs none", side, base))
		}
	}
	if c.STT == "openai" {
		needsKey("stt", s.sttBaseURL(), c.sttKey())
	}
	if c.TTS == "openai" {
		needsKey("tts", s.ttsBaseURL(), c.ttsKey())
	}
	switch sttopenai.Streaming(a.STTStreaming) {
	case "", sttopenai.StreamingAuto, sttopenai.StreamingRealtime, sttopenai.StreamingOff:
	default:
		errs = append(errs, fmt.Errorf("--stt-streaming must be auto, realtime or off, not %q", a.STTStreaming))
	}
	switch a.TTSFormat {
	case "", ttsopenai.FormatWAV:
		if a.TTSSampleRate != 0 {
			errs = append(errs, errors.New("--tts-sample-rate goes with --tts-format pcm: a WAV's header says its rate"))
		}
	case ttsopenai.FormatPCM:
		if a.TTSSampleRate < 0 || a.TTSSampleRate > 384000 {
			errs = append(errs, errors.New("--tts-sample-rate must be between 1 and 384000 Hz (0: 24000)"))
		}
	default:
		errs = append(errs, fmt.Errorf("--tts-format must be wav or pcm, not %q", a.TTSFormat))
	}
	return errs
}

// openAIRecognizer is --stt openai: streaming unless --stt-streaming off.
func (c Config) openAIRecognizer(log *slog.Logger) stt.Recognizer {
	s := c.Speech
	cfg := sttopenai.Config{BaseURL: s.sttBaseURL(), APIKey: c.sttKey(), Model: s.OpenAISTTModel,
		Streaming: sttopenai.Streaming(s.Audio.STTStreaming), Logger: log}
	if cfg.Streaming == sttopenai.StreamingOff {
		return sttopenai.New(cfg)
	}
	return sttopenai.NewStreamer(cfg)
}

// openAISynthesizer is --tts openai.
func (c Config) openAISynthesizer(log *slog.Logger) tts.Synthesizer {
	s := c.Speech
	return ttsopenai.New(ttsopenai.Config{BaseURL: s.ttsBaseURL(), APIKey: c.ttsKey(), Model: s.OpenAITTSModel, Voice: s.OpenAIVoice,
		Format: s.Audio.TTSFormat, PCMRate: s.Audio.TTSSampleRate, Logger: log})
}

func (c Config) openAISTTAttrs() []any {
	s := c.Speech
	return []any{"engine", "openai", "base_url", redactURL(s.sttBaseURL()), "model", s.OpenAISTTModel,
		"api_key", setOrUnset(c.sttKey()), "streaming", s.Audio.STTStreaming}
}

func (c Config) openAITTSAttrs() []any {
	s := c.Speech
	rate := "from the WAV header"
	if s.Audio.TTSFormat == ttsopenai.FormatPCM {
		rate = fmt.Sprint(cmp.Or(s.Audio.TTSSampleRate, ttsopenai.Rate))
	}
	return []any{"engine", "openai", "base_url", redactURL(s.ttsBaseURL()), "model", s.OpenAITTSModel, "voice", s.OpenAIVoice,
		"format", s.Audio.TTSFormat, "sample_rate", rate, "api_key", setOrUnset(c.ttsKey())}
}
