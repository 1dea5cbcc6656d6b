package sphinx

import (
	"context"
	"testing"

	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/stt/sphinx/lm"
)

// The generic model blended into a domain's lets the domain's decoders
// hear everyday English the agent's texts never use: the same sentences
// have more words right with the blend than without it (measured on these
// six in espeak-ng at 16 kHz: 43 % without, 60 % with).
func TestGenericBlend(t *testing.T) {
	need(t)
	t.Parallel()
	everyday := []string{
		"we had a great time at the party last night",
		"my brother lives in a small town near the river",
		"please send me the report before the meeting",
		"what time does the train leave tomorrow morning",
		"i think it is going to rain this afternoon",
		"she bought a new car for her son",
	}
	acc := map[bool]float64{}
	for _, blended := range []bool{false, true} {
		weight := -1.0 // none
		if blended {
			weight = 0 // the default
		}
		r := New(Config{Builder: LMBuilder(lm.Options{}), CacheDir: t.TempDir(), GenericWeight: weight, DomainDecoders: 1})
		defer r.Close()
		a, err := r.Adapt(context.Background(), stt.Domain{Key: "dental", Texts: dental})
		if err != nil {
			t.Fatal(err)
		}
		var scores []scored
		for _, text := range everyday {
			pcm, rate := said(t, text)
			res, err := a.Transcribe(context.Background(), wideband(pcm, rate), 16000, "en")
			if err != nil {
				t.Fatal(err)
			}
			e, n := wordErrors(text, res.Text)
			scores = append(scores, scored{text, res.Text, e, n})
			t.Logf("blended %v: %q -> %q", blended, text, res.Text)
		}
		acc[blended] = accuracy(scores)
	}
	t.Logf("word accuracy: %.0f%% without the blend, %.0f%% with it", 100*acc[false], 100*acc[true])
	if acc[true] <= acc[false] {
		t.Errorf("word accuracy %.0f%% with the generic model blended in, %.0f%% without: want more with it", 100*acc[true], 100*acc[false])
	}
}

// A generic weight of 1 or more would leave the domain's model nothing.
func TestGenericWeightBounds(t *testing.T) {
	for _, w := range []float64{1, 1.5} {
		if err := New(Config{GenericWeight: w}).checkOptions(); err == nil {
			t.Errorf("GenericWeight %v accepted", w)
		}
	}
	if b := New(Config{}).blend(); b == nil || b.weight != DefaultGenericWeight {
		t.Errorf("default blend %+v, want the generic model at %v", b, DefaultGenericWeight)
	}
	if b := New(Config{GenericWeight: -1}).blend(); b != nil {
		t.Errorf("negative weight: blend %+v, want none", b)
	}
}
