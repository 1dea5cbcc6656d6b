package elevenlabs

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/parley-voice/parley/internal/provider/tts"
)

// The API's voice_settings ranges and defaults.
const (
	minSpeed, maxSpeed     = 0.7, 1.2
	defaultStability       = 0.5
	defaultSimilarityBoost = 0.75
)

// voiceID is what a voice id may look like. ElevenLabs' are 20 letters and
// digits; anything else could change the request path.
var voiceID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// pcmRates are the API's PCM output formats (pcm_<rate>, mono s16le), in
// increasing order.
var pcmRates = []int{8000, 16000, 22050, 24000, 44100}

// outputFormat picks the output_format for audio wanted at rate: the
// lowest PCM rate at or above it, so nothing is lost to resampling up,
// else the highest. It returns the format and its rate.
func outputFormat(rate int) (string, int) {
	from := pcmRates[len(pcmRates)-1]
	for _, r := range pcmRates {
		if r >= rate {
			from = r
			break
		}
	}
	return "pcm_" + strconv.Itoa(from), from
}

// voiceSettings is the BOS message's voice_settings.
type voiceSettings struct {
	Stability       float64 `json:"stability"`
	SimilarityBoost float64 `json:"similarity_boost"`
	Speed           float64 `json:"speed"`
}

// settings maps a Request to voice_settings (see the package doc).
func settings(r tts.Request) voiceSettings {
	speed := r.Speed
	if speed == 0 || math.IsNaN(speed) {
		speed = 1
	}
	stability := defaultStability
	if t := r.Temperature; t != nil && !math.IsNaN(*t) {
		stability = 1 - min(max(*t, 0), 2)/2
	}
	return voiceSettings{
		Stability:       round3(min(max(stability, 0), 1)),
		SimilarityBoost: defaultSimilarityBoost,
		Speed:           round3(min(max(speed, minSpeed), maxSpeed)),
	}
}

// round3 keeps the JSON tidy: 0.85, not 0.8500000000000001.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// v25Languages are the languages of the v2.5 models (eleven_flash_v2_5,
// eleven_turbo_v2_5): multilingual v2's 29 plus hu, no and vi.
var v25Languages = map[string]bool{
	"en": true, "ja": true, "zh": true, "de": true, "hi": true, "fr": true, "ko": true,
	"pt": true, "it": true, "es": true, "id": true, "nl": true, "tr": true, "fil": true,
	"pl": true, "sv": true, "bg": true, "ro": true, "ar": true, "cs": true, "el": true,
	"fi": true, "hr": true, "ms": true, "sk": true, "da": true, "ta": true, "uk": true,
	"ru": true, "hu": true, "no": true, "vi": true,
}

// languageAliases are tags whose language the API knows by another code.
var languageAliases = map[string]string{"nb": "no", "nn": "no", "tl": "fil"}

// takesLanguage reports whether a model accepts language_code; the API
// refuses it for the others.
func takesLanguage(model string) bool { return strings.HasSuffix(model, "_v2_5") }

// languageCode is the language_code for a BCP 47 tag and model: the
// primary subtag, lowered and aliased, or "" when there is none to send.
// dropped reports a language the model takes codes for but does not speak.
func languageCode(model, tag string) (code string, dropped bool) {
	if tag == "" || !takesLanguage(model) {
		return "", false
	}
	primary, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	primary = strings.ToLower(primary)
	if a, ok := languageAliases[primary]; ok {
		primary = a
	}
	if !v25Languages[primary] {
		return "", true
	}
	return primary, false
}

// Clean makes text fit to send: invalid UTF-8 is dropped, control
// characters become spaces (line breaks and tabs) or go, and leading and
// trailing space is trimmed.
func Clean(text string) string {
	text = strings.ToValidUTF8(text, "")
	text = strings.Map(func(c rune) rune {
		switch {
		case c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == 0x85,
			c == '\u2028', c == '\u2029':
			return ' '
		case unicode.IsControl(c), c == '\uFEFF':
			return -1
		}
		return c
	}, text)
	return strings.TrimSpace(text)
}
