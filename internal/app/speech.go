package app

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/stt/deepgram"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/elevenlabs"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
)

// SpeechConfig holds the cloud speech engines' settings (--stt and --tts
// pick which are used; local needs none).
type SpeechConfig struct {
	DeepgramAPIKey, DeepgramBaseURL, DeepgramModel                    string
	OpenAIAPIKey, OpenAIBaseURL, OpenAISTTModel, OpenAITTSModel       string
	OpenAIVoice                                                       string
	Audio                                                             AudioAPIConfig // each side of --stt/--tts openai
	ElevenLabsAPIKey, ElevenLabsBaseURL, ElevenLabsModel, ElevenVoice string
	Sherpa                                                            SherpaConfig
	Sphinx                                                            SphinxConfig
}

func speechFlags(fs *flag.FlagSet, c *SpeechConfig) {
	fs.StringVar(&c.DeepgramAPIKey, "deepgram-api-key", "", "Deepgram key (--stt deepgram)")
	fs.StringVar(&c.DeepgramBaseURL, "deepgram-base-url", deepgram.DefaultBaseURL, "Deepgram streaming API root")
	fs.StringVar(&c.DeepgramModel, "deepgram-model", deepgram.DefaultModel, "Deepgram model")
	fs.StringVar(&c.OpenAIAPIKey, "openai-api-key", "", "OpenAI audio API key (--stt openai, --tts openai; unset: --llm-api-key for OpenAI's API or the model's host)")
	fs.StringVar(&c.OpenAIBaseURL, "openai-base-url", "https://api.openai.com/v1", "OpenAI-compatible audio API root (transcriptions and speech; --stt-base-url and --tts-base-url set each)")
	fs.StringVar(&c.OpenAISTTModel, "openai-stt-model", "gpt-4o-mini-transcribe", "transcription model (--stt openai)")
	fs.StringVar(&c.OpenAITTSModel, "openai-tts-model", "gpt-4o-mini-tts", "speech model (--tts openai)")
	fs.StringVar(&c.OpenAIVoice, "openai-voice", "alloy", "default voice for agents without voiceId (--tts openai)")
	audioAPIFlags(fs, &c.Audio)
	fs.StringVar(&c.ElevenLabsAPIKey, "elevenlabs-api-key", "", "ElevenLabs key (--tts elevenlabs)")
	fs.StringVar(&c.ElevenLabsBaseURL, "elevenlabs-base-url", elevenlabs.DefaultBaseURL, "ElevenLabs API root")
	fs.StringVar(&c.ElevenLabsModel, "elevenlabs-model", elevenlabs.DefaultModel, "ElevenLabs model")
	fs.StringVar(&c.ElevenVoice, "elevenlabs-voice", elevenlabs.DefaultVoice, "default voice id for agents without voiceId (--tts elevenlabs)")
	sherpaFlags(fs, &c.Sherpa)
	sphinxFlags(fs, &c.Sphinx)
}

// check refuses engine names it does not know and cloud engines without
// their key (OpenAI's: Config.checkAudioAPI).
func (c SpeechConfig) check(sttName, ttsName string) []error {
	var errs []error
	switch sttName {
	case "", "local":
		errs = append(errs, c.Sphinx.check()...)
	case "deepgram":
		if c.DeepgramAPIKey == "" {
			errs = append(errs, errors.New("--stt deepgram needs --deepgram-api-key"))
		}
	case "openai":
	case "sherpa":
		errs = append(errs, c.Sherpa.check()...)
	default:
		errs = append(errs, fmt.Errorf("--stt must be local, deepgram, openai or sherpa, not %q", sttName))
	}
	switch ttsName {
	case "", "local":
	case "openai":
	case "elevenlabs":
		if c.ElevenLabsAPIKey == "" {
			errs = append(errs, errors.New("--tts elevenlabs needs --elevenlabs-api-key"))
		}
	default:
		errs = append(errs, fmt.Errorf("--tts must be local, openai or elevenlabs, not %q", ttsName))
	}
	return errs
}

// recognizer is the --stt engine.
func (c Config) recognizer(log *slog.Logger) stt.Recognizer {
	s := c.Speech
	switch c.STT {
	case "deepgram":
		return deepgram.New(deepgram.Config{BaseURL: s.DeepgramBaseURL, APIKey: s.DeepgramAPIKey, Model: s.DeepgramModel})
	case "openai":
		return c.openAIRecognizer(log)
	case "sherpa":
		return s.Sherpa.recognizer()
	}
	return s.Sphinx.recognizer(c.DataDir, log)
}

// synthesizer is the --tts engine.
func (c Config) synthesizer(log *slog.Logger) tts.Synthesizer {
	s := c.Speech
	switch c.TTS {
	case "openai":
		return c.openAISynthesizer(log)
	case "elevenlabs":
		return elevenlabs.New(elevenlabs.Config{BaseURL: s.ElevenLabsBaseURL, APIKey: s.ElevenLabsAPIKey, Model: s.ElevenLabsModel,
			Voice: s.ElevenVoice, Logger: log})
	}
	return espeak.New(espeak.Config{Logger: log})
}
