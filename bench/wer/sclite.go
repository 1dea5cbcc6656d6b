package wer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Sclite is NIST's scoring tool (Debian package sctk).
const Sclite = "/usr/lib/sctk/bin/sclite"

// ScliteAvailable says whether sclite is installed: nil, or an error
// naming the package.
func ScliteAvailable() error {
	if _, err := exec.LookPath(Sclite); err != nil {
		return fmt.Errorf("sclite: %w (install the Debian package sctk)", err)
	}
	return nil
}

// Score is sclite's count of a system's errors against the references.
type Score struct {
	Sentences, Words             int // in the references
	Correct, Sub, Del, Ins, Errs int // words
	SentErrs                     int // sentences with any error
}

// WER is the word error rate in percent: (substitutions + deletions +
// insertions) / reference words. It can pass 100 (insertions).
func (s Score) WER() float64 {
	if s.Words == 0 {
		return 0
	}
	return 100 * float64(s.Errs) / float64(s.Words)
}

// Accuracy is word accuracy in percent: 100 - WER (negative when
// insertions outnumber the words right).
func (s Score) Accuracy() float64 { return 100 - s.WER() }

// percent of the reference words.
func (s Score) percent(n int) float64 {
	if s.Words == 0 {
		return 0
	}
	return 100 * float64(n) / float64(s.Words)
}

// Transcript is one utterance scored: its id, the reference words and
// what the recognizer said (both normalised).
type Transcript struct {
	ID, Ref, Hyp string
}

// ScoreTranscripts writes ref.trn and hyp.trn for ts into dir, has sclite align them
// (utterance ids as speaker_utterance: sclite's spu_id), and reads its raw
// summary (name.raw, with the per-utterance alignments in name.pra beside
// it). The speaker (its letters and digits) is the same for every
// utterance.
func ScoreTranscripts(ctx context.Context, dir, name, speaker string, ts []Transcript) (Score, error) {
	if len(ts) == 0 {
		return Score{}, errors.New("sclite: nothing to score")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Score{}, err
	}
	var ref, hyp bytes.Buffer
	for _, t := range ts {
		id := strings.ReplaceAll(utteranceID(speaker), "-", "") + "_" + utteranceID(t.ID)
		fmt.Fprintf(&ref, "%s (%s)\n", t.Ref, id)
		fmt.Fprintf(&hyp, "%s (%s)\n", t.Hyp, id)
	}
	refPath, hypPath := filepath.Join(dir, name+".ref.trn"), filepath.Join(dir, name+".hyp.trn")
	if err := os.WriteFile(refPath, ref.Bytes(), 0o644); err != nil {
		return Score{}, err
	}
	if err := os.WriteFile(hypPath, hyp.Bytes(), 0o644); err != nil {
		return Score{}, err
	}
	cmd := exec.CommandContext(ctx, Sclite, "-r", refPath, "trn", "-h", hypPath, "trn", "-i", "spu_id",
		"-o", "rsum", "pra", "-O", dir, "-n", name, "-f", "0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Score{}, fmt.Errorf("sclite %s: %w: %s", name, err, clip(strings.TrimSpace(string(out)), 500))
	}
	raw, err := os.ReadFile(filepath.Join(dir, name+".raw"))
	if err != nil {
		return Score{}, fmt.Errorf("sclite %s: %w", name, err)
	}
	s, err := ParseSummary(raw)
	if err != nil {
		return Score{}, fmt.Errorf("sclite %s: %w", name, err)
	}
	if s.Sentences != len(ts) {
		return Score{}, fmt.Errorf("sclite %s scored %d utterances of %d", name, s.Sentences, len(ts))
	}
	return s, nil
}

// ParseSummary reads the totals of sclite's raw summary report (-o rsum):
// the "| Sum |" row of counts, "# Snt # Wrd | Corr Sub Del Ins Err S.Err".
// Err must be Sub + Del + Ins and Corr + Sub + Del the words, or the
// report is not what this parser understands.
func ParseSummary(raw []byte) (Score, error) {
	for _, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) != 5 || strings.TrimSpace(cells[1]) != "Sum" {
			continue
		}
		head, counts := strings.Fields(cells[2]), strings.Fields(cells[3])
		if len(head) != 2 || len(counts) != 6 {
			return Score{}, fmt.Errorf("sclite summary row %q: want 2 + 6 counts", strings.TrimSpace(line))
		}
		var n [8]int
		for i, f := range append(head, counts...) {
			v, err := strconv.Atoi(f)
			if err != nil || v < 0 {
				return Score{}, fmt.Errorf("sclite summary row %q: %q is not a count", strings.TrimSpace(line), f)
			}
			n[i] = v
		}
		s := Score{Sentences: n[0], Words: n[1], Correct: n[2], Sub: n[3], Del: n[4], Ins: n[5], Errs: n[6], SentErrs: n[7]}
		if s.Errs != s.Sub+s.Del+s.Ins || s.Correct+s.Sub+s.Del != s.Words || s.SentErrs > s.Sentences {
			return Score{}, fmt.Errorf("sclite summary row %q does not add up", strings.TrimSpace(line))
		}
		return s, nil
	}
	return Score{}, errors.New("sclite summary: no \"| Sum |\" row of counts (was it run with -o rsum?)")
}
