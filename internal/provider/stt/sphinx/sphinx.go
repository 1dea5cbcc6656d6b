package sphinx

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
)

const (
	// DefaultBinary is the pocketsphinx command (Debian package pocketsphinx).
	DefaultBinary = "pocketsphinx_continuous"
	// DefaultModelDir is where Debian's pocketsphinx-en-us puts the model.
	DefaultModelDir = "/usr/share/pocketsphinx/model/en-us"
	// DefaultTimeout bounds one run of the binary.
	DefaultTimeout = 10 * time.Second
	// MaxAudio is the longest utterance Transcribe accepts.
	MaxAudio = 60 * time.Second

	// Rate is the sample rate the en-us acoustic model wants.
	Rate = 16000
	// Language is the BCP 47 tag of the en-us model.
	Language = "en-US"

	// Files under the model directory.
	hmmDir   = "en-us"
	lmFile   = "en-us.lm.bin"
	dictFile = "cmudict-en-us.dict"

	pad        = 300 * time.Millisecond // silence either side of the speech
	targetRMS  = 0.03                   // level speech is normalised to (-30 dBFS)
	maxGain    = 8                      // most a quiet utterance is boosted
	stderrKeep = 4 << 10                // bytes of log kept to explain a failure
	waitDelay  = 2 * time.Second        // after a kill, how long to wait for pipes
)

const packages = "Debian packages pocketsphinx and pocketsphinx-en-us"

// Config configures a Recognizer. The zero value uses the Debian defaults.
type Config struct {
	Binary   string        // default pocketsphinx_continuous (looked up in PATH)
	ModelDir string        // default /usr/share/pocketsphinx/model/en-us
	Timeout  time.Duration // one run's limit; default 10 s
}

// Recognizer is the pocketsphinx [stt.Recognizer]. It is safe for
// concurrent use: each call runs its own process.
type Recognizer struct {
	c Config
}

var _ stt.Recognizer = (*Recognizer)(nil)

// New returns a Recognizer; empty fields of c take their defaults. It does
// not check that pocketsphinx is installed: see [Available].
func New(c Config) *Recognizer {
	if c.Binary == "" {
		c.Binary = DefaultBinary
	}
	if c.ModelDir == "" {
		c.ModelDir = DefaultModelDir
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return &Recognizer{c: c}
}

// Available reports whether the default binary and model are installed: nil
// when they are, else an error wrapping [stt.ErrUnavailable] that names the
// Debian packages to install.
func Available() error {
	_, err := New(Config{}).check()
	return err
}

// check finds the binary and the model files, returning the binary's path.
func (r *Recognizer) check() (string, error) {
	bin, err := exec.LookPath(r.c.Binary)
	if err != nil {
		return "", fmt.Errorf("%w: pocketsphinx: %w (install the %s)", stt.ErrUnavailable, err, packages)
	}
	for _, name := range []string{filepath.Join(hmmDir, "mdef"), lmFile, dictFile} {
		p := filepath.Join(r.c.ModelDir, name)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: pocketsphinx model: %w (install the %s)", stt.ErrUnavailable, err, packages)
		}
	}
	return bin, nil
}

// supported reports whether language is served by the en-us model.
func supported(language string) bool {
	l := strings.ToLower(language)
	return l == "" || l == "en" || strings.HasPrefix(l, "en-") || strings.HasPrefix(l, "en_")
}

// Transcribe recognises pcm (mono 16-bit at rate). Empty pcm gives an empty
// Result without running anything. Canceling ctx kills the process and
// returns ctx.Err().
func (r *Recognizer) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	if !supported(language) {
		return stt.Result{}, fmt.Errorf("%w: %q (pocketsphinx has en-US only)", stt.ErrLanguage, language)
	}
	if rate <= 0 {
		return stt.Result{}, fmt.Errorf("stt/sphinx: sample rate %d", rate)
	}
	res := stt.Result{Language: Language, Audio: stt.Duration(len(pcm), rate)}
	if res.Audio > MaxAudio {
		return stt.Result{}, fmt.Errorf("%w: %v of audio, the limit is %v", stt.ErrAudioTooLong, res.Audio, MaxAudio)
	}
	if len(pcm) == 0 {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return stt.Result{}, err
	}
	bin, err := r.check()
	if err != nil {
		return stt.Result{}, err
	}

	path, err := writeTemp(resample(pcm, rate))
	if err != nil {
		return stt.Result{}, err
	}
	defer os.Remove(path)

	text, err := r.run(ctx, bin, path)
	if err != nil {
		return stt.Result{}, err
	}
	res.Text = text
	return res, nil
}

// normalise scales pcm in place so its RMS level is targetRMS (boosting
// by at most maxGain). The en-us model's cepstral mean starts from a level
// typical of its training data and adapts only after each speech segment,
// so a loud utterance (full-scale synthetic speech) is badly misheard while
// the same one 10 dB down is fine.
func normalise(pcm []int16) {
	rms := audio.RMS(pcm)
	if rms == 0 {
		return
	}
	g := min(targetRMS/rms, maxGain)
	for i, x := range pcm {
		pcm[i] = int16(max(-32768, min(32767, math.Round(float64(x)*g))))
	}
}

// resample converts pcm at rate to Rate, with pad of silence either side,
// and normalises its level. The silence after the speech also flushes the
// resampler's delay. pcm itself is not changed.
func resample(pcm []int16, rate int) []int16 {
	padIn := make([]int16, int64(rate)*int64(pad)/int64(time.Second))
	rs := audio.NewResampler(rate, Rate)
	out := make([]int16, 0, (len(pcm)+2*len(padIn))*Rate/rate+1)
	out = rs.Process(out, padIn)
	out = rs.Process(out, pcm)
	out = rs.Process(out, padIn)
	normalise(out)
	return out
}

// run runs the binary on the WAV file at path and returns the hypotheses.
func (r *Recognizer) run(ctx context.Context, bin, path string) (string, error) {
	rctx, cancel := context.WithTimeout(ctx, r.c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin,
		"-infile", path,
		"-hmm", filepath.Join(r.c.ModelDir, hmmDir),
		"-lm", filepath.Join(r.c.ModelDir, lmFile),
		"-dict", filepath.Join(r.c.ModelDir, dictFile),
	)
	var stdout bytes.Buffer
	stderr := &tail{max: stderrKeep}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = waitDelay
	err := cmd.Run() // kills on rctx done, and always waits
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if rctx.Err() != nil {
		return "", fmt.Errorf("stt/sphinx: %s killed after %v: %w", r.c.Binary, r.c.Timeout, rctx.Err())
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w: %s", stt.ErrUnavailable, r.c.Binary, err, stderr.why())
	}
	return hypotheses(stdout.Bytes()), nil
}

// hypotheses joins the non-empty lines of the tool's stdout.
func hypotheses(out []byte) string {
	var words []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		words = append(words, strings.Fields(sc.Text())...)
	}
	return strings.Join(words, " ")
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.b = append(t.b[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.b) + len(p) - t.max; over > 0 {
		t.b = t.b[:copy(t.b, t.b[over:])]
	}
	t.b = append(t.b, p...)
	return n, nil
}

// why picks the ERROR and FATAL lines out of the log, or its last line.
func (t *tail) why() string {
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	var bad []string
	for _, l := range lines {
		if strings.HasPrefix(l, "ERROR") || strings.HasPrefix(l, "FATAL") {
			bad = append(bad, strings.TrimSpace(l))
		}
	}
	if len(bad) == 0 {
		return strings.TrimSpace(lines[len(lines)-1])
	}
	return strings.Join(bad, "; ")
}

// writeTemp writes pcm at Rate to a new temporary WAV file.
func writeTemp(pcm []int16) (string, error) {
	f, err := os.CreateTemp("", "parley-stt-*.wav")
	if err != nil {
		return "", fmt.Errorf("stt/sphinx: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = writeWAV(w, pcm, Rate)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("stt/sphinx: writing %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

var errWAVTooLong = errors.New("too many samples for a WAV file")
