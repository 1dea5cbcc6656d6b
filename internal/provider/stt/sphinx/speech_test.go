package sphinx

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/media/audio"
)

// need skips the test (fails it under CI=true) unless the pocketsphinx
// libraries, the model and espeak-ng are installed.
func need(tb testing.TB) {
	tb.Helper()
	var missing []string
	if err := Available(); err != nil {
		missing = append(missing, err.Error())
	}
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		missing = append(missing, "espeak-ng: "+err.Error()+" (install the Debian package espeak-ng)")
	}
	if len(missing) == 0 {
		return
	}
	msg := "needs pocketsphinx, pocketsphinx-en-us and espeak-ng: " + strings.Join(missing, "; ")
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// speak synthesizes text with espeak-ng (en-us, 130 words a minute):
// mono 16-bit PCM at its native 22050 Hz.
func speak(tb testing.TB, text string) ([]int16, int) {
	tb.Helper()
	out, err := exec.Command("espeak-ng", "-v", "en-us", "-s", "130", "--stdout", text).Output()
	if err != nil {
		tb.Fatalf("espeak-ng %q: %v", text, err)
	}
	w, err := audio.ReadWAV(bytes.NewReader(out))
	if err != nil {
		tb.Fatalf("espeak-ng %q: %v", text, err)
	}
	if len(w.Channels) != 1 || len(w.Channels[0]) == 0 {
		tb.Fatalf("espeak-ng %q: %d channels", text, len(w.Channels))
	}
	return w.Channels[0], w.Rate
}

// phone is speech as a G.711 μ-law leg delivers it: 8 kHz, companded.
func phone(pcm []int16, rate int) []int16 {
	pcm = audio.NewResampler(rate, 8000).Process(nil, pcm)
	return audio.DecodeULaw(nil, audio.EncodeULaw(nil, pcm))
}

// wideband is speech as a 16 kHz leg delivers it.
func wideband(pcm []int16, rate int) []int16 {
	return audio.NewResampler(rate, 16000).Process(nil, pcm)
}

// dental is what callers of a dental practice's front desk say: the
// domain the tests adapt to, and the sentences they score.
var dental = []string{
	"hello I would like to book an appointment",
	"can I see the dentist on monday morning",
	"I have a bad pain in my tooth",
	"my tooth hurts when I drink something cold",
	"do you have anything available this week",
	"I need a cleaning and a checkup",
	"what time do you open on saturday",
	"can I move my appointment to friday afternoon",
	"I need to cancel my appointment",
	"do you take my insurance",
	"how much does a filling cost",
	"my gums are bleeding",
	"I lost a filling yesterday",
	"is the doctor available tomorrow",
	"can you call me back please",
	"my name is john smith",
	"yes that works for me",
	"no thank you goodbye",
	"I am a new patient",
	"can I bring my daughter too",
	"what is your address",
	"is there parking near the office",
	"I would like the earliest appointment",
	"thank you very much for your help",
}

// scored is one sentence's recognition.
type scored struct {
	want, got string
	errs, n   int
}

// wordErrors is the word-level edit distance between want and got, and
// the number of words in want.
func wordErrors(want, got string) (int, int) {
	w, g := strings.Fields(strings.ToLower(want)), strings.Fields(strings.ToLower(got))
	prev := make([]int, len(g)+1)
	cur := make([]int, len(g)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(w); i++ {
		cur[0] = i
		for j := 1; j <= len(g); j++ {
			sub := prev[j-1]
			if w[i-1] != g[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(g)], len(w)
}

// accuracy is 1 - the word error rate over scores.
func accuracy(scores []scored) float64 {
	var errs, n int
	for _, s := range scores {
		errs += s.errs
		n += s.n
	}
	return 1 - float64(errs)/float64(n)
}

// handBuilder is a ModelBuilder for tests: a bigram back-off model
// (absolute discounting) of texts, and the words' pronunciations taken
// from the model's cmudict. Words cmudict lacks fail the build.
func handBuilder(dictPath string) ModelBuilder {
	return func(ctx context.Context, texts []string, dir string) (string, string, error) {
		lm, words := bigramARPA(texts)
		dict, err := pronunciations(dictPath, words)
		if err != nil {
			return "", "", err
		}
		lmPath, dictOut := filepath.Join(dir, "domain.lm"), filepath.Join(dir, "domain.dict")
		if err := os.WriteFile(lmPath, []byte(lm), 0o644); err != nil {
			return "", "", err
		}
		return lmPath, dictOut, os.WriteFile(dictOut, []byte(dict), 0o644)
	}
}

// bigramARPA writes an ARPA bigram model of texts (lower-cased words) and
// returns it with its words.
func bigramARPA(texts []string) (string, []string) {
	const discount = 0.5
	uni := map[string]float64{}
	bi := map[[2]string]float64{}
	var total float64
	for _, t := range texts {
		ws := append(append([]string{"<s>"}, strings.Fields(strings.ToLower(t))...), "</s>")
		for i, w := range ws {
			if i > 0 {
				uni[w]++
				total++
				bi[[2]string{ws[i-1], w}]++
			}
		}
		uni["<s>"] += 0 // present, never predicted
	}
	var words []string
	for w := range uni {
		words = append(words, w)
	}
	slices.Sort(words)
	history := map[string]float64{}
	followers := map[string][]string{}
	for k, c := range bi {
		history[k[0]] += c
		followers[k[0]] = append(followers[k[0]], k[1])
	}
	p1 := func(w string) float64 { return uni[w] / total }
	var b strings.Builder
	fmt.Fprintf(&b, "\\data\\\nngram 1=%d\nngram 2=%d\n\n\\1-grams:\n", len(words), len(bi))
	for _, w := range words {
		backoff := 0.0
		if h := history[w]; h > 0 {
			var left, lower float64 = 1, 1
			for _, v := range followers[w] {
				left -= (bi[[2]string{w, v}] - discount) / h
				lower -= p1(v)
			}
			backoff = math.Log10(left / lower)
		}
		lp := -99.0
		if w != "<s>" {
			lp = math.Log10(p1(w))
		}
		fmt.Fprintf(&b, "%.4f %s %.4f\n", lp, w, backoff)
	}
	b.WriteString("\n\\2-grams:\n")
	keys := make([][2]string, 0, len(bi))
	for k := range bi {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [2]string) int { return strings.Compare(x[0]+" "+x[1], y[0]+" "+y[1]) })
	for _, k := range keys {
		fmt.Fprintf(&b, "%.4f %s %s\n", math.Log10((bi[k]-discount)/history[k[0]]), k[0], k[1])
	}
	b.WriteString("\n\\end\\\n")
	return b.String(), words
}

// pronunciations are the cmudict lines of words (alternates included).
func pronunciations(dictPath string, words []string) (string, error) {
	want := map[string]bool{}
	for _, w := range words {
		if w != "<s>" && w != "</s>" {
			want[w] = true
		}
	}
	f, err := os.Open(dictPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	found := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		head, _, _ := strings.Cut(line, " ")
		base, _, _ := strings.Cut(head, "(")
		if want[base] {
			b.WriteString(line + "\n")
			found[base] = true
		}
	}
	for w := range want {
		if !found[w] {
			return "", fmt.Errorf("no pronunciation of %q", w)
		}
	}
	return b.String(), sc.Err()
}

// builds counts a builder's runs.
type builds struct {
	mu sync.Mutex
	n  map[string]int // by the first text
}

func (c *builds) wrap(b ModelBuilder) ModelBuilder {
	return func(ctx context.Context, texts []string, dir string) (string, string, error) {
		c.mu.Lock()
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[texts[0]]++
		c.mu.Unlock()
		return b(ctx, texts, dir)
	}
}

func (c *builds) count(first string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[first]
}
