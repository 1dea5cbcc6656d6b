package espeak

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/tts"
)

const hello = "Hello, this is Parley."

// longText takes espeak-ng tens of seconds of audio: far more than a pipe
// buffer holds.
var longText = strings.Repeat("This is a rather long sentence that Parley speaks to test streaming and cancellation. ", 20)

// need skips the test when espeak-ng is not installed, and fails it on CI.
func need(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("espeak-ng is required on CI: %v", err)
		}
		t.Skipf("skipping: %v (apt-get install %s)", err, Package)
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// collect synthesizes r at rate and returns everything out got.
func collect(t *testing.T, s *Synthesizer, r tts.Request, rate int) ([]int16, tts.Stats) {
	t.Helper()
	var pcm []int16
	st, err := s.Synthesize(t.Context(), r, rate, func(p []int16) error {
		pcm = append(pcm, p...)
		return nil
	})
	if err != nil {
		t.Fatalf("Synthesize(%+v, %d): %v", r, rate, err)
	}
	return pcm, st
}

func dur(n, rate int) time.Duration { return time.Duration(n) * time.Second / time.Duration(rate) }

func TestHello(t *testing.T) {
	need(t)
	s := New(Config{Logger: quiet()})
	for _, rate := range []int{8000, 16000, 24000, 48000} {
		t.Run(strconv.Itoa(rate), func(t *testing.T) {
			var chunks []int
			pcm, st := func() ([]int16, tts.Stats) {
				var pcm []int16
				st, err := s.Synthesize(t.Context(), tts.Request{Text: hello}, rate, func(p []int16) error {
					chunks = append(chunks, len(p))
					pcm = append(pcm, p...)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return pcm, st
			}()
			d := dur(len(pcm), rate)
			if d < 800*time.Millisecond || d > 4*time.Second {
				t.Errorf("audio lasts %v, want 0.8 s to 4 s", d)
			}
			if st.Audio != d {
				t.Errorf("Stats.Audio = %v, out got %v", st.Audio, d)
			}
			if st.Characters != len(hello) {
				t.Errorf("Stats.Characters = %d, want %d", st.Characters, len(hello))
			}
			if rms := audio.RMS(pcm); rms < 0.02 {
				t.Errorf("RMS %.4f: silence", rms)
			}
			// 20 ms chunks, the last possibly shorter.
			want := rate / 50
			for i, n := range chunks[:len(chunks)-1] {
				if n < want-1 || n > want+1 {
					t.Fatalf("chunk %d has %d samples, want about %d", i, n, want)
				}
			}
			t.Logf("%d Hz: %v in %d chunks, RMS %.3f", rate, d, len(chunks), audio.RMS(pcm))
		})
	}
}

func TestSpeed(t *testing.T) {
	need(t)
	s := New(Config{Logger: quiet()})
	slow, _ := collect(t, s, tts.Request{Text: hello, Speed: 0.5}, 8000)
	normal, _ := collect(t, s, tts.Request{Text: hello}, 8000)
	fast, _ := collect(t, s, tts.Request{Text: hello, Speed: 1.5}, 8000)
	t.Logf("0.5: %v, 1.0: %v, 1.5: %v", dur(len(slow), 8000), dur(len(normal), 8000), dur(len(fast), 8000))
	if !(len(fast) < len(normal) && len(normal) < len(slow)) {
		t.Errorf("speeds 1.5, 1.0, 0.5 gave %d, %d, %d samples; want increasing", len(fast), len(normal), len(slow))
	}
}

func TestWordsPerMinute(t *testing.T) {
	for _, c := range []struct {
		base  int
		speed float64
		want  int
	}{
		{175, 0, 175}, {175, 1, 175}, {175, 0.5, 88}, {175, 1.5, 263},
		{175, 0.1, 88}, {175, 3, 263}, {175, -1, 88}, {100, 0.5, 80}, {200, 1.2, 240},
	} {
		if got := WordsPerMinute(c.base, c.speed); got != c.want {
			t.Errorf("WordsPerMinute(%d, %v) = %d, want %d", c.base, c.speed, got, c.want)
		}
	}
}

// Text that looks like an option is spoken: it goes in on stdin.
func TestOptionLikeText(t *testing.T) {
	need(t)
	s := New(Config{Logger: quiet()})
	for _, text := range []string{"--help", "-v xx hello", "- minus one", "--version"} {
		pcm, st := collect(t, s, tts.Request{Text: text}, 16000)
		if d := dur(len(pcm), 16000); d < 300*time.Millisecond || audio.RMS(pcm) < 0.02 {
			t.Errorf("%q: %v of audio at RMS %.4f, want it spoken", text, d, audio.RMS(pcm))
		}
		if st.Characters != len(text) {
			t.Errorf("%q: Stats.Characters = %d", text, st.Characters)
		}
	}
}

func TestEmptyText(t *testing.T) {
	// No process is started, so this needs no espeak-ng.
	s := New(Config{Binary: "/nonexistent", Logger: quiet()})
	for _, text := range []string{"", "   ", "\n\t\x00\x07", "\xff\xfe"} {
		st, err := s.Synthesize(t.Context(), tts.Request{Text: text}, 8000, func([]int16) error {
			t.Errorf("%q: out called", text)
			return nil
		})
		if err != nil || st != (tts.Stats{}) {
			t.Errorf("%q: %+v, %v; want no audio, no error", text, st, err)
		}
	}
}

func TestTooLong(t *testing.T) {
	s := New(Config{Binary: "/nonexistent", Logger: quiet()})
	_, err := s.Synthesize(t.Context(), tts.Request{Text: strings.Repeat("a", MaxText+1)}, 8000, func([]int16) error { return nil })
	if !errors.Is(err, tts.ErrTextTooLong) {
		t.Errorf("%d characters: %v, want ErrTextTooLong", MaxText+1, err)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"Hello":                       "Hello",
		"  a\nb\r\nc\td  ":            "a b  c d",
		"bell\x07 nul\x00 esc\x1b[0m": "bell nul esc[0m",
		"bad\xffutf8":                 "badutf8",
		"\ufeffBOM":                   "BOM",
		"héllo wörld 你好":              "héllo wörld 你好",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// Control characters are stripped before speaking, and counted out.
func TestControlCharacters(t *testing.T) {
	need(t)
	s := New(Config{Logger: quiet()})
	pcm, st := collect(t, s, tts.Request{Text: "Hello\x00\x1b there\n"}, 8000)
	if st.Characters != len("Hello there") || audio.RMS(pcm) < 0.02 {
		t.Errorf("Stats %+v, RMS %.4f", st, audio.RMS(pcm))
	}
}

func TestMissingBinary(t *testing.T) {
	for _, c := range []Config{{Binary: "/nonexistent"}, {Binary: "/nonexistent", WordsPerMinute: 100}} {
		s := New(Config{Binary: c.Binary, Logger: quiet()})
		for _, r := range []tts.Request{{Text: hello}, {Text: hello, Voice: "en-us"}, {Text: hello, Language: "fr"}} {
			_, err := s.Synthesize(t.Context(), r, 8000, func([]int16) error { return nil })
			if !errors.Is(err, tts.ErrUnavailable) || !strings.Contains(err.Error(), Package) {
				t.Errorf("%+v: %v, want ErrUnavailable naming the package", r, err)
			}
		}
	}
	if err := available("/nonexistent"); !errors.Is(err, tts.ErrUnavailable) {
		t.Errorf("available(/nonexistent) = %v", err)
	}
}

// A binary that exits without writing a WAV (crashes) is ErrUnavailable.
func TestCrashingBinary(t *testing.T) {
	s := New(Config{Binary: "/bin/false", Logger: quiet()})
	_, err := s.Synthesize(t.Context(), tts.Request{Text: hello, Voice: "en"}, 8000, func([]int16) error { return nil })
	if !errors.Is(err, tts.ErrUnavailable) {
		t.Errorf("/bin/false: %v, want ErrUnavailable", err)
	}
}

func TestUnknownVoice(t *testing.T) {
	need(t)
	s := New(Config{Logger: quiet()})
	for _, v := range []string{"zz-nothing", "--help", "-x", "../../etc/passwd", "a b"} {
		_, err := s.Synthesize(t.Context(), tts.Request{Text: hello, Voice: v}, 8000, func([]int16) error { return nil })
		if !errors.Is(err, tts.ErrUnknownVoice) {
			t.Errorf("voice %q: %v, want ErrUnknownVoice", v, err)
		}
	}
	// A variant is a voice.
	pcm, _ := collect(t, s, tts.Request{Text: hello, Voice: "en-us+f3"}, 8000)
	if audio.RMS(pcm) < 0.02 {
		t.Errorf("en-us+f3: silence")
	}
}

func TestLanguages(t *testing.T) {
	need(t)
	var logs bytes.Buffer
	s := New(Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, c := range []struct{ lang, voice string }{
		{"", "en-us"}, {"en", "en-us"}, {"en-US", "en-us"}, {"EN_us", "en-us"}, {"en-GB", "en-gb"},
		{"en-AU", "en-gb"}, {"fr", "fr-fr"}, {"fr-CA", "fr-fr"}, {"de-DE", "de"}, {"pt-BR", "pt-br"},
		{"pt", "pt"}, {"es-MX", "es-419"}, {"zh", "cmn"}, {"zh-Hans-CN", "cmn"}, {"no", "nb"},
	} {
		v, err := s.voice(t.Context(), tts.Request{Language: c.lang})
		if err != nil || v != c.voice {
			t.Errorf("language %q: voice %q, %v; want %q", c.lang, v, err, c.voice)
		}
	}
	if logs.Len() != 0 {
		t.Errorf("known languages logged: %s", logs.String())
	}

	// Unknown: English, with one warning.
	for range 3 {
		pcm, _ := collect(t, s, tts.Request{Text: hello, Language: "tlh-x-klingon"}, 8000)
		if audio.RMS(pcm) < 0.02 {
			t.Fatal("unknown language: silence")
		}
	}
	if n := strings.Count(logs.String(), "tlh-x-klingon"); n != 1 {
		t.Errorf("unknown language logged %d times, want once: %s", n, logs.String())
	}
	pcm, _ := collect(t, s, tts.Request{Text: "Bonjour, je suis Parley.", Language: "fr"}, 8000)
	if audio.RMS(pcm) < 0.02 {
		t.Error("French: silence")
	}
}

// gone reports whether process pid has been reaped.
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return errors.Is(err, os.ErrNotExist)
}

// state is the process state letter from /proc/pid/stat (R, S, Z...).
func state(t *testing.T, pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return rest[:1]
}

// The first chunk is handed out while espeak-ng is still running and most
// of the output is still unread: out blocks on the first chunk, and while it
// does the process is alive (it cannot finish: the pipe is full) and little
// has been read.
func TestStreams(t *testing.T) {
	need(t)
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	s := New(Config{Logger: quiet()})
	var (
		pid                    int
		mu                     sync.Mutex
		readTotal, readAtFirst int64
		first                  = true
	)
	s.started = func(p int) { pid = p }
	s.read = func(n int64) { mu.Lock(); readTotal = n; mu.Unlock() }
	release := make(chan struct{})
	firstCall := make(chan struct{})
	done := make(chan error, 1)
	var st tts.Stats
	go func() {
		var err error
		st, err = s.Synthesize(context.Background(), tts.Request{Text: longText}, 8000, func(p []int16) error {
			if first {
				first = false
				mu.Lock()
				readAtFirst = readTotal
				mu.Unlock()
				close(firstCall)
				<-release
			}
			return nil
		})
		done <- err
	}()
	<-firstCall
	// While out blocks, espeak-ng fills the pipe and waits; it must not
	// have exited (a zombie, Z, would mean all its output was produced).
	if st := state(t, pid); st == "Z" || st == "X" {
		t.Errorf("espeak-ng had exited (state %s) before the first chunk was handed out", st)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("read %d of %d bytes before the first chunk; %v of audio", readAtFirst, readTotal, st.Audio)
	if readAtFirst > readTotal/10 {
		t.Errorf("%d of %d bytes read before the first chunk: not streaming", readAtFirst, readTotal)
	}
	if !gone(pid) {
		t.Errorf("process %d still there", pid)
	}
}

func TestCancel(t *testing.T) {
	need(t)
	s := New(Config{Logger: quiet()})
	var pid int
	s.started = func(p int) { pid = p }
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	chunks := 0
	st, err := s.Synthesize(ctx, tts.Request{Text: longText}, 16000, func(p []int16) error {
		chunks++
		if chunks == 5 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v, want context.Canceled", err)
	}
	if chunks > 50 || st.Audio > 2*time.Second {
		t.Errorf("after cancel: %d chunks, %v of audio; want it to stop promptly", chunks, st.Audio)
	}
	if pid == 0 || !gone(pid) {
		t.Errorf("process %d still there after cancel", pid)
	}

	// Already canceled: nothing starts.
	pid = 0
	if _, err := s.Synthesize(ctx, tts.Request{Text: hello}, 8000, func([]int16) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled before: %v", err)
	}
	if pid != 0 {
		t.Error("a process started for a canceled context")
	}
}

// Cancel while out is blocked with espeak-ng stuck on a full pipe.
func TestCancelWhileBlocked(t *testing.T) {
	need(t)
	s := New(Config{Logger: quiet()})
	var pid int
	s.started = func(p int) { pid = p }
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	blocked := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		_, err := s.Synthesize(ctx, tts.Request{Text: longText}, 8000, func([]int16) error {
			if first {
				first = false
				close(blocked)
				<-ctx.Done()
			}
			return nil
		})
		done <- err
	}()
	<-blocked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	if !gone(pid) {
		t.Errorf("process %d still there", pid)
	}
}

func TestOutError(t *testing.T) {
	need(t)
	s := New(Config{Logger: quiet()})
	var pid int
	s.started = func(p int) { pid = p }
	boom := errors.New("boom")
	calls := 0
	st, err := s.Synthesize(t.Context(), tts.Request{Text: longText}, 8000, func([]int16) error {
		calls++
		if calls == 3 {
			return boom
		}
		return nil
	})
	if err != boom {
		t.Fatalf("%v, want out's error as it is", err)
	}
	if calls != 3 || st.Audio != 60*time.Millisecond {
		t.Errorf("out called %d times, Stats.Audio %v; want 3 and 60ms", calls, st.Audio)
	}
	if !gone(pid) {
		t.Errorf("process %d still there", pid)
	}
}

func TestBadRate(t *testing.T) {
	s := New(Config{Binary: "/nonexistent", Logger: quiet()})
	for _, rate := range []int{0, -8000} {
		if _, err := s.Synthesize(t.Context(), tts.Request{Text: hello}, rate, func([]int16) error { return nil }); err == nil {
			t.Errorf("rate %d: no error", rate)
		}
	}
}

func wavHeader(rate int, size uint32) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	binary.Write(&b, le, size+36)
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(rate * 2), uint16(2), uint16(16)} {
		binary.Write(&b, le, v)
	}
	b.WriteString("data")
	binary.Write(&b, le, size)
	return b.Bytes()
}

// The header's rate is used and an unknown data size means until EOF.
func TestStreamHeader(t *testing.T) {
	s := New(Config{Logger: quiet()})
	tone := audio.Tone(440, 16000, time.Second, 0.5)
	var data bytes.Buffer
	binary.Write(&data, binary.LittleEndian, tone)
	for _, size := range []uint32{0xFFFFFFFF, 0x7ffff000, uint32(data.Len())} {
		in := io.MultiReader(bytes.NewReader(wavHeader(16000, size)), &oneByte{r: bytes.NewReader(data.Bytes())})
		var got []int16
		n, err := s.stream(t.Context(), in, 8000, func(p []int16) error { got = append(got, p...); return nil })
		if err != nil || n != 8000 || len(got) != 8000 {
			t.Errorf("size %#x: %d samples (%d), %v; want 8000", size, n, len(got), err)
		}
		if !audio.DetectTone(got[1000:], 8000, 440) {
			t.Errorf("size %#x: no 440 Hz tone after resampling", size)
		}
	}
	for _, bad := range [][]byte{nil, []byte("RIFF"), []byte("RIFF\x00\x00\x00\x00WAVX"), wavHeader(16000, 10)[:30]} {
		if _, err := s.stream(t.Context(), bytes.NewReader(bad), 8000, func([]int16) error { return nil }); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// oneByte reads a byte at a time, splitting samples across reads.
type oneByte struct{ r io.Reader }

func (o *oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

func TestParseVoices(t *testing.T) {
	l, err := parseVoices(`Pty Language       Age/Gender VoiceName          File                 Other Languages
 5  cmn             --/M      Chinese_(Mandarin,_latin_as_English) sit/cmn              (zh-cmn 5)(zh 5)
 2  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)
 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)
 5  yue             --/M      Chinese_(Cantonese) sit/yue              (zh-yue 5)(zh 8)
`)
	if err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[string]string{"zh": "cmn", "zh-yue": "yue", "en": "en-gb", "en-us": "en-us", "cmn": "cmn"} {
		if l[tag] != want {
			t.Errorf("%q → %q, want %q", tag, l[tag], want)
		}
	}
	if v, ok := l.resolve("en"); v != "en-us" || !ok {
		t.Errorf("resolve(en) = %q, %v", v, ok)
	}
	if v, ok := l.resolve("xx"); v != "en-us" || ok {
		t.Errorf("resolve(xx) = %q, %v", v, ok)
	}
	if _, err := parseVoices("garbage"); !errors.Is(err, tts.ErrUnavailable) {
		t.Errorf("no voices: %v", err)
	}
}

func BenchmarkSynthesize(b *testing.B) {
	need(b)
	s := New(Config{Logger: quiet()})
	r := tts.Request{Text: "Thank you for calling. How can I help you today? I can book an appointment, or answer questions about your account."}
	var audioTotal, firstTotal, wall time.Duration
	for b.Loop() {
		start := time.Now()
		var first time.Duration
		st, err := s.Synthesize(context.Background(), r, 8000, func([]int16) error {
			if first == 0 {
				first = time.Since(start)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		firstTotal += first
		audioTotal += st.Audio
	}
	b.ReportMetric(float64(firstTotal.Milliseconds())/float64(b.N), "ms-to-first-audio")
	b.ReportMetric(audioTotal.Seconds()/wall.Seconds(), "audio-s/wall-s")
}
