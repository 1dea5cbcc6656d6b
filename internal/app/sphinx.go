package app

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"

	"github.com/parley-voice/parley/internal/provider/stt/sphinx"
	"github.com/parley-voice/parley/internal/provider/stt/sphinx/lm"
)

// SphinxConfig is --stt local's: pocketsphinx decoders in the process.
type SphinxConfig struct {
	Decoders  int
	MLLR      string
	PhoneMLLR string
	// GenericWeight is the generic model's weight in each agent's
	// language model; 0 none.
	GenericWeight float64
}

func sphinxFlags(fs *flag.FlagSet, c *SphinxConfig) {
	fs.IntVar(&c.Decoders, "sphinx-decoders", sphinx.DefaultDecoders(), fmt.Sprintf("--stt local: pocketsphinx decoders, utterances recognised at once, about 90 MB each (default: one per CPU, at most %d)", sphinx.MaxDecoders))
	fs.StringVar(&c.MLLR, "sphinx-mllr", "", "--stt local: an acoustic adaptation transform for the pocketsphinx model (an mllr_matrix file); default none")
	fs.Float64Var(&c.GenericWeight, "sphinx-generic-weight", sphinx.DefaultGenericWeight, "--stt local: weight of the generic English language model blended into each agent's (0 to below 1; 0: an agent decoder is 30 MB smaller)")
	fs.StringVar(&c.PhoneMLLR, "sphinx-phone-mllr", "builtin", "--stt local: acoustic adaptation for narrowband (G.711) legs: builtin (Parley's, trained on phone audio), none, or an mllr_matrix file")
}

func (c SphinxConfig) check() []error {
	var errs []error
	if c.Decoders < 0 {
		errs = append(errs, errors.New("--sphinx-decoders must not be negative (0: one per CPU, at most 4)"))
	}
	if c.GenericWeight < 0 || c.GenericWeight >= 1 || math.IsNaN(c.GenericWeight) {
		errs = append(errs, fmt.Errorf("--sphinx-generic-weight %v: it must be at least 0 (none) and below 1", c.GenericWeight))
	}
	return errs
}

// recognizer is the local engine: its decoders are loaded on first use,
// each agent's domain model (package lm) is built under the data
// directory's cache/sphinx.
func (c SphinxConfig) recognizer(dataDir string, log *slog.Logger) *sphinx.Recognizer {
	cache := filepath.Join(dataDir, "cache", "sphinx")
	narrow := c.PhoneMLLR
	var narrowOpts []string
	switch narrow {
	case "none":
		narrow = ""
	case "builtin", "":
		// The transform and the cepstral mean of its training audio,
		// where a new decoder's live mean starts.
		var err error
		if narrow, narrowOpts, err = sphinx.WritePhoneAdaptation(cache, sphinx.DefaultModelDir); err != nil {
			log.Warn("speech to text: the phone adaptation could not be written whole; G.711 legs are heard without what is missing", "err", err)
		}
	}
	return sphinx.New(sphinx.Config{Decoders: c.Decoders, MLLR: c.MLLR, NarrowbandMLLR: narrow, NarrowbandOptions: narrowOpts,
		CacheDir: cache, GenericWeight: c.genericWeight(), Builder: sphinx.LMBuilder(lm.Options{})})
}

// genericWeight is --sphinx-generic-weight as sphinx.Config takes it:
// the flag's 0 (none) is the Config's -1, since the Config's zero is its
// default.
func (c SphinxConfig) genericWeight() float64 {
	if c.GenericWeight == 0 {
		return -1
	}
	return c.GenericWeight
}
