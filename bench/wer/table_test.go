package wer

import (
	"strings"
	"testing"
	"time"
)

func TestMarkdown(t *testing.T) {
	rows := []Row{
		{Set: "dental", Voice: "flite-slt", Codec: PCMU, Model: Generic, Mode: OnePiece, Utterances: 3,
			Score:       Score{Sentences: 3, Words: 20, Correct: 15, Sub: 3, Del: 2, Ins: 1, Errs: 6, SentErrs: 2},
			CPUPerAudio: 0.456, FinalP50: 1234 * time.Millisecond, FinalP90: 2 * time.Second, Failed: 1, Damaged: 0, Retried: 2},
		{Set: "dental", Voice: "flite-slt", Codec: G722, NotYet: "no codec"},
		{Set: "everyday", Voice: "flite-slt", Codec: G722, NotYet: "no codec"},
		{Set: "asterisk", Voice: "allison", Codec: G722, NotYet: "narrow"},
	}
	got := Markdown(rows, "abc", "make bench-stt")
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want header, rule and 3 rows:\n%s", len(lines), got)
	}
	for i, want := range []string{
		"| dental / flite-slt | G.711 | generic | one-piece | 3 (20) | **70.0 %** | 15.0 / 10.0 / 5.0 % | 0.46 | 1.23 s / 2.00 s | 1 / 0 (2) | abc | `make bench-stt` |",
		"| dental / flite-slt, everyday / flite-slt | G.722 | – | – | – | not yet: no codec | – | – | – | – | abc | `make bench-stt` |",
		"| asterisk / allison | G.722 | – | – | – | not yet: narrow | – | – | – | – | abc | `make bench-stt` |",
	} {
		if lines[i+2] != want {
			t.Errorf("row %d:\n%s\nwant\n%s", i+1, lines[i+2], want)
		}
	}
}
