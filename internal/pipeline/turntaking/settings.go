package turntaking

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
)

// Settings are an agent's turn-taking settings: its runtimeConfig's
// documented keys, defaults filled in.
type Settings struct {
	// MinSilence (endpointing.minSilenceMs) ends a turn whose words are a
	// complete sentence or question, and every turn of a recognizer
	// without partial text.
	MinSilence time.Duration
	// MaxSilence (endpointing.maxSilenceMs) is the longest the engine
	// waits: after a filler or a word that needs another after it.
	MaxSilence time.Duration
	// VADSensitivity (endpointing.vadSensitivity), 0 to 1: how far above
	// the noise floor speech must be (12 dB at 0, 3 dB at 1).
	VADSensitivity float64
	// MinWords (interruption.minWords) is how many real words caller
	// speech must hold to stop the agent, when partial text is available
	// (0: the duration threshold alone).
	MinWords int
	Filler   Filler
}

// Filler is what the agent says, or plays, while a tool keeps the caller
// waiting.
type Filler struct {
	// Enabled (filler.enabled) turns fillers on.
	Enabled bool
	// After (filler.afterMs) is how long a tool runs before the filler.
	After time.Duration
	// Phrases (filler.phrases) are said in turn, one per wait.
	Phrases []string
	// Sound (filler.sound) is SoundNone (say a phrase) or SoundSoft (play
	// a soft generated sound instead).
	Sound string
}

// Filler sounds.
const (
	SoundNone = "none"
	SoundSoft = "soft"
)

// Defaults.
const (
	DefaultMinSilence     = 300 * time.Millisecond
	DefaultMaxSilence     = 1200 * time.Millisecond
	DefaultVADSensitivity = 0.5
	DefaultMinWords       = 2
	DefaultFillerAfter    = 1500 * time.Millisecond
)

// DefaultPhrases are the filler phrases of an agent that sets none.
var DefaultPhrases = []string{"One moment.", "Let me check that.", "Just a second."}

// Limits of the documented keys.
const (
	MinSilenceLowMs, MinSilenceHighMs = 100, 3000
	MaxSilenceLowMs, MaxSilenceHighMs = 100, 5000
	MaxMinWords                       = 10
	FillerAfterLowMs, FillerAfterHigh = 200, 10000
	MaxPhrases                        = 20
	MaxPhraseLen                      = 200
)

// Defaults are the settings of an agent whose runtimeConfig sets none of
// the documented keys.
func Defaults() Settings {
	return Settings{
		MinSilence: DefaultMinSilence, MaxSilence: DefaultMaxSilence, VADSensitivity: DefaultVADSensitivity,
		MinWords: DefaultMinWords,
		Filler:   Filler{Enabled: true, After: DefaultFillerAfter, Phrases: slices.Clone(DefaultPhrases), Sound: SoundNone},
	}
}

// Parse reads the settings from an agent's runtimeConfig. A documented
// key with a bad value (an agent stored before the rule) keeps its
// default; other keys are not Parley's and are ignored.
func Parse(runtimeConfig map[string]any) Settings {
	var l invalid.List
	return read(runtimeConfig, "runtimeConfig", &l)
}

// Check records in l every documented key of runtimeConfig with a bad type
// or value, under prefix ("runtimeConfig.endpointing.minSilenceMs").
// Unknown keys are never refused: runtimeConfig is free-form.
func Check(runtimeConfig map[string]any, prefix string, l *invalid.List) {
	read(runtimeConfig, prefix, l)
}

func read(rc map[string]any, prefix string, l *invalid.List) Settings {
	s := Defaults()
	if ep, p, ok := object(rc, prefix, "endpointing", l); ok {
		if v, ok := integer(ep, p, "minSilenceMs", MinSilenceLowMs, MinSilenceHighMs, l); ok {
			s.MinSilence = ms(v)
		}
		maxSet := false
		if v, ok := integer(ep, p, "maxSilenceMs", MaxSilenceLowMs, MaxSilenceHighMs, l); ok {
			s.MaxSilence, maxSet = ms(v), true
		}
		if v, ok := number(ep, p, "vadSensitivity", 0, 1, l); ok {
			s.VADSensitivity = v
		}
		if s.MaxSilence < s.MinSilence {
			if maxSet {
				l.Add(invalid.Join(p, "maxSilenceMs"), "must be at least minSilenceMs (%d)", s.MinSilence.Milliseconds())
			}
			s.MaxSilence = s.MinSilence // a longer minimum raises the default maximum with it
		}
	}
	if in, p, ok := object(rc, prefix, "interruption", l); ok {
		if v, ok := integer(in, p, "minWords", 0, MaxMinWords, l); ok {
			s.MinWords = v
		}
	}
	if f, p, ok := object(rc, prefix, "filler", l); ok {
		if v, ok := boolean(f, p, "enabled", l); ok {
			s.Filler.Enabled = v
		}
		if v, ok := integer(f, p, "afterMs", FillerAfterLowMs, FillerAfterHigh, l); ok {
			s.Filler.After = ms(v)
		}
		if v, ok := phrases(f, p, "phrases", l); ok {
			s.Filler.Phrases = v
		}
		if v, ok := f["sound"]; ok && v != nil {
			if str, isStr := v.(string); isStr && (str == SoundNone || str == SoundSoft) {
				s.Filler.Sound = str
			} else {
				l.Add(invalid.Join(p, "sound"), "must be one of %s, %s", SoundNone, SoundSoft)
			}
		}
	}
	return s
}

func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }

// object is the object under key (null or absent: not given).
func object(m map[string]any, prefix, key string, l *invalid.List) (map[string]any, string, bool) {
	p := invalid.Join(prefix, key)
	v, ok := m[key]
	if !ok || v == nil {
		return nil, p, false
	}
	o, ok := v.(map[string]any)
	if !ok {
		l.Add(p, "must be an object")
	}
	return o, p, ok
}

// integer is the whole number under key, within lo..hi.
func integer(m map[string]any, prefix, key string, lo, hi int, l *invalid.List) (int, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false
	}
	f, isNum := toFloat(v)
	if !isNum || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		l.Add(invalid.Join(prefix, key), "must be an integer between %d and %d", lo, hi)
		return 0, false
	}
	return int(f), true
}

// number is the number under key, within lo..hi.
func number(m map[string]any, prefix, key string, lo, hi float64, l *invalid.List) (float64, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false
	}
	f, isNum := toFloat(v)
	if !isNum || !(f >= lo && f <= hi) {
		l.Add(invalid.Join(prefix, key), "must be a number between %g and %g", lo, hi)
		return 0, false
	}
	return f, true
}

func boolean(m map[string]any, prefix, key string, l *invalid.List) (bool, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		l.Add(invalid.Join(prefix, key), "must be true or false")
	}
	return b, ok
}

// phrases is the array of phrases under key: 1 to MaxPhrases strings,
// none blank, each at most MaxPhraseLen characters.
func phrases(m map[string]any, prefix, key string, l *invalid.List) ([]string, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false
	}
	p := invalid.Join(prefix, key)
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 || len(arr) > MaxPhrases {
		l.Add(p, "must be an array of 1 to %d phrases", MaxPhrases)
		return nil, false
	}
	out := make([]string, 0, len(arr))
	good := true
	for i, e := range arr {
		s, isStr := e.(string)
		if !isStr || invalid.IsBlank(s) || invalid.Len(s) > MaxPhraseLen {
			l.Add(invalid.Index(p, i), "must be a phrase of 1 to %d characters", MaxPhraseLen)
			good = false
			continue
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out, good
}

// toFloat is v as a number: JSON gives float64, code may give ints.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	}
	return 0, false
}
