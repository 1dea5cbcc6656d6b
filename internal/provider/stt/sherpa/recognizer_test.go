package sherpa

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/stt/sherpa/sherpatest"
)

// loudnessModel is a model directory with the loudness CTC model: "hello"
// for each stretch of noise (see sherpatest).
func loudnessModel(t *testing.T) string { return sherpatest.WriteLoudnessModel(t) }

func testLibDir(t *testing.T) string { return sherpatest.LibDir(t) }

// loudness is a Recognizer of the loudness model, closed after the test.
func loudness(t *testing.T) *Recognizer {
	t.Helper()
	r := New(Config{ModelDir: loudnessModel(t), LibDir: testLibDir(t)})
	if err := r.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func silence(rate int, d time.Duration) []int16 { return make([]int16, int(d)*rate/int(time.Second)) }

func noise(rate int, d time.Duration) []int16 {
	pcm := make([]int16, int(d)*rate/int(time.Second))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range pcm {
		pcm[i] = int16(rng.IntN(20001) - 10000)
	}
	return pcm
}

// writeFrames writes pcm in 20 ms frames, as the pipeline does.
func writeFrames(t *testing.T, st stt.Stream, rate int, pcm []int16) {
	t.Helper()
	frame := rate / 50
	for len(pcm) > 0 {
		n := min(frame, len(pcm))
		if err := st.Write(pcm[:n]); err != nil {
			t.Fatal(err)
		}
		pcm = pcm[n:]
	}
}

func TestStreamDecodesWhileTheCallerSpeaks(t *testing.T) {
	r := loudness(t)
	for _, rate := range []int{8000, 16000, 48000} { // G.711, G.722, Opus legs: the library resamples
		st, err := r.Open(context.Background(), rate, "en-US")
		if err != nil {
			t.Fatal(err)
		}
		p := st.(stt.Partial)
		writeFrames(t, st, rate, silence(rate, time.Second))
		if got := p.Partial(); got != "" {
			t.Errorf("%d Hz: partial after silence %q", rate, got)
		}
		writeFrames(t, st, rate, noise(rate, time.Second))
		if got := p.Partial(); got != "hello" {
			t.Errorf("%d Hz: partial after a sound %q, want hello (decoded while writing)", rate, got)
		}
		writeFrames(t, st, rate, silence(rate, time.Second))
		writeFrames(t, st, rate, noise(rate, time.Second))
		res, err := st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "hello hello" || res.Language != "en" || res.Audio != 4*time.Second {
			t.Errorf("%d Hz: result %+v, want two words, en, 4s", rate, res)
		}
		if got := p.Partial(); got != res.Text {
			t.Errorf("%d Hz: partial after close %q", rate, got)
		}
	}
}

func TestPartialWhileWriting(t *testing.T) {
	r := loudness(t)
	st, err := r.Open(context.Background(), 8000, "")
	if err != nil {
		t.Fatal(err)
	}
	p := st.(stt.Partial)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	seen := ""
	go func() { // another goroutine reads, as the end-of-turn decision does
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				if s := p.Partial(); s != "" {
					seen = s
				}
			}
		}
	}()
	writeFrames(t, st, 8000, noise(8000, 2*time.Second))
	close(stop)
	wg.Wait()
	if _, err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if seen != "" && seen != "hello" {
		t.Errorf("partial read %q", seen)
	}
}

func TestTranscribe(t *testing.T) {
	r := loudness(t)
	pcm := append(append(silence(8000, 300*time.Millisecond), noise(8000, time.Second)...), silence(8000, 300*time.Millisecond)...)
	res, err := r.Transcribe(context.Background(), pcm, 8000, "en")
	if err != nil || res.Text != "hello" || res.Audio != 1600*time.Millisecond {
		t.Errorf("Transcribe: %+v %v", res, err)
	}
	res, err = r.Transcribe(context.Background(), nil, 8000, "en")
	if err != nil || res.Text != "" || res.Audio != 0 {
		t.Errorf("nothing said: %+v %v", res, err)
	}
	if _, err := r.Transcribe(context.Background(), pcm, 8000, "fr-FR"); !errors.Is(err, stt.ErrLanguage) {
		t.Errorf("French: %v, want ErrLanguage", err)
	}
	if _, err := r.Transcribe(context.Background(), pcm, 0, "en"); err == nil {
		t.Error("rate 0 accepted")
	}
	es := New(Config{ModelDir: loudnessModel(t), LibDir: testLibDir(t), Language: "es"})
	defer es.Close()
	if res, err := es.Transcribe(context.Background(), pcm, 8000, "es-MX"); err != nil || res.Language != "es" {
		t.Errorf("a Spanish model (loaded on first use): %+v %v", res, err)
	}
}

func TestCanceledStream(t *testing.T) {
	r := loudness(t)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := r.Open(ctx, 8000, "en")
	if err != nil {
		t.Fatal(err)
	}
	writeFrames(t, st, 8000, noise(8000, time.Second))
	cancel()
	if err := st.Write(noise(8000, time.Second)); !errors.Is(err, context.Canceled) {
		t.Errorf("write after cancel: %v", err)
	}
	if _, err := st.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("close after cancel: %v", err)
	}
	if err := st.Write(nil); err == nil {
		t.Error("write after close accepted")
	}
	if _, err := st.Close(); err == nil {
		t.Error("second close accepted")
	}
	if _, err := r.Transcribe(ctx, noise(8000, time.Second), 8000, "en"); !errors.Is(err, context.Canceled) {
		t.Errorf("transcribe with a canceled ctx: %v", err)
	}
}

func TestCloseWaitsForOpenStreams(t *testing.T) {
	r := New(Config{ModelDir: loudnessModel(t), LibDir: testLibDir(t)})
	st, err := r.Open(context.Background(), 16000, "en")
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		r.Close()
		close(closed)
	}()
	// Once Close has begun, new utterances are refused...
	for {
		other, err := r.Open(context.Background(), 16000, "en")
		if err != nil {
			if !errors.Is(err, stt.ErrUnavailable) {
				t.Fatal(err)
			}
			break
		}
		if _, err := other.Close(); err != nil { // opened before Close began
			t.Fatal(err)
		}
	}
	// ...but the model stays until the open one ends.
	select {
	case <-closed:
		t.Fatal("Close returned with a stream open")
	default:
	}
	writeFrames(t, st, 16000, noise(16000, time.Second))
	if res, err := st.Close(); err != nil || res.Text != "hello" {
		t.Errorf("stream after Close began: %+v %v", res, err)
	}
	<-closed
	if err := r.Load(context.Background()); !errors.Is(err, stt.ErrUnavailable) {
		t.Errorf("load after close: %v", err)
	}
}

func TestInvalidModelDirIsAnError(t *testing.T) {
	lib := testLibDir(t)
	junk := writeModel(t, map[string][]byte{
		"encoder.onnx": []byte("this is not a model"), "decoder.onnx": []byte("x"), "joiner.onnx": []byte("y"),
		"tokens.txt": tokens("<blk>", "a"),
	})
	for name, dir := range map[string]string{
		"missing":    filepath.Join(t.TempDir(), "nope"),
		"empty":      t.TempDir(),
		"junk files": junk,
	} {
		r := New(Config{ModelDir: dir, LibDir: lib})
		err := r.Load(context.Background())
		if !errors.Is(err, stt.ErrUnavailable) || !errors.Is(err, ErrModel) {
			t.Errorf("%s: %v, want ErrUnavailable and ErrModel", name, err)
		}
		if _, err2 := r.Transcribe(context.Background(), noise(8000, time.Second), 8000, "en"); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%s: transcribe after a failed load: %v", name, err2)
		}
		r.Close()
	}
}

func TestLibraryRefusesMissingFilesWithoutCrashing(t *testing.T) {
	// Past DetectModel (files deleted after it looked): the library's own
	// check answers NULL, which is an error, not a crash.
	l, err := LoadLibrary(testLibDir(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := loudnessModel(t)
	m, err := DetectModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(m.CTC); err != nil {
		t.Fatal(err)
	}
	if _, err := createRecognizer(l, m, 1); !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("missing model file: %v", err)
	}
	m.Kind = "whisper"
	if _, err := createRecognizer(l, m, 1); !errors.Is(err, stt.ErrUnavailable) {
		t.Errorf("unknown kind: %v", err)
	}
}
