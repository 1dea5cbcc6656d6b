package sherpa

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
)

const (
	// DefaultLanguage is the language assumed of a model when Config names
	// none: the streaming models most operators start with are English.
	DefaultLanguage = "en"
	// DefaultThreads is onnxruntime's threads per decoding call: calls
	// decode side by side, each on its own goroutine, so one thread each
	// spreads calls over the cores.
	DefaultThreads = 1

	// The features sherpa-onnx's published models take: 80 log-mel bins
	// of 16 kHz audio. Audio at another rate is resampled first.
	featureRate = 16000
	featureDim  = 80
)

// Config configures a Recognizer.
type Config struct {
	// ModelDir is the operator's model directory (see [DetectModel]).
	ModelDir string
	// LibDir holds libsherpa-onnx-c-api.so and libonnxruntime.so; "" looks
	// in [SearchDirs].
	LibDir string
	// Threads is onnxruntime's threads per decoding call (default 1).
	Threads int
	// Language is the model's language, BCP 47 (default "en"): a call in
	// another language is [stt.ErrLanguage].
	Language string
}

// Recognizer is a streaming [stt.Recognizer] backed by sherpa-onnx. One
// model, loaded once, serves every call: each utterance is a sherpa-onnx
// stream decoded on the goroutine that writes it. It is safe for
// concurrent use.
type Recognizer struct {
	c Config

	mu      sync.Mutex
	tried   bool  // Load ran (its outcome is kept: a model does not fix itself)
	err     error // why it failed
	lib     *Library
	model   Model
	handle  uintptr // the C recognizer
	closed  bool
	streams sync.WaitGroup // open streams; Close waits for them
}

var _ stt.Streamer = (*Recognizer)(nil)

// New returns a Recognizer for c. It loads nothing: [Recognizer.Load] does
// (and the first utterance, if Load was not called).
func New(c Config) *Recognizer {
	if c.Threads <= 0 {
		c.Threads = DefaultThreads
	}
	if c.Language == "" {
		c.Language = DefaultLanguage
	}
	return &Recognizer{c: c}
}

// Check tells whether c can run without loading the model: the directory
// holds a layout DetectModel accepts and the libraries load at the right
// version. Errors wrap stt.ErrUnavailable (and [ErrModel] or
// [ErrNoLibrary]).
func Check(c Config) (Model, *Library, error) {
	m, err := DetectModel(c.ModelDir)
	if err != nil {
		return Model{}, nil, fmt.Errorf("%w: %w", stt.ErrUnavailable, err)
	}
	lib, err := LoadLibrary(c.LibDir)
	if err != nil {
		return m, nil, err
	}
	return m, lib, nil
}

// Load checks the configuration (see [Check]) and loads the model into
// the library: seconds for a large model, so a server calls it at start.
// Once it has run, later calls return its outcome.
func (r *Recognizer) Load(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("%w: sherpa: recognizer closed", stt.ErrUnavailable)
	}
	if r.tried {
		return r.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.tried = true
	m, lib, err := Check(r.c)
	var h uintptr
	if err == nil {
		h, err = createRecognizer(lib, m, r.c.Threads)
	}
	if err != nil {
		r.err = err
		return err
	}
	r.model, r.lib, r.handle = m, lib, h
	return nil
}

// Model is the model loaded (the zero Model before a successful Load).
func (r *Recognizer) Model() Model {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.model
}

// Library is the library loaded (nil before a successful Load).
func (r *Recognizer) Library() *Library {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lib
}

// Close waits for the open streams to close, then frees the model.
func (r *Recognizer) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	h := r.handle
	r.handle = 0
	r.mu.Unlock()
	r.streams.Wait()
	if h != 0 {
		r.lib.api.destroyRecognizer(h)
	}
	return nil
}

// createRecognizer gives the library the model m. The library checks that
// the files exist and answers NULL if not (its reason goes to stderr);
// what it cannot survive (a file onnxruntime cannot parse, metadata
// missing) DetectModel has refused before.
func createRecognizer(lib *Library, m Model, threads int) (uintptr, error) {
	var keep cStrings
	cfg := recognizerConfig{
		feat:           featureConfig{sampleRate: featureRate, featureDim: featureDim},
		decodingMethod: keep.of("greedy_search"),
		maxActivePaths: 4,
	}
	cfg.model.tokens = keep.of(m.Tokens)
	cfg.model.numThreads = int32(threads)
	cfg.model.provider = keep.of("cpu")
	cfg.model.modelType = keep.of(m.Type)
	switch m.Kind {
	case Transducer:
		cfg.model.transducer = transducerConfig{encoder: keep.of(m.Encoder), decoder: keep.of(m.Decoder), joiner: keep.of(m.Joiner)}
	case Paraformer:
		cfg.model.paraformer = paraformerConfig{encoder: keep.of(m.Encoder), decoder: keep.of(m.Decoder)}
	case Zipformer2CTC:
		cfg.model.zipformer2CTC.model = keep.of(m.CTC)
	case NeMoCTC:
		cfg.model.nemoCTC.model = keep.of(m.CTC)
	default:
		return 0, fmt.Errorf("%w: sherpa: unknown model kind %q", stt.ErrUnavailable, m.Kind)
	}
	h := lib.api.createRecognizer(&cfg)
	runtime.KeepAlive(&cfg)
	runtime.KeepAlive(keep)
	if h == 0 {
		return 0, fmt.Errorf("%w: sherpa-onnx refused the %s model in %s (its reason is on stderr)", stt.ErrUnavailable, m.Kind, m.Dir)
	}
	return h, nil
}

// cStrings makes NUL-terminated copies of Go strings for one call and
// keeps them reachable until the call returns.
type cStrings [][]byte

// of returns s as a C string, nil for "" (the library's default).
func (k *cStrings) of(s string) *byte {
	if s == "" {
		return nil
	}
	b := append([]byte(s), 0)
	*k = append(*k, b)
	return &b[0]
}

// supported reports whether a call in language can use the model.
func (r *Recognizer) supported(language string) bool {
	return language == "" || strings.EqualFold(primary(language), primary(r.c.Language))
}

func primary(tag string) string {
	p, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	return p
}

// Open implements stt.Streamer: one utterance, decoded as it is written.
func (r *Recognizer) Open(ctx context.Context, rate int, language string) (stt.Stream, error) {
	if !r.supported(language) {
		return nil, fmt.Errorf("%w: %q (the sherpa-onnx model is %s)", stt.ErrLanguage, language, r.c.Language)
	}
	if rate <= 0 {
		return nil, fmt.Errorf("stt/sherpa: sample rate %d", rate)
	}
	if err := r.Load(ctx); err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: sherpa: recognizer closed", stt.ErrUnavailable)
	}
	r.streams.Add(1)
	rec, lib := r.handle, r.lib
	r.mu.Unlock()
	h := lib.api.createStream(rec)
	if h == 0 {
		r.streams.Done()
		return nil, fmt.Errorf("%w: sherpa-onnx created no stream", stt.ErrUnavailable)
	}
	return &stream{api: &lib.api, rec: rec, h: h, ctx: ctx, rate: rate, language: r.c.Language, done: r.streams.Done,
		rs: audio.NewResampler(rate, featureRate)}, nil
}

// Transcribe implements stt.Recognizer: the utterance goes through a
// stream in 100 ms pieces (ctx is looked at between them).
func (r *Recognizer) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	st, err := r.Open(ctx, rate, language)
	if err != nil {
		return stt.Result{}, err
	}
	piece := max(rate/10, 1)
	for len(pcm) > 0 {
		n := min(len(pcm), piece)
		if st.Write(pcm[:n]) != nil {
			break // Close returns the cause
		}
		pcm = pcm[n:]
	}
	return st.Close()
}
