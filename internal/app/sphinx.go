package app

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/parley-voice/parley/internal/provider/stt/sphinx"
	"github.com/parley-voice/parley/internal/provider/stt/sphinx/lm"
)

// SphinxConfig is --stt local's: pocketsphinx decoders in the process.
type SphinxConfig struct {
	Decoders int
	MLLR     string
}

func sphinxFlags(fs *flag.FlagSet, c *SphinxConfig) {
	fs.IntVar(&c.Decoders, "sphinx-decoders", sphinx.DefaultDecoders(), fmt.Sprintf("--stt local: pocketsphinx decoders (utterances recognised at once; each loads in about 0.5 s on first use and holds about 90 MB; one per CPU, at most %d, by default)", sphinx.MaxDecoders))
	fs.StringVar(&c.MLLR, "sphinx-mllr", "", "--stt local: an acoustic adaptation transform for the pocketsphinx model (an mllr_matrix file); default none")
}

func (c SphinxConfig) check() []error {
	if c.Decoders < 0 {
		return []error{errors.New("--sphinx-decoders must not be negative (0: one per CPU, at most 4)")}
	}
	return nil
}

// recognizer is the local engine: its decoders are loaded on first use,
// each agent's domain model (package lm) is built under the data
// directory's cache/sphinx.
func (c SphinxConfig) recognizer(dataDir string) *sphinx.Recognizer {
	return sphinx.New(sphinx.Config{Decoders: c.Decoders, MLLR: c.MLLR, CacheDir: filepath.Join(dataDir, "cache", "sphinx"),
		Builder: sphinx.LMBuilder(lm.Options{})})
}
