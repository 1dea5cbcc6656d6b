package turntaking

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
)

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// fields are the paths Check names for rc.
func fields(rc map[string]any) []string {
	var l invalid.List
	Check(rc, "runtimeConfig", &l)
	var e *invalid.Error
	if !errors.As(l.Err(), &e) {
		return nil
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Name)
	}
	return out
}

func TestDefaults(t *testing.T) {
	for _, rc := range []string{`{}`, `{"other":{"x":1}}`, `{"endpointing":null,"interruption":{},"filler":{"phrases":null}}`} {
		s := Parse(decode(t, rc))
		d := Defaults()
		if s.MinSilence != d.MinSilence || s.MaxSilence != d.MaxSilence || s.VADSensitivity != d.VADSensitivity ||
			s.MinWords != d.MinWords || !s.Filler.Enabled || s.Filler.After != d.Filler.After ||
			!slices.Equal(s.Filler.Phrases, DefaultPhrases) || s.Filler.Sound != SoundNone {
			t.Errorf("Parse(%s) = %+v, want the defaults", rc, s)
		}
		if f := fields(decode(t, rc)); f != nil {
			t.Errorf("Check(%s) refused %q", rc, f)
		}
	}
	if Parse(nil).MinSilence != DefaultMinSilence {
		t.Error("a nil runtimeConfig must give the defaults")
	}
}

func TestParseEveryKey(t *testing.T) {
	s := Parse(decode(t, `{"endpointing":{"minSilenceMs":250,"maxSilenceMs":2000,"vadSensitivity":0.8},
		"interruption":{"minWords":3},
		"filler":{"enabled":false,"afterMs":800,"phrases":[" Hang on. ","One sec."],"sound":"soft"},
		"unknown":[1,2]}`))
	if s.MinSilence != 250*time.Millisecond || s.MaxSilence != 2*time.Second || s.VADSensitivity != 0.8 || s.MinWords != 3 {
		t.Errorf("settings %+v", s)
	}
	if f := s.Filler; f.Enabled || f.After != 800*time.Millisecond || !slices.Equal(f.Phrases, []string{"Hang on.", "One sec."}) || f.Sound != SoundSoft {
		t.Errorf("filler %+v", f)
	}
	// A minimum above the default maximum raises the maximum with it.
	if s := Parse(decode(t, `{"endpointing":{"minSilenceMs":1500}}`)); s.MaxSilence != 1500*time.Millisecond {
		t.Errorf("max %v with min 1500 ms", s.MaxSilence)
	}
	if s := Parse(map[string]any{"interruption": map[string]any{"minWords": 0}}); s.MinWords != 0 {
		t.Errorf("minWords 0 (Go int) gave %d", s.MinWords)
	}
}

func TestCheckNamesEveryBadKey(t *testing.T) {
	for _, c := range []struct {
		rc   string
		want []string
	}{
		{`{"endpointing":5}`, []string{"runtimeConfig.endpointing"}},
		{`{"endpointing":{"minSilenceMs":99}}`, []string{"runtimeConfig.endpointing.minSilenceMs"}},
		{`{"endpointing":{"minSilenceMs":3001}}`, []string{"runtimeConfig.endpointing.minSilenceMs"}},
		{`{"endpointing":{"minSilenceMs":250.5}}`, []string{"runtimeConfig.endpointing.minSilenceMs"}},
		{`{"endpointing":{"minSilenceMs":"250"}}`, []string{"runtimeConfig.endpointing.minSilenceMs"}},
		{`{"endpointing":{"maxSilenceMs":5001}}`, []string{"runtimeConfig.endpointing.maxSilenceMs"}},
		{`{"endpointing":{"minSilenceMs":800,"maxSilenceMs":500}}`, []string{"runtimeConfig.endpointing.maxSilenceMs"}},
		{`{"endpointing":{"vadSensitivity":1.01}}`, []string{"runtimeConfig.endpointing.vadSensitivity"}},
		{`{"endpointing":{"vadSensitivity":-0.1}}`, []string{"runtimeConfig.endpointing.vadSensitivity"}},
		{`{"endpointing":{"vadSensitivity":true}}`, []string{"runtimeConfig.endpointing.vadSensitivity"}},
		{`{"interruption":[]}`, []string{"runtimeConfig.interruption"}},
		{`{"interruption":{"minWords":11}}`, []string{"runtimeConfig.interruption.minWords"}},
		{`{"interruption":{"minWords":-1}}`, []string{"runtimeConfig.interruption.minWords"}},
		{`{"filler":"soft"}`, []string{"runtimeConfig.filler"}},
		{`{"filler":{"enabled":"yes"}}`, []string{"runtimeConfig.filler.enabled"}},
		{`{"filler":{"afterMs":199}}`, []string{"runtimeConfig.filler.afterMs"}},
		{`{"filler":{"afterMs":10001}}`, []string{"runtimeConfig.filler.afterMs"}},
		{`{"filler":{"phrases":[]}}`, []string{"runtimeConfig.filler.phrases"}},
		{`{"filler":{"phrases":"One moment."}}`, []string{"runtimeConfig.filler.phrases"}},
		{`{"filler":{"phrases":["ok"," ",3]}}`, []string{"runtimeConfig.filler.phrases[1]", "runtimeConfig.filler.phrases[2]"}},
		{`{"filler":{"sound":"loud"}}`, []string{"runtimeConfig.filler.sound"}},
		{`{"endpointing":{"minSilenceMs":0,"vadSensitivity":2},"interruption":{"minWords":"2"},"filler":{"sound":1}}`, []string{
			"runtimeConfig.endpointing.minSilenceMs", "runtimeConfig.endpointing.vadSensitivity",
			"runtimeConfig.interruption.minWords", "runtimeConfig.filler.sound"}},
	} {
		if got := fields(decode(t, c.rc)); !slices.Equal(got, c.want) {
			t.Errorf("Check(%s) named %q, want %q", c.rc, got, c.want)
		}
	}
	// Limits are inclusive.
	ok := `{"endpointing":{"minSilenceMs":100,"maxSilenceMs":5000,"vadSensitivity":0},"interruption":{"minWords":10},
		"filler":{"afterMs":10000,"phrases":["x"],"sound":"none","enabled":true}}`
	if got := fields(decode(t, ok)); got != nil {
		t.Errorf("Check refused %q of %s", got, ok)
	}
}

// A stored agent whose documented keys are bad (kept from before the
// rule) runs with the defaults for those keys.
func TestParseKeepsDefaultsForBadValues(t *testing.T) {
	s := Parse(decode(t, `{"endpointing":{"minSilenceMs":"fast","maxSilenceMs":900},"filler":{"phrases":["ok",""],"afterMs":50}}`))
	if s.MinSilence != DefaultMinSilence || s.MaxSilence != 900*time.Millisecond {
		t.Errorf("silences %v..%v", s.MinSilence, s.MaxSilence)
	}
	if !slices.Equal(s.Filler.Phrases, DefaultPhrases) || s.Filler.After != DefaultFillerAfter {
		t.Errorf("filler %+v", s.Filler)
	}
}

// runtimeConfig is a client's JSON: whatever it holds, Check and Parse do
// not panic, and the settings keep their invariants.
func FuzzRuntimeConfig(f *testing.F) {
	for _, s := range []string{`{}`, `{"endpointing":{"minSilenceMs":250,"maxSilenceMs":1000,"vadSensitivity":0.5}}`,
		`{"interruption":{"minWords":2}}`, `{"filler":{"afterMs":1500,"phrases":["One moment."],"sound":"soft"}}`,
		`{"endpointing":{"minSilenceMs":3000},"filler":{"phrases":[null,1,"x"]}}`, `{"endpointing":[],"filler":{"enabled":0}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var rc map[string]any
		if json.Unmarshal(data, &rc) != nil {
			return
		}
		var l invalid.List
		Check(rc, "runtimeConfig", &l)
		s := Parse(rc)
		if s.MinSilence <= 0 || s.MaxSilence < s.MinSilence || s.VADSensitivity < 0 || s.VADSensitivity > 1 ||
			s.MinWords < 0 || s.MinWords > MaxMinWords || s.Filler.After <= 0 || len(s.Filler.Phrases) == 0 ||
			(s.Filler.Sound != SoundNone && s.Filler.Sound != SoundSoft) {
			t.Fatalf("Parse(%s) = %+v", data, s)
		}
		if l.Empty() {
			// Accepted settings are exactly what runs.
			for _, p := range s.Filler.Phrases {
				if p == "" {
					t.Fatalf("an accepted runtimeConfig gave an empty phrase: %s", data)
				}
			}
		}
	})
}
