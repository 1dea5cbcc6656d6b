package wer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// needSclite skips the test when sclite is missing (fails it under CI=true).
func needSclite(tb testing.TB) {
	tb.Helper()
	if err := ScliteAvailable(); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal(err)
		}
		tb.Skip(err)
	}
}

func TestParseSummary(t *testing.T) {
	// testdata/sclite/rsum.raw is sclite 2.10's raw summary of a real run
	// (three dental sentences in flite's slt voice over G.711, main's
	// pocketsphinx).
	raw, err := os.ReadFile("testdata/sclite/rsum.raw")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseSummary(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := Score{Sentences: 3, Words: 23, Correct: 0, Sub: 5, Del: 18, Ins: 0, Errs: 23, SentErrs: 3}
	if got != want {
		t.Errorf("ParseSummary = %+v, want %+v", got, want)
	}
	if got.WER() != 100 || got.Accuracy() != 0 {
		t.Errorf("WER %v accuracy %v, want 100 and 0", got.WER(), got.Accuracy())
	}

	// The percentages report (-o sum) has no row of counts.
	pct, err := os.ReadFile("testdata/sclite/sum-percent.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"percentages":                         pct,
		"empty":                               nil,
		"not counts":                          []byte("| Sum | 3 x | 1 2 3 4 5 6 |\n"),
		"too few":                             []byte("| Sum | 3 23 | 0 5 18 0 23 |\n"),
		"adds up wrong":                       []byte("| Sum | 3 23 | 0 5 18 0 22 3 |\n"),
		"negative":                            []byte("| Sum | 3 23 | -1 6 18 0 24 3 |\n"),
		"more sentence errors than sentences": []byte("| Sum | 3 23 | 0 5 18 0 23 4 |\n"),
	} {
		if s, err := ParseSummary(b); err == nil {
			t.Errorf("%s: ParseSummary = %+v, want an error", name, s)
		}
	}
}

func FuzzParseSummary(f *testing.F) {
	if raw, err := os.ReadFile("testdata/sclite/rsum.raw"); err == nil {
		f.Add(raw)
	}
	f.Add([]byte("| Sum | 1 2 | 1 1 0 0 1 1 |"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSummary(b)
		if err != nil {
			return
		}
		if s.Errs != s.Sub+s.Del+s.Ins || s.Correct+s.Sub+s.Del != s.Words || s.SentErrs > s.Sentences || s.WER() < 0 {
			t.Fatalf("ParseSummary accepted %+v", s)
		}
	})
}

func TestScoreTranscripts(t *testing.T) {
	needSclite(t)
	dir := t.TempDir()
	ts := []Transcript{
		{ID: "u1", Ref: "hello acme dental front desk", Hyp: "ah you ah what do"},
		{ID: "u2", Ref: "please enter your password", Hyp: "please enter your pass word"},
		{ID: "u3", Ref: "one two three", Hyp: ""},
		{ID: "u4", Ref: "thank you", Hyp: "thank you"},
	}
	got, err := ScoreTranscripts(context.Background(), dir, "run", "flite-slt", ts)
	if err != nil {
		t.Fatal(err)
	}
	// u1: five substitutions; u2: "password" for "pass word", one
	// substitution and one insertion; u3: three deletions; u4 right.
	want := Score{Sentences: 4, Words: 14, Correct: 5, Sub: 6, Del: 3, Ins: 1, Errs: 10, SentErrs: 3}
	if got != want {
		t.Errorf("score %+v, want %+v", got, want)
	}
	for _, f := range []string{"run.ref.trn", "run.hyp.trn", "run.raw", "run.pra"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("sclite left no %s: %v", f, err)
		}
	}
	ref, _ := os.ReadFile(filepath.Join(dir, "run.ref.trn"))
	if !strings.Contains(string(ref), "thank you (fliteslt_u4)\n") {
		t.Errorf("ref.trn:\n%s", ref)
	}
	if _, err := ScoreTranscripts(context.Background(), dir, "none", "x", nil); err == nil {
		t.Error("nothing to score: no error")
	}
}
