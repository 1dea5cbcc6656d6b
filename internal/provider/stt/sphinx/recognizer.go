package sphinx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/provider/stt"
)

const (
	// DefaultModelDir is where Debian's pocketsphinx-en-us puts the model.
	DefaultModelDir = "/usr/share/pocketsphinx/model/en-us"
	// MaxDecoders bounds the default pool: each generic decoder holds
	// about 90 MB.
	MaxDecoders = 4
	// MaxAudio is the longest utterance recognised: Transcribe refuses a
	// longer one, a stream ignores what is written past it.
	MaxAudio = 60 * time.Second

	// Rate is the sample rate the en-us acoustic model wants.
	Rate = 16000
	// Language is the BCP 47 tag of the en-us model.
	Language = "en-US"

	// Files under the model directory.
	hmmDir   = "en-us"
	lmFile   = "en-us.lm.bin"
	dictFile = "cmudict-en-us.dict"

	// chunk is how much audio (at Rate) is decoded between looks at ctx.
	chunk = Rate / 10
)

const packages = "Debian packages pocketsphinx and pocketsphinx-en-us"

// Config configures a Recognizer. The zero value uses the Debian model,
// no adaptation transform and a pool of one decoder per CPU (at most
// [MaxDecoders]).
type Config struct {
	// ModelDir holds en-us/ (acoustic model), en-us.lm.bin and
	// cmudict-en-us.dict; default [DefaultModelDir].
	ModelDir string
	// MLLR is an acoustic adaptation transform (pocketsphinx's -mllr: an
	// mllr_matrix file) applied to every decoder; "" none.
	MLLR string
	// NarrowbandMLLR is a transform for audio below 16 kHz (G.711 legs:
	// [PhoneMLLR], written by [WritePhoneMLLR]), applied instead of MLLR
	// to the decoders that hear it: a pool of their own beside each
	// generic or domain pool, since the transform that fits phone audio
	// misfits wideband audio. "" none.
	NarrowbandMLLR string
	// Decoders is the generic pool's size: utterances recognised at once.
	Decoders int
	// DomainDecoders is each adapted domain's pool size; default
	// min(Decoders, 2).
	DomainDecoders int
	// Domains is how many adapted domains are kept loaded (least recently
	// used go first); default 8.
	Domains int
	// Builder makes a domain's language model and dictionary ([Adapt]);
	// nil: Adapt returns the generic recognizer.
	Builder ModelBuilder
	// CacheDir is where domain models are built; default
	// os.UserCacheDir()/parley/sphinx.
	CacheDir string
	// Options are pocketsphinx options (name, value pairs, as
	// pocketsphinx_continuous takes them: "-lw", "10") for every decoder,
	// in place of the tuned defaults of the same name.
	Options []string
	// NarrowbandOptions are options for the decoders of audio below
	// 16 kHz only, over Options (such as -mean and -var for a model's
	// means and variances adapted to phone audio).
	NarrowbandOptions []string
	// GenericWeight is the weight of the generic en-us trigram model
	// (ModelDir's en-us.lm.bin) interpolated, word by word as the decoder
	// searches, with each adapted domain's model: it brings the word order
	// of general English, which an agent's texts and the conversation
	// corpus are too small to hold. 0 takes [DefaultGenericWeight];
	// negative: none. Each domain decoder then holds its own copy of the
	// generic model (about 30 MB more).
	GenericWeight float64
}

// Recognizer is the pocketsphinx [stt.Recognizer], [stt.Streamer] and
// [stt.Adaptable]. Decoders are loaded into the process on first use and
// lent to one utterance at a time. It is safe for concurrent use; Close
// frees the decoders.
type Recognizer struct {
	c Config

	mu      sync.Mutex
	generic *pool
	narrow  *pool // the generic model with NarrowbandMLLR, made on first use
	closed  bool

	domains *domains
}

var (
	_ stt.Streamer  = (*Recognizer)(nil)
	_ stt.Adaptable = (*Recognizer)(nil)
)

// New returns a Recognizer; empty fields of c take their defaults. It
// loads nothing: see [Available].
func New(c Config) *Recognizer {
	if c.ModelDir == "" {
		c.ModelDir = DefaultModelDir
	}
	if c.Decoders <= 0 {
		c.Decoders = DefaultDecoders()
	}
	if c.DomainDecoders <= 0 {
		c.DomainDecoders = min(c.Decoders, 2)
	}
	if c.Domains <= 0 {
		c.Domains = 8
	}
	if c.CacheDir == "" {
		c.CacheDir = defaultCacheDir()
	}
	if c.GenericWeight == 0 {
		c.GenericWeight = DefaultGenericWeight
	}
	r := &Recognizer{c: c}
	r.domains = newDomains(r)
	return r
}

// DefaultDecoders is the default pool size: one decoder per CPU, at most
// [MaxDecoders].
func DefaultDecoders() int { return min(runtime.NumCPU(), MaxDecoders) }

func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "parley", "sphinx")
	}
	return filepath.Join(os.TempDir(), "parley-sphinx")
}

// Available reports whether the libraries and the default model are
// installed: nil when they are, else an error wrapping
// [stt.ErrUnavailable] that names the Debian packages to install. It loads
// the libraries into the process (once), not the model.
func Available() error {
	_, err := New(Config{}).check()
	return err
}

// check loads the libraries and finds the model files.
func (r *Recognizer) check() (*api, error) {
	if err := r.checkOptions(); err != nil {
		return nil, err
	}
	a, err := loadLibrary()
	if err != nil {
		return nil, err
	}
	files := []string{filepath.Join(r.c.ModelDir, hmmDir, "mdef"), filepath.Join(r.c.ModelDir, lmFile), filepath.Join(r.c.ModelDir, dictFile)}
	for _, p := range files {
		if err := readable(p); err != nil {
			return nil, fmt.Errorf("%w: pocketsphinx model: %w (install the %s)", stt.ErrUnavailable, err, packages)
		}
	}
	if r.c.MLLR != "" {
		if err := readable(r.c.MLLR); err != nil {
			return nil, fmt.Errorf("%w: pocketsphinx adaptation transform: %w", stt.ErrUnavailable, err)
		}
	}
	return a, nil
}

// checkOptions checks that the configured options are name, value pairs
// and the generic model's weight leaves the domain's some.
func (r *Recognizer) checkOptions() error {
	for _, o := range [][]string{r.c.Options, r.c.NarrowbandOptions} {
		if len(o)%2 != 0 {
			return fmt.Errorf("%w: pocketsphinx options %q: not name, value pairs", stt.ErrUnavailable, o)
		}
	}
	if r.c.GenericWeight >= 1 {
		return fmt.Errorf("%w: generic model weight %v: it must be below 1 (the domain's model gets the rest)", stt.ErrUnavailable, r.c.GenericWeight)
	}
	return nil
}

// readable checks that path is a file that can be opened: pocketsphinx
// exits the process on some files it cannot read instead of failing.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return err
	} else if fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	return nil
}

// narrowband reports whether audio at rate goes to decoders of its own
// (the narrowband transform or options).
func (r *Recognizer) narrowband(rate int) bool {
	return rate < Rate && r.hasNarrowband()
}

// hasNarrowband reports whether narrowband audio has decoders of its own.
func (r *Recognizer) hasNarrowband() bool {
	return r.c.NarrowbandMLLR != "" || len(r.c.NarrowbandOptions) > 0
}

// args are the decoder options for a language model and dictionary, for
// narrowband audio or not.
func (r *Recognizer) args(lm, dict string, narrow bool) []string {
	a := []string{
		"-hmm", filepath.Join(r.c.ModelDir, hmmDir),
		"-lm", lm,
		"-dict", dict,
		"-samprate", "16000",
	}
	opts := withOptions(tuning, r.c.Options)
	if narrow {
		opts = withOptions(opts, r.c.NarrowbandOptions)
	}
	a = withOptions(a, opts)
	switch {
	case narrow && r.c.NarrowbandMLLR != "":
		a = append(a, "-mllr", r.c.NarrowbandMLLR)
	case r.c.MLLR != "":
		a = append(a, "-mllr", r.c.MLLR)
	}
	return a
}

// blend is what a domain's decoders interpolate their model with: the
// generic model at GenericWeight, or nil.
func (r *Recognizer) blend() *blend {
	if r.c.GenericWeight <= 0 {
		return nil
	}
	return &blend{lm: filepath.Join(r.c.ModelDir, lmFile), weight: r.c.GenericWeight}
}

// pool is the generic pool, made on first use.
func (r *Recognizer) pool() (*pool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	if r.generic != nil {
		return r.generic, nil
	}
	a, err := r.check()
	if err != nil {
		return nil, err
	}
	r.generic = newPool(a, r.args(filepath.Join(r.c.ModelDir, lmFile), filepath.Join(r.c.ModelDir, dictFile), false), nil, r.c.Decoders, nil)
	return r.generic, nil
}

// poolFor is the generic pool for audio at rate: the narrowband one,
// made on first use, for phone audio when there is a narrowband
// transform.
func (r *Recognizer) poolFor(rate int) (*pool, error) {
	p, err := r.pool()
	if err != nil || !r.narrowband(rate) {
		return p, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	if r.narrow == nil {
		a, err := r.check()
		if err != nil {
			return nil, err
		}
		r.narrow = newPool(a, r.args(filepath.Join(r.c.ModelDir, lmFile), filepath.Join(r.c.ModelDir, dictFile), true), nil, r.c.Decoders, nil)
	}
	return r.narrow, nil
}

// Close frees the decoders (ones lent now when their utterance ends) and
// the domain models, and stops domain builds. Later calls fail.
func (r *Recognizer) Close() error {
	r.mu.Lock()
	r.closed = true
	pools := []*pool{r.generic, r.narrow}
	r.mu.Unlock()
	for _, p := range pools {
		if p != nil {
			p.close()
		}
	}
	return r.domains.close()
}

// Transcribe implements stt.Recognizer: it recognises pcm (mono 16-bit at
// rate) as one utterance. It waits for a free decoder as long as ctx
// allows; canceling ctx returns ctx.Err() within a tenth of a second of
// audio's decoding and gives the decoder back.
func (r *Recognizer) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	return transcribe(ctx, r.poolFor, pcm, rate, language)
}

// Open implements stt.Streamer: it waits for a free decoder (as long as
// ctx allows) and starts an utterance on it.
func (r *Recognizer) Open(ctx context.Context, rate int, language string) (stt.Stream, error) {
	return open(ctx, r.poolFor, rate, language)
}

// request validates a request before any decoder is borrowed.
func request(rate int, language string) error {
	if !supported(language) {
		return fmt.Errorf("%w: %q (pocketsphinx has en-US only)", stt.ErrLanguage, language)
	}
	if rate <= 0 {
		return fmt.Errorf("stt/sphinx: sample rate %d", rate)
	}
	return nil
}

// supported reports whether language is served by the en-us model.
func supported(language string) bool {
	l := strings.ToLower(language)
	return l == "" || l == "en" || strings.HasPrefix(l, "en-") || strings.HasPrefix(l, "en_")
}

// transcribe recognises one utterance with a decoder of the pool get
// returns, as a stream written a tenth of a second at a time (ctx is
// looked at between writes).
func transcribe(ctx context.Context, get func(rate int) (*pool, error), pcm []int16, rate int, language string) (stt.Result, error) {
	if err := request(rate, language); err != nil {
		return stt.Result{}, err
	}
	res := stt.Result{Language: Language, Audio: stt.Duration(len(pcm), rate)}
	if res.Audio > MaxAudio {
		return stt.Result{}, fmt.Errorf("%w: %v of audio, the limit is %v", stt.ErrAudioTooLong, res.Audio, MaxAudio)
	}
	if len(pcm) == 0 {
		return res, nil
	}
	st, err := open(ctx, get, rate, language)
	if err != nil {
		return stt.Result{}, err
	}
	step := max(1, chunk*rate/Rate)
	for i := 0; i < len(pcm); i += step {
		if err := st.Write(pcm[i:min(len(pcm), i+step)]); err != nil {
			break // Close returns the cause
		}
	}
	out, err := st.Close()
	if err != nil {
		return stt.Result{}, err
	}
	res.Text = out.Text
	return res, nil
}
