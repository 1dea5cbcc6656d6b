package app

import (
	"log/slog"
	"testing"

	"github.com/parley-voice/parley/internal/provider/stt/sphinx"
)

func TestSphinxFlags(t *testing.T) {
	for _, n := range []int{0, 1, 4} {
		if errs := (SpeechConfig{Sphinx: SphinxConfig{Decoders: n}}).check("local", "local"); len(errs) != 0 {
			t.Errorf("--sphinx-decoders %d: %v", n, errs)
		}
	}
	if errs := (SpeechConfig{Sphinx: SphinxConfig{Decoders: -1}}).check("local", "local"); len(errs) != 1 {
		t.Errorf("--sphinx-decoders -1: %v, want one error", errs)
	}
	for _, w := range []float64{-0.1, 1, 1.5} {
		if errs := (SpeechConfig{Sphinx: SphinxConfig{GenericWeight: w}}).check("local", "local"); len(errs) != 1 {
			t.Errorf("--sphinx-generic-weight %v: %v, want one error", w, errs)
		}
	}
	for flag, want := range map[float64]float64{0: -1, 0.4: 0.4, 0.9: 0.9} {
		if errs := (SpeechConfig{Sphinx: SphinxConfig{GenericWeight: flag}}).check("local", "local"); len(errs) != 0 {
			t.Errorf("--sphinx-generic-weight %v: %v", flag, errs)
		}
		if got := (SphinxConfig{GenericWeight: flag}).genericWeight(); got != want {
			t.Errorf("--sphinx-generic-weight %v gives the recognizer %v, want %v", flag, got, want)
		}
	}
	c := Config{DataDir: t.TempDir(), Speech: SpeechConfig{Sphinx: SphinxConfig{Decoders: 3, MLLR: "/x/mllr_matrix", GenericWeight: 0.4}}}
	r, ok := c.recognizer(slog.New(slog.DiscardHandler)).(*sphinx.Recognizer)
	if !ok {
		t.Fatalf("--stt local: %T, want *sphinx.Recognizer", c.recognizer(slog.New(slog.DiscardHandler)))
	}
	if err := closeRecognizer(r); err != nil {
		t.Errorf("close: %v", err)
	}
	attrs := map[string]any{}
	kv := sttAttrs(c)
	for i := 0; i+1 < len(kv); i += 2 {
		attrs[kv[i].(string)] = kv[i+1]
	}
	if attrs["engine"] != "local" || attrs["decoders"] != 3 || attrs["mllr"] != "/x/mllr_matrix" || attrs["generic_weight"] != 0.4 {
		t.Errorf("stt attrs %v", attrs)
	}
}
