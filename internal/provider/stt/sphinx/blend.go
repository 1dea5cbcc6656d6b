package sphinx

import (
	"fmt"
	"runtime"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// DefaultGenericWeight is the generic en-us trigram model's default
// weight in a domain decoder's blend ([Config.GenericWeight]). Chosen on
// held-out dental sentences in training voices over G.711 (adapt tune;
// doc.go, Tuning): 65 % of the words without the blend, 72–73 % at any
// weight from 0.2 to 0.8.
const DefaultGenericWeight = 0.4

// blend is a second language model a decoder interpolates with its own
// (-lm) word by word as it searches: P(w|h) = (1-weight)·P_own(w|h) +
// weight·P_second(w|h), each model backing off in itself. sphinxbase's
// ngram_model_set does the arithmetic, so the 27 MB generic model needs
// no converting or merging into each domain's file; each decoder reads
// its own copy (a model caches the last history it scored, so two
// decoders searching at once cannot share one).
type blend struct {
	lm     string  // the second model's file
	weight float64 // its weight, in (0, 1)
}

// blendSearch names the search a blended decoder decodes with.
const blendSearch = "blend"

// ngramAuto is NGRAM_AUTO: ngram_model_read tells ARPA from binary.
const ngramAuto = 0

// apply makes the interpolation of own (the decoder's -lm) and b's model
// the search d decodes with.
func (b blend) apply(d *decoder, own string) error {
	a := d.api
	cfg, lmath := a.getConfig(d.ps), a.getLogmath(d.ps)
	var models []uintptr
	// Each reference taken here is given up before returning: the set
	// holds its own to each model, the search its own to the set.
	defer func() {
		for _, m := range models {
			a.freeLM(m)
		}
	}()
	for _, path := range []string{own, b.lm} {
		m := a.readLM(cfg, path, ngramAuto, lmath)
		if m == 0 {
			return fmt.Errorf("%w: pocketsphinx could not read the language model %s", stt.ErrUnavailable, path)
		}
		models = append(models, m)
	}
	own0, second0 := []byte("own\x00"), []byte("second\x00")
	names := []*byte{&own0[0], &second0[0]}
	weights := []float32{float32(1 - b.weight), float32(b.weight)}
	set := a.lmSet(cfg, &models[0], &names[0], &weights[0], int32(len(models)))
	runtime.KeepAlive(names)
	runtime.KeepAlive(own0)
	runtime.KeepAlive(second0)
	if set == 0 {
		return fmt.Errorf("%w: pocketsphinx could not interpolate %s with %s", stt.ErrUnavailable, own, b.lm)
	}
	defer a.freeLM(set)
	if a.setLM(d.ps, blendSearch, set) < 0 || a.setSearch(d.ps, blendSearch) < 0 {
		return fmt.Errorf("%w: pocketsphinx could not search with %s interpolated with %s", stt.ErrUnavailable, own, b.lm)
	}
	return nil
}
