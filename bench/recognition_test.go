package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/bench/wer"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/stt/sphinx"
	"github.com/parley-voice/parley/internal/provider/stt/sphinx/lm"
)

// recognitionConfig is the shape of a BenchmarkRecognition run, from the
// environment (PARLEY_BENCH_STT_*).
type recognitionConfig struct {
	sets    []string      // SETS: asterisk, dental, everyday (default all three)
	voices  []string      // VOICES: voices of the sentence sets (default flite-slt,festival-kal,espeak-ng)
	limit   int           // LIMIT: utterances per set and voice, evenly spread (default 30; 0: all)
	codecs  []string      // CODECS: PCMU, G722 (default both)
	models  []string      // MODELS: generic, adapted (default both; adapted needs an stt.Adaptable engine)
	engine  string        // ENGINE: the recognizer (default sphinx: internal/provider/stt/sphinx)
	timeout time.Duration // TIMEOUT: the engine's limit per utterance, where it has one (sphinx has none; default 60s, so a loaded machine slows the run instead of failing turns)
	calls   int           // CALLS: utterances carried over the line at once (default 16)
	workers int           // WORKERS: one-piece recognitions at once (default 2)
	streams int           // STREAMS: streamed recognitions at once (default 2)
	out     string        // OUT: trn files, sclite reports and table.md (default results/stt)
	keep    bool          // KEEP_AUDIO=1: also what the line delivered of each utterance, as WAVs under OUT
}

func readRecognitionConfig(tb testing.TB) recognitionConfig {
	tb.Helper()
	c := recognitionConfig{
		sets: []string{"asterisk", "dental", "everyday"}, voices: []string{"flite-slt", "festival-kal", "espeak-ng"},
		limit: 30, codecs: []string{"PCMU", "G722"}, models: []string{wer.Generic, wer.Adapted},
		engine: "sphinx", timeout: time.Minute, calls: 16, workers: 2, streams: 2, out: filepath.Join("results", "stt"),
	}
	list := func(name string, p *[]string) {
		if v := os.Getenv(name); v != "" {
			*p = nil
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f != "" {
					*p = append(*p, f)
				}
			}
		}
	}
	list("PARLEY_BENCH_STT_SETS", &c.sets)
	list("PARLEY_BENCH_STT_VOICES", &c.voices)
	list("PARLEY_BENCH_STT_CODECS", &c.codecs)
	list("PARLEY_BENCH_STT_MODELS", &c.models)
	for name, p := range map[string]*int{"PARLEY_BENCH_STT_LIMIT": &c.limit, "PARLEY_BENCH_STT_CALLS": &c.calls,
		"PARLEY_BENCH_STT_WORKERS": &c.workers, "PARLEY_BENCH_STT_STREAMS": &c.streams} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || (n == 0 && p != &c.limit) {
				tb.Fatalf("%s=%q: want a count", name, v)
			}
			*p = n
		}
	}
	if v := os.Getenv("PARLEY_BENCH_STT_ENGINE"); v != "" {
		c.engine = v
	}
	if v := os.Getenv("PARLEY_BENCH_STT_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			tb.Fatalf("PARLEY_BENCH_STT_TIMEOUT=%q: want a duration", v)
		}
		c.timeout = d
	}
	if v := os.Getenv("PARLEY_BENCH_STT_OUT"); v != "" {
		c.out = v
	}
	c.keep = os.Getenv("PARLEY_BENCH_STT_KEEP_AUDIO") == "1"
	for _, s := range c.sets {
		if !slices.Contains([]string{"asterisk", "dental", "everyday"}, s) {
			tb.Fatalf("PARLEY_BENCH_STT_SETS: no set %q (asterisk, dental, everyday)", s)
		}
	}
	return c
}

// command is how to repeat this run: make bench-stt with the
// PARLEY_BENCH_STT_* variables that were set.
func (c recognitionConfig) command() string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PARLEY_BENCH_STT_") && !strings.HasPrefix(kv, "PARLEY_BENCH_STT_OUT=") {
			name, value, _ := strings.Cut(kv, "=")
			env = append(env, name+"="+shellWord(value))
		}
	}
	slices.Sort(env)
	return strings.TrimSpace(strings.Join(env, " ") + " make bench-stt")
}

// shellWord quotes s for a shell when it holds anything but letters,
// digits and ,._/:-.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,._/:-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// recognizer is the recognizer the run measures.
func (c recognitionConfig) recognizer(tb testing.TB) stt.Recognizer {
	tb.Helper()
	switch c.engine {
	case "sphinx":
		if err := sphinx.Available(); err != nil {
			tb.Fatal(err)
		}
		// As parley serve configures it: the phone transform and cepstral
		// mean for G.711 legs, a domain model per agent, no limit per
		// utterance.
		cache := tb.TempDir()
		phone, narrowOpts, err := sphinx.WritePhoneAdaptation(cache, sphinx.DefaultModelDir)
		if err != nil {
			tb.Fatal(err)
		}
		r := sphinx.New(sphinx.Config{Builder: sphinx.LMBuilder(lm.Options{}), NarrowbandMLLR: phone,
			NarrowbandOptions: narrowOpts, CacheDir: cache})
		tb.Cleanup(func() { r.Close() })
		return r
	default:
		tb.Fatalf("PARLEY_BENCH_STT_ENGINE=%q: no such engine (sphinx)", c.engine)
		return nil
	}
}

// BenchmarkRecognition scores the local recognizer on labelled speech as
// a call carries it (`make bench-stt`, part of `make bench`; method and
// results in docs/benchmarks.md): Asterisk's human prompts, and sentences
// in and out of the bench agent's dental domain in synthetic voices, each
// played over a real SIP/RTP call on 127.0.0.1 with each codec, then
// recognised (one-piece, and streamed when the engine streams; generic,
// and adapted to the domain when the engine adapts) and scored with NIST
// sclite. It prints the table and writes it to PARLEY_BENCH_STT_OUT. A
// missing package fails the run. Use -benchtime 1x.
func BenchmarkRecognition(b *testing.B) {
	cfg := readRecognitionConfig(b)
	if err := wer.ScliteAvailable(); err != nil {
		b.Fatal(err)
	}
	rec := cfg.recognizer(b)
	ctx := context.Background()
	sets := recognitionSets(b, ctx, cfg)
	var codecs []wer.Codec
	for _, n := range cfg.codecs {
		c, err := wer.CodecNamed(n)
		if err != nil {
			b.Fatalf("PARLEY_BENCH_STT_CODECS: %v", err)
		}
		codecs = append(codecs, c)
	}
	bench := wer.Bench{
		Recognizer: rec, Domain: wer.DentalDomain(), Models: cfg.models, Codecs: codecs,
		Calls: cfg.calls, Workers: cfg.workers, Streams: cfg.streams, Out: cfg.out, KeepAudio: cfg.keep,
		Progress: func(s string) { progress(b, s) },
	}
	code := codeVersion() // before the run: the tree may change while it runs
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		rows, err := bench.Run(ctx, sets)
		if err != nil {
			b.Fatal(err)
		}
		table := wer.Markdown(rows, code, cfg.command())
		b.Logf("done in %v; sclite's reports (.pra: every utterance aligned) are in %s", time.Since(start).Round(time.Second), cfg.out)
		if err := os.WriteFile(filepath.Join(cfg.out, "table.md"), []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
		fmt.Println(table)
	}
}

// recognitionSets loads and synthesizes the sets the run asks for.
func recognitionSets(b *testing.B, ctx context.Context, cfg recognitionConfig) []wer.Set {
	b.Helper()
	var sets []wer.Set
	for _, name := range cfg.sets {
		if name == "asterisk" {
			s, err := wer.AsteriskSet(wer.AsteriskSounds, wer.AsteriskTranscript)
			if err != nil {
				b.Fatal(err)
			}
			s = s.Subset(cfg.limit)
			progress(b, fmt.Sprintf("%s: %s; %.0f s, %d words", s.Label(), s.Note, s.Audio().Seconds(), s.Words()))
			sets = append(sets, s)
			continue
		}
		sentences, inDomain := wer.Everyday(), false
		if name == "dental" {
			sentences, inDomain = wer.DentalCallers(), true
		}
		for _, vn := range cfg.voices {
			v, err := wer.VoiceNamed(vn)
			if err != nil {
				b.Fatalf("PARLEY_BENCH_STT_VOICES: %v", err)
			}
			s, err := wer.SentenceSet(ctx, name, inDomain, sentences, v)
			if err != nil {
				b.Fatal(err)
			}
			s = s.Subset(cfg.limit)
			progress(b, fmt.Sprintf("%s: %d utterances, %.0f s, %d words", s.Label(), len(s.Utterances), s.Audio().Seconds(), s.Words()))
			sets = append(sets, s)
		}
	}
	return sets
}

// progress logs a step, and prints it at once: a full run takes long, and
// a benchmark's log shows only at its end.
func progress(b *testing.B, s string) {
	b.Helper()
	b.Log(s)
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), s)
}

// codeVersion is the commit measured, with "+" when the tree has changes.
func codeVersion() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	v := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		v += "+"
	}
	return v
}
