package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/stt/sherpa"
)

// SherpaConfig is --stt sherpa's: the operator's model directory and
// where sherpa-onnx's shared libraries are.
type SherpaConfig struct {
	ModelDir string
	LibDir   string
	Threads  int
	Language string
}

func sherpaFlags(fs *flag.FlagSet, c *SherpaConfig) {
	fs.StringVar(&c.ModelDir, "sherpa-model-dir", "", "--stt sherpa: a streaming sherpa-onnx model directory (encoder, decoder and joiner .onnx files, tokens.txt; docs/operations.md)")
	fs.StringVar(&c.LibDir, "sherpa-lib-dir", "", "--stt sherpa: directory of libsherpa-onnx-c-api.so and libonnxruntime.so "+sherpa.LayoutVersion+" (default: beside the binary, system library directories, the Go module cache)")
	fs.IntVar(&c.Threads, "sherpa-threads", sherpa.DefaultThreads, "--stt sherpa: onnxruntime threads per utterance being decoded")
	fs.StringVar(&c.Language, "sherpa-language", sherpa.DefaultLanguage, "--stt sherpa: the model's language (BCP 47); calls of agents in another language fail naming it")
}

// check refuses --stt sherpa without a usable model directory or the
// libraries, naming the flag and the file at fault. It reads the model
// files' headers and loads the libraries (not the model: that is at start).
func (c SherpaConfig) check() []error {
	if c.ModelDir == "" {
		return []error{errors.New("--stt sherpa needs --sherpa-model-dir: a streaming sherpa-onnx model directory (docs/operations.md says where to get one)")}
	}
	var errs []error
	if c.Threads < 1 {
		errs = append(errs, errors.New("--sherpa-threads must be at least 1"))
	}
	if _, err := sherpa.DetectModel(c.ModelDir); err != nil {
		errs = append(errs, fmt.Errorf("--sherpa-model-dir: %w", err))
	}
	if _, err := sherpa.LoadLibrary(c.LibDir); err != nil {
		flagName := "--sherpa-lib-dir"
		if c.LibDir == "" {
			flagName = "--stt sherpa (set --sherpa-lib-dir)"
		}
		errs = append(errs, fmt.Errorf("%s: %w", flagName, err))
	}
	return errs
}

func (c SherpaConfig) recognizer() *sherpa.Recognizer {
	return sherpa.New(sherpa.Config{ModelDir: c.ModelDir, LibDir: c.LibDir, Threads: c.Threads, Language: c.Language})
}

// modelLoader is a recognizer with a model to load before calls come
// (stt/sherpa): loading it at start turns a broken model into a refusal to
// start instead of a failure in the first call.
type modelLoader interface {
	Load(ctx context.Context) error
	Close() error
}

// loadRecognizer loads r's model if it has one, and says which.
func loadRecognizer(ctx context.Context, r stt.Recognizer, log *slog.Logger) error {
	l, ok := r.(modelLoader)
	if !ok {
		return nil
	}
	start := time.Now()
	if err := l.Load(ctx); err != nil {
		return fmt.Errorf("--stt: load the model: %w", err)
	}
	if s, ok := r.(*sherpa.Recognizer); ok {
		m, lib := s.Model(), s.Library()
		kind := string(m.Kind)
		if m.Type != "" {
			kind += " (" + m.Type + ")"
		}
		log.Info("speech to text model loaded", "engine", "sherpa", "kind", kind, "files", m.Files(),
			"library", lib.Dir(), "version", lib.Version(), "took", time.Since(start).Round(time.Millisecond).String())
	}
	return nil
}

// closeRecognizer frees r's models if it holds any (calls have ended):
// sherpa's model, pocketsphinx's decoders.
func closeRecognizer(r stt.Recognizer) error {
	if c, ok := r.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
