package espeak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/tts"
)

const (
	// DefaultBinary is the espeak-ng executable looked up in PATH.
	DefaultBinary = "espeak-ng"
	// DefaultWordsPerMinute is espeak-ng's own default speaking rate.
	DefaultWordsPerMinute = 175
	// MaxText is the most characters (runes) one Request may carry, after
	// control characters are stripped; longer text is tts.ErrTextTooLong.
	MaxText = 5000
	// Package is the Debian package that provides the binary.
	Package = "espeak-ng"

	minSpeed, maxSpeed = 0.5, 1.5
	// espeak-ng does not go below 80 words per minute.
	minWPM = 80
	// chunk is how much audio each out call carries.
	chunk = 20 * time.Millisecond
)

// Config configures a Synthesizer. The zero value is usable.
type Config struct {
	Binary         string // default "espeak-ng"
	WordsPerMinute int    // base rate at Speed 1.0, default 175
	// Logger gets warnings (an unknown language falling back to English);
	// nil is slog.Default().
	Logger *slog.Logger
}

// Synthesizer speaks text with espeak-ng, one subprocess per Synthesize. It
// is safe for concurrent use.
type Synthesizer struct {
	bin string
	wpm int
	log *slog.Logger

	mu     sync.Mutex
	voices voiceList       // nil until loaded
	warned map[string]bool // unknown languages already logged

	// Test hooks, nil in production: started gets the child's pid, read the
	// bytes read from its stdout so far.
	started func(pid int)
	read    func(total int64)
}

var _ tts.Synthesizer = (*Synthesizer)(nil)

// New returns a Synthesizer. It does not check that the binary exists; see
// Available.
func New(c Config) *Synthesizer {
	s := &Synthesizer{bin: c.Binary, wpm: c.WordsPerMinute, log: c.Logger, warned: map[string]bool{}}
	if s.bin == "" {
		s.bin = DefaultBinary
	}
	if s.wpm <= 0 {
		s.wpm = DefaultWordsPerMinute
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// Available returns nil when espeak-ng runs (`espeak-ng --version`), else an
// error wrapping tts.ErrUnavailable that names the Debian package.
func Available() error { return available(DefaultBinary) }

func available(bin string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return unavailable(bin, err)
	}
	if !strings.Contains(string(out), "eSpeak") {
		return unavailable(bin, fmt.Errorf("unexpected --version output %q", firstLine(string(out))))
	}
	return nil
}

func unavailable(bin string, err error) error {
	return fmt.Errorf("%w: %s: %w (install the Debian package %s)", tts.ErrUnavailable, bin, err, Package)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Synthesize speaks r.Text and streams it to out at rate Hz in chunks of
// 20 ms (the last may be shorter). Empty text, or text of nothing but
// whitespace and control characters, gives no audio and no error.
func (s *Synthesizer) Synthesize(ctx context.Context, r tts.Request, rate int, out func(pcm []int16) error) (tts.Stats, error) {
	if rate <= 0 || rate > 384000 {
		return tts.Stats{}, fmt.Errorf("espeak: sample rate %d Hz is not usable", rate)
	}
	text := Clean(r.Text)
	n := utf8.RuneCountInString(text)
	if n > MaxText {
		return tts.Stats{}, fmt.Errorf("%w: %d characters, espeak takes at most %d", tts.ErrTextTooLong, n, MaxText)
	}
	if err := ctx.Err(); err != nil {
		return tts.Stats{}, err
	}
	if text == "" {
		return tts.Stats{}, nil
	}
	voice, err := s.voice(ctx, r)
	if err != nil {
		return tts.Stats{}, err
	}
	return s.run(ctx, text, voice, WordsPerMinute(s.wpm, r.Speed), rate, out)
}

// WordsPerMinute is the espeak-ng rate (-s) for Speed speed at base words
// per minute: base·speed, with speed 0 meaning 1 and clamped to 0.5..1.5,
// and never below espeak-ng's floor of 80.
func WordsPerMinute(base int, speed float64) int {
	if speed == 0 || math.IsNaN(speed) {
		speed = 1
	}
	speed = min(max(speed, minSpeed), maxSpeed)
	return max(int(math.Round(float64(base)*speed)), minWPM)
}

// Clean makes text safe to hand to espeak-ng: invalid UTF-8 is dropped,
// control characters become spaces (line breaks and tabs) or go, and
// leading and trailing space is trimmed.
func Clean(text string) string {
	text = strings.ToValidUTF8(text, "")
	text = strings.Map(func(c rune) rune {
		switch {
		case c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == 0x85:
			return ' '
		case unicode.IsControl(c), c == '\uFEFF', c == '\u2028', c == '\u2029':
			return -1
		}
		return c
	}, text)
	return strings.TrimSpace(text)
}

// voiceName is what an explicit Request.Voice may look like: an espeak-ng
// voice name, language or file ("en-us", "en-us+f3", "gmw/en-US"), never an
// option.
var voiceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_+./-]{0,63}$`)

func (s *Synthesizer) voice(ctx context.Context, r tts.Request) (string, error) {
	if r.Voice != "" {
		if !voiceName.MatchString(r.Voice) || strings.Contains(r.Voice, "..") {
			return "", fmt.Errorf("%w: %q", tts.ErrUnknownVoice, r.Voice)
		}
		return r.Voice, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.voices == nil {
		l, err := loadVoices(ctx, s.bin)
		if err != nil {
			return "", err
		}
		s.voices = l
	}
	v, ok := s.voices.resolve(r.Language)
	if !ok && !s.warned[r.Language] {
		s.warned[r.Language] = true
		s.log.Warn("espeak-ng has no voice for the language; speaking it as English", "language", r.Language, "voice", v)
	}
	return v, nil
}

// run is one espeak-ng process: text in on stdin, WAV out on stdout read as
// it comes.
func (s *Synthesizer) run(ctx context.Context, text, voice string, wpm, rate int, out func([]int16) error) (tts.Stats, error) {
	stats := tts.Stats{Characters: utf8.RuneCountInString(text)}
	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	// --stdin: the text is never an argument, so it cannot be an option
	// and has no length limit. -b 1: it is UTF-8 (Clean made sure).
	cmd := exec.CommandContext(ctx, s.bin, "--stdout", "-b", "1", "-v", voice, "-s", strconv.Itoa(wpm), "--stdin")
	cmd.Stdin = strings.NewReader(text)
	var stderr capped
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return stats, err
	}
	if err := cmd.Start(); err != nil {
		if err := parent.Err(); err != nil {
			return stats, err
		}
		return stats, unavailable(s.bin, err)
	}
	if s.started != nil {
		s.started(cmd.Process.Pid)
	}

	counted := &counter{r: stdout, hook: s.read}
	samples, streamErr := s.stream(ctx, bufio.NewReaderSize(counted, 4096), rate, out)
	stats.Audio = time.Duration(samples) * time.Second / time.Duration(rate)
	var oe outError
	if errors.As(streamErr, &oe) {
		cancel() // kills espeak-ng if it is still going
	}
	// Whatever happened, nothing more is read: Wait closes stdout, so a
	// process still writing dies of SIGPIPE, and Wait reaps it.
	waitErr := cmd.Wait()

	if errors.As(streamErr, &oe) {
		return stats, oe.err
	}
	if err := parent.Err(); err != nil {
		return stats, err
	}
	if waitErr != nil {
		msg := firstLine(stderr.String())
		if samples == 0 && strings.Contains(msg, "voice does not exist") {
			return stats, fmt.Errorf("%w: %q", tts.ErrUnknownVoice, voice)
		}
		if msg != "" {
			waitErr = fmt.Errorf("%w: %s", waitErr, msg)
		}
		return stats, unavailable(s.bin, waitErr)
	}
	if streamErr != nil {
		return stats, streamErr
	}
	return stats, nil
}

// outError carries an error returned by out, to be returned as it is.
type outError struct{ err error }

func (e outError) Error() string { return e.err.Error() }

// stream reads espeak-ng's WAV from r and hands out 20 ms chunks at rate as
// the samples arrive, until EOF or ctx is done. It returns how many samples
// it gave out, and an outError when out failed.
func (s *Synthesizer) stream(ctx context.Context, r io.Reader, rate int, out func([]int16) error) (int64, error) {
	from, size, err := readHeader(r)
	if err != nil {
		return 0, err
	}
	if size >= 0 {
		r = io.LimitReader(r, size)
	}
	rs := audio.NewResampler(from, rate)
	frame := max(int(int64(from)*int64(chunk)/int64(time.Second)), 1)
	var (
		buf     = make([]byte, 4096)
		odd     []byte  // a sample split across reads
		pending []int16 // input not yet a whole frame
		emitted int64
	)
	emit := func(in []int16) error {
		// What the pipe still holds is not handed out once ctx is done.
		if err := ctx.Err(); err != nil {
			return err
		}
		pcm := rs.Process(nil, in)
		if len(pcm) == 0 {
			return nil
		}
		emitted += int64(len(pcm))
		if err := out(pcm); err != nil {
			return outError{err}
		}
		return nil
	}
	for {
		n, rerr := r.Read(buf)
		b := buf[:n]
		if len(odd) > 0 && n > 0 {
			b = append(odd, b...)
			odd = nil
		}
		for len(b) >= 2 {
			pending = append(pending, int16(uint16(b[0])|uint16(b[1])<<8))
			b = b[2:]
		}
		if len(b) == 1 {
			odd = []byte{b[0]}
		}
		whole := len(pending) / frame * frame
		for i := 0; i < whole; i += frame {
			if err := emit(pending[i : i+frame]); err != nil {
				return emitted, err
			}
		}
		pending = pending[:copy(pending, pending[whole:])]
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return emitted, fmt.Errorf("espeak: reading espeak-ng output: %w", rerr)
		}
	}
	if len(pending) > 0 {
		if err := emit(pending); err != nil {
			return emitted, err
		}
	}
	return emitted, nil
}

// counter counts the bytes read through it, for tests.
type counter struct {
	r     io.Reader
	total int64
	hook  func(int64)
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.total += int64(n)
	if c.hook != nil && n > 0 {
		c.hook(c.total)
	}
	return n, err
}

// capped keeps the first KiB written to it: espeak-ng's stderr.
type capped struct {
	mu sync.Mutex
	b  []byte
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b = append(c.b, p[:min(len(p), 1024-len(c.b))]...)
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b)
}
