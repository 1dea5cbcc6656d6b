package sphinx

import (
	"context"

	"github.com/parley-voice/parley/internal/provider/stt/sphinx/lm"
)

// LMBuilder is the [ModelBuilder] Parley uses: package lm's trigram
// model of the domain's texts interpolated with its conversational
// corpus, and a dictionary with espeak-ng's guesses for words missing
// from the base one.
func LMBuilder(opt lm.Options) ModelBuilder {
	return func(ctx context.Context, texts []string, dir string) (string, string, error) {
		f, err := lm.Build(ctx, texts, dir, opt)
		return f.LM, f.Dict, err
	}
}
