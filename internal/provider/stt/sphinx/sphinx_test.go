package sphinx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// voices caches espeak-ng's speech by text: tests share sentences.
var voices sync.Map // text -> voice

type voice struct {
	pcm  []int16
	rate int
}

func said(tb testing.TB, text string) ([]int16, int) {
	if v, ok := voices.Load(text); ok {
		return v.(voice).pcm, v.(voice).rate
	}
	pcm, rate := speak(tb, text)
	voices.Store(text, voice{pcm, rate})
	return pcm, rate
}

// newDental is a Recognizer with the hand-made builder, and its
// recognizer adapted to the dental domain.
func newDental(t *testing.T, c Config) (*Recognizer, stt.Streamer) {
	t.Helper()
	if c.Builder == nil {
		c.Builder = handBuilder(filepath.Join(DefaultModelDir, dictFile))
	}
	if c.CacheDir == "" {
		c.CacheDir = t.TempDir()
	}
	r := New(c)
	t.Cleanup(func() { r.Close() })
	a, err := r.Adapt(context.Background(), stt.Domain{Key: "dental", Texts: dental})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := a.(stt.Streamer)
	if !ok || a == stt.Recognizer(r) {
		t.Fatalf("Adapt returned %T, want the domain's streamer", a)
	}
	return r, s
}

// A small domain model makes phone speech intelligible: dental sentences
// synthesized, carried as G.711 μ-law (8 kHz) or 16 kHz, come out with
// most words right (measured: 87% over all 24 sentences at 8 kHz, 88% over
// these 12, 98% at 16 kHz).
func TestRecognisesPhoneSpeech(t *testing.T) {
	need(t)
	t.Parallel()
	_, s := newDental(t, Config{})
	for _, leg := range []struct {
		name string
		rate int
		line func([]int16, int) []int16
	}{{"PCMU", 8000, phone}, {"L16/16000", 16000, wideband}} {
		var scores []scored
		for _, text := range dental[:12] {
			pcm, rate := said(t, text)
			in := leg.line(pcm, rate)
			res, err := s.Transcribe(context.Background(), in, leg.rate, "en-US")
			if err != nil {
				t.Fatalf("%s %q: %v", leg.name, text, err)
			}
			if res.Language != Language || res.Audio != stt.Duration(len(in), leg.rate) {
				t.Errorf("%s %q: result %+v, want %s and %v", leg.name, text, res, Language, stt.Duration(len(in), leg.rate))
			}
			e, n := wordErrors(text, res.Text)
			scores = append(scores, scored{text, res.Text, e, n})
			t.Logf("%-9s %-48q -> %q", leg.name, text, res.Text)
		}
		if acc := accuracy(scores); acc < 0.7 {
			t.Errorf("%s: word accuracy %.0f%%, want at least 70%%", leg.name, 100*acc)
		} else {
			t.Logf("%s: word accuracy %.0f%%", leg.name, 100*acc)
		}
	}
}

// The generic model (134,000 words) hears common phrases on a wideband leg.
func TestGenericModel(t *testing.T) {
	need(t)
	t.Parallel()
	r := New(Config{Decoders: 1})
	defer r.Close()
	var scores []scored
	for _, text := range []string{"hello world", "I would like to book a table for two people"} {
		pcm, rate := said(t, text)
		res, err := r.Transcribe(context.Background(), wideband(pcm, rate), 16000, "en")
		if err != nil {
			t.Fatal(err)
		}
		e, n := wordErrors(text, res.Text)
		scores = append(scores, scored{text, res.Text, e, n})
		t.Logf("%q -> %q", text, res.Text)
	}
	if acc := accuracy(scores); acc < 0.5 {
		t.Errorf("word accuracy %.0f%%, want at least 50%%", 100*acc)
	}
}

// A stream decodes as it is written: its partial text grows with the
// audio, before Close, and Close's text is the final one.
func TestStreamPartialGrows(t *testing.T) {
	need(t)
	t.Parallel()
	_, s := newDental(t, Config{})
	text := "I would like the earliest appointment"
	pcm, rate := said(t, text)
	in := phone(pcm, rate)
	st, err := s.Open(context.Background(), 8000, "en")
	if err != nil {
		t.Fatal(err)
	}
	p, ok := st.(stt.Partial)
	if !ok {
		t.Fatalf("%T is not an stt.Partial", st)
	}
	if got := p.Partial(); got != "" {
		t.Errorf("partial before any audio: %q", got)
	}
	var seen []string
	for i := 0; i < len(in); i += 160 { // 20 ms frames, as a leg delivers them
		if err := st.Write(in[i:min(i+160, len(in))]); err != nil {
			t.Fatal(err)
		}
		if i%4000 == 0 { // every half second
			if got := p.Partial(); len(seen) == 0 || got != seen[len(seen)-1] {
				seen = append(seen, got)
			}
		}
	}
	last := p.Partial()
	// While a Write decodes (it holds the stream's lock), Partial does not
	// wait: it answers the hypothesis read last.
	st.(*stream).mu.Lock()
	busy := p.Partial()
	st.(*stream).mu.Unlock()
	if busy != last {
		t.Errorf("Partial while decoding: %q, want the last hypothesis %q", busy, last)
	}
	res, err := st.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("partials %q, final %q", seen, res.Text)
	if n := len(strings.Fields(last)); n < 3 || len(strings.Fields(seen[0])) >= n {
		t.Errorf("partials %q then %q: want them to grow to 3 words or more before Close", seen, last)
	}
	if e, n := wordErrors(text, res.Text); e > n/2 {
		t.Errorf("final %q for %q", res.Text, text)
	}
	if p.Partial() != res.Text {
		t.Errorf("partial after Close %q, want the final %q", p.Partial(), res.Text)
	}
	if _, err := st.Close(); err == nil {
		t.Error("second Close: no error")
	}
	if err := st.Write(in[:160]); err == nil {
		t.Error("Write after Close: no error")
	}
}

// Canceling a stream's context breaks it at the next Write; Close returns
// the cause and gives the decoder back, so the next utterance gets it.
func TestCloseAfterCancel(t *testing.T) {
	need(t)
	t.Parallel()
	r, s := newDental(t, Config{DomainDecoders: 1})
	pcm, rate := said(t, "can I see the dentist on monday morning")
	in := phone(pcm, rate)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := s.Open(ctx, 8000, "en")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(in[:len(in)/2]); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := st.Write(in[len(in)/2:]); !errors.Is(err, context.Canceled) {
		t.Errorf("Write after cancel: %v, want context.Canceled", err)
	}
	if _, err := st.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close after cancel: %v, want context.Canceled", err)
	}
	// The one decoder is free again, its utterance ended: a whole new one
	// decodes on it.
	res, err := s.Transcribe(context.Background(), in, 8000, "en")
	if err != nil || res.Text == "" {
		t.Errorf("after a canceled stream: %+v, %v", res, err)
	}
	if got := r.domains.byKey["dental"].rec.pool.loaded; got != 1 {
		t.Errorf("%d decoders loaded, want 1", got)
	}
	// Canceled before Open: nothing is borrowed.
	if _, err := s.Open(ctx, 8000, "en"); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a canceled context: %v", err)
	}
	if _, err := s.Transcribe(ctx, in, 8000, "en"); !errors.Is(err, context.Canceled) {
		t.Errorf("Transcribe with a canceled context: %v", err)
	}
}

// An utterance waits for a decoder as long as its context allows: with
// every decoder lent, Open blocks until one comes back, and canceling its
// context ends the wait.
func TestWaitsForDecoder(t *testing.T) {
	need(t)
	t.Parallel()
	_, s := newDental(t, Config{DomainDecoders: 1})
	held, err := s.Open(context.Background(), 8000, "en")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := s.Open(ctx, 8000, "en")
		waited <- err
	}()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("waiting Open canceled: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		st, err := s.Open(context.Background(), 8000, "en")
		if err == nil {
			_, err = st.Close()
		}
		got <- err
	}()
	if _, err := held.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Errorf("Open after the decoder came back: %v", err)
	}
}

// Eight callers at once share a pool of two decoders: every utterance is
// recognised (late, never failed), and no more than two are loaded.
func TestConcurrentUse(t *testing.T) {
	need(t)
	t.Parallel()
	r, s := newDental(t, Config{DomainDecoders: 2})
	texts := dental[12:20]
	type out struct {
		text string
		res  stt.Result
		err  error
	}
	outs := make(chan out, len(texts))
	var wg sync.WaitGroup
	for i, text := range texts {
		pcm, rate := said(t, text)
		in := phone(pcm, rate)
		wg.Go(func() {
			var res stt.Result
			var err error
			if i%2 == 0 {
				res, err = s.Transcribe(context.Background(), in, 8000, "en")
			} else {
				var st stt.Stream
				if st, err = s.Open(context.Background(), 8000, "en"); err == nil {
					for j := 0; j < len(in); j += 160 {
						st.Write(in[j:min(j+160, len(in))])
						st.(stt.Partial).Partial()
					}
					res, err = st.Close()
				}
			}
			outs <- out{text, res, err}
		})
	}
	wg.Wait()
	close(outs)
	var scores []scored
	for o := range outs {
		if o.err != nil {
			t.Errorf("%q: %v", o.text, o.err)
			continue
		}
		e, n := wordErrors(o.text, o.res.Text)
		scores = append(scores, scored{o.text, o.res.Text, e, n})
	}
	if acc := accuracy(scores); acc < 0.6 {
		t.Errorf("word accuracy %.0f%% at 8 at once, want at least 60%%", 100*acc)
	}
	if got := r.domains.byKey["dental"].rec.pool.loaded; got > 2 {
		t.Errorf("%d decoders loaded for a pool of 2", got)
	}
}

// Adapt builds a domain once however many calls ask at once, returns the
// same recognizer for the same key, keeps at most Config.Domains (the
// least recently used is dropped: decoders freed, files removed) and a
// dropped domain's recognizer goes on working with the generic model.
func TestAdaptCachesAndBuildsOnce(t *testing.T) {
	need(t)
	t.Parallel()
	var counted builds
	release := make(chan struct{})
	gated := func(ctx context.Context, texts []string, dir string) (string, string, error) {
		<-release
		return handBuilder(filepath.Join(DefaultModelDir, dictFile))(ctx, texts, dir)
	}
	cache := t.TempDir()
	r := New(Config{Decoders: 1, DomainDecoders: 1, Domains: 2, Builder: counted.wrap(gated), CacheDir: cache})
	defer r.Close()
	domain := func(first string) stt.Domain {
		return stt.Domain{Key: "k-" + first, Texts: []string{first, "can I see the dentist"}}
	}

	const callers = 8
	got := make(chan stt.Recognizer, callers)
	for range callers {
		go func() {
			a, err := r.Adapt(context.Background(), domain("hello"))
			if err != nil {
				t.Error(err)
			}
			got <- a
		}()
	}
	for { // every caller is waiting on the one build before it may end
		r.domains.mu.Lock()
		e := r.domains.byKey["k-hello"]
		asked := e != nil && e.asked == callers-1
		r.domains.mu.Unlock()
		if asked {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	first := <-got
	for range callers - 1 {
		if a := <-got; a != first {
			t.Errorf("Adapt returned %p and %p for one key", a, first)
		}
	}
	if n := counted.count("hello"); n != 1 {
		t.Errorf("%d builds for one key asked by %d callers at once", n, callers)
	}
	if a, _ := r.Adapt(context.Background(), domain("hello")); a != first {
		t.Error("a later Adapt built again")
	}

	// Two more domains: the limit is 2, so "hello" (least recently used)
	// is dropped and its directory removed.
	dirOf := func(a stt.Recognizer) string { return a.(*adapted).dir }
	helloDir := dirOf(first)
	for _, k := range []string{"yes", "no"} {
		if _, err := r.Adapt(context.Background(), domain(k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(helloDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dropped domain's files: %v, want them removed", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 2 {
		t.Errorf("%d domain directories in the cache, want 2", len(entries))
	}
	pcm, rate := said(t, "hello world")
	if res, err := first.Transcribe(context.Background(), phone(pcm, rate), 8000, "en"); err != nil {
		t.Errorf("dropped domain's recognizer: %v, want the generic model's text", err)
	} else {
		t.Logf("dropped domain heard %q", res.Text)
	}
	again, err := r.Adapt(context.Background(), domain("hello"))
	if err != nil || again == first || counted.count("hello") != 2 {
		t.Errorf("asked again after being dropped: %v, %d builds; want a new build", err, counted.count("hello"))
	}
}

// A build that fails, or a model pocketsphinx refuses, fails Adapt (the
// call keeps the generic model) and is not cached: the next call tries
// again.
func TestAdaptFailures(t *testing.T) {
	need(t)
	t.Parallel()
	var counted builds
	garbage := func(ctx context.Context, texts []string, dir string) (string, string, error) {
		if texts[0] == "fail" {
			return "", "", errors.New("no words")
		}
		lm, dict := filepath.Join(dir, "x.lm"), filepath.Join(dir, "x.dict")
		os.WriteFile(lm, []byte("not a language model\n"), 0o644)
		os.WriteFile(dict, []byte("hello HH AH L OW\n"), 0o644)
		return lm, dict, nil
	}
	r := New(Config{Decoders: 1, Builder: counted.wrap(garbage), CacheDir: t.TempDir()})
	defer r.Close()
	for _, first := range []string{"fail", "garbage"} {
		for i := 1; i <= 2; i++ {
			_, err := r.Adapt(context.Background(), stt.Domain{Key: first, Texts: []string{first}})
			if err == nil {
				t.Errorf("%s: Adapt succeeded", first)
			}
			if n := counted.count(first); n != i {
				t.Errorf("%s: %d builds after %d calls, want one each", first, n, i)
			}
			t.Logf("%s: %v", first, err)
		}
	}
	if entries, _ := os.ReadDir(r.c.CacheDir); len(entries) != 0 {
		t.Errorf("failed builds left %d directories", len(entries))
	}
	// Without a builder, or texts, Adapt is the generic recognizer.
	plain := New(Config{})
	defer plain.Close()
	if a, err := plain.Adapt(context.Background(), stt.Domain{Key: "k", Texts: []string{"hello"}}); a != stt.Recognizer(plain) || err != nil {
		t.Errorf("no builder: %v, %v", a, err)
	}
	if a, err := r.Adapt(context.Background(), stt.Domain{Key: "k"}); a != stt.Recognizer(r) || err != nil {
		t.Errorf("no texts: %v, %v", a, err)
	}
}

// Close frees the decoders: a stream open at the time finishes, its
// decoder is freed when it closes, and later calls fail.
func TestClose(t *testing.T) {
	need(t)
	t.Parallel()
	r, s := newDental(t, Config{})
	st, err := s.Open(context.Background(), 8000, "en")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	pcm, rate := said(t, "no thank you goodbye")
	if err := st.Write(phone(pcm, rate)); err != nil {
		t.Fatal(err)
	}
	if res, err := st.Close(); err != nil || res.Text == "" {
		t.Errorf("stream open at Close: %+v, %v", res, err)
	}
	for _, rec := range []stt.Recognizer{r, s} {
		if _, err := rec.Transcribe(context.Background(), phone(pcm, rate), 8000, "en"); !errors.Is(err, stt.ErrUnavailable) {
			t.Errorf("%T after Close: %v, want ErrUnavailable", rec, err)
		}
	}
	if _, err := r.Adapt(context.Background(), stt.Domain{Key: "x", Texts: []string{"x"}}); err == nil {
		t.Error("Adapt after Close: no error")
	}
}

func TestSilence(t *testing.T) {
	need(t)
	t.Parallel()
	_, s := newDental(t, Config{})
	res, err := s.Transcribe(context.Background(), audio.Silence(8000, 2*time.Second), 8000, "")
	if err != nil || res.Text != "" || res.Audio != 2*time.Second {
		t.Errorf("silence: %+v, %v; want empty text, 2s", res, err)
	}
}

// Requests refused before any decoder is borrowed: empty audio, other
// languages, bad rates, too much audio; a missing model is ErrUnavailable.
func TestRequests(t *testing.T) {
	t.Parallel()
	r := New(Config{ModelDir: t.TempDir()}) // no model: nothing can load
	if res, err := r.Transcribe(context.Background(), nil, 8000, "en"); err != nil || res != (stt.Result{Language: Language}) {
		t.Errorf("empty: %+v, %v", res, err)
	}
	for _, l := range []string{"fr", "de-DE", "english"} {
		if _, err := r.Transcribe(context.Background(), audio.Silence(8000, time.Second), 8000, l); !errors.Is(err, stt.ErrLanguage) {
			t.Errorf("%q: %v, want ErrLanguage", l, err)
		}
		if _, err := r.Open(context.Background(), 8000, l); !errors.Is(err, stt.ErrLanguage) {
			t.Errorf("Open %q: %v, want ErrLanguage", l, err)
		}
	}
	for _, l := range []string{"", "en", "en-US", "en-GB"} {
		if !supported(l) {
			t.Errorf("%q not supported", l)
		}
	}
	if _, err := r.Transcribe(context.Background(), make([]int16, 8000*61), 8000, "en"); !errors.Is(err, stt.ErrAudioTooLong) {
		t.Errorf("61 s: %v, want ErrAudioTooLong", err)
	}
	if _, err := r.Open(context.Background(), 0, "en"); err == nil {
		t.Error("rate 0: no error")
	}
	_, err := r.Transcribe(context.Background(), audio.Silence(8000, time.Second), 8000, "en")
	if !errors.Is(err, stt.ErrUnavailable) || (Available() == nil && !strings.Contains(err.Error(), "pocketsphinx-en-us")) {
		t.Errorf("missing model: %v, want ErrUnavailable naming the packages", err)
	}
	if _, err := New(Config{MLLR: "/nonexistent/mllr_matrix"}).Open(context.Background(), 8000, "en"); !errors.Is(err, stt.ErrUnavailable) {
		t.Errorf("missing MLLR transform: %v, want ErrUnavailable", err)
	}
}

// BenchmarkStream reports, for one 8 kHz utterance streamed in 20 ms
// frames: CPU is what the process used (cpu-s/audio-s), and close-ms the
// wait from Close to the final text.
func BenchmarkStream(b *testing.B) {
	need(b)
	for _, model := range []string{"generic", "domain"} {
		b.Run(model, func(b *testing.B) {
			r := New(Config{Decoders: 1, Builder: handBuilder(filepath.Join(DefaultModelDir, dictFile)), CacheDir: b.TempDir()})
			defer r.Close()
			var s stt.Streamer = r
			if model == "domain" {
				a, err := r.Adapt(context.Background(), stt.Domain{Key: "dental", Texts: dental})
				if err != nil {
					b.Fatal(err)
				}
				s = a.(stt.Streamer)
			}
			pcm, rate := speak(b, "I would like to book an appointment on friday afternoon")
			in := phone(pcm, rate)
			if _, err := s.Transcribe(context.Background(), in, 8000, "en"); err != nil { // loads the decoder
				b.Fatal(err)
			}
			var closing time.Duration
			c0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				st, err := s.Open(context.Background(), 8000, "en")
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < len(in); i += 160 {
					st.Write(in[i:min(i+160, len(in))])
				}
				t0 := time.Now()
				if _, err := st.Close(); err != nil {
					b.Fatal(err)
				}
				closing += time.Since(t0)
			}
			audioS := stt.Duration(len(in), 8000).Seconds() * float64(b.N)
			b.ReportMetric((cpuTime()-c0).Seconds()/audioS, "cpu-s/audio-s")
			b.ReportMetric(float64(closing.Milliseconds())/float64(b.N), "close-ms")
		})
	}
}

func TestWithOptions(t *testing.T) {
	got := strings.Join(withOptions([]string{"-fwdflat", "no", "-lw", "6.5"}, []string{"-lw", "9", "-wip", "0.2"}), " ")
	if want := "-fwdflat no -lw 9 -wip 0.2"; got != want {
		t.Errorf("withOptions = %q, want %q", got, want)
	}
	if got := strings.Join(withOptions([]string{"-fwdflat", "no"}, nil), " "); got != "-fwdflat no" {
		t.Errorf("withOptions with nothing over = %q", got)
	}
}

// Options reach every decoder in place of the tuned ones; narrowband
// options only the decoders of phone audio, which they alone split off.
func TestOptionsReachTheirDecoders(t *testing.T) {
	r := New(Config{Options: []string{"-fwdflat", "yes", "-lw", "9"}, NarrowbandOptions: []string{"-topn", "8"}})
	wide := strings.Join(r.args("x.lm", "x.dict", false), " ")
	narrow := strings.Join(r.args("x.lm", "x.dict", true), " ")
	if !strings.HasSuffix(wide, "-fwdflat yes -lw 9") || strings.Contains(wide, "-topn") {
		t.Errorf("wideband options %q", wide)
	}
	if !strings.HasSuffix(narrow, "-fwdflat yes -lw 9 -topn 8") {
		t.Errorf("narrowband options %q", narrow)
	}
	if !r.narrowband(8000) || r.narrowband(16000) {
		t.Errorf("narrowband options do not give 8 kHz audio decoders of its own")
	}
	if New(Config{}).narrowband(8000) {
		t.Errorf("without a narrowband transform or options, 8 kHz audio has decoders of its own")
	}
	odd := New(Config{NarrowbandOptions: []string{"-topn"}})
	if err := odd.checkOptions(); !errors.Is(err, stt.ErrUnavailable) {
		t.Errorf("an option without a value: %v", err)
	}
	if err := r.checkOptions(); err != nil {
		t.Errorf("options in pairs: %v", err)
	}
}
