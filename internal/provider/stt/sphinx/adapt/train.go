package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// sphinxtrain's tools are not on PATH in Debian's package.
const sphinxtrainDir = "/usr/lib/sphinxtrain"

// model is the files of the acoustic model the transform adapts.
type model struct {
	dir string // the pocketsphinx model directory (en-us/ and its dictionary beside)
}

func (m model) hmm(name string) string { return filepath.Join(m.dir, "en-us", name) }
func (m model) dict() string           { return filepath.Join(m.dir, "cmudict-en-us.dict") }
func (m model) lm() string             { return filepath.Join(m.dir, "en-us.lm.bin") }

// features turns the training WAVs (ids under wavDir) into the model's
// cepstra with sphinx_fe and the model's own feat.params.
func features(ctx context.Context, m model, ctl, wavDir, mfcDir string) error {
	return run(ctx, "sphinx_fe", "-argfile", m.hmm("feat.params"), "-samprate", "16000",
		"-c", ctl, "-di", wavDir, "-do", mfcDir, "-ei", "wav", "-eo", "mfc", "-mswav", "yes")
}

// solve counts, with bw, how the model's Gaussians explain the training
// cepstra aligned to their transcripts, and has mllr_solve find the one
// global transform of the means that explains them best.
func solve(ctx context.Context, m model, work, ctl, lsn, mfcDir, out string) error {
	mdef := filepath.Join(work, "mdef.txt")
	if err := run(ctx, "pocketsphinx_mdef_convert", "-text", m.hmm("mdef"), mdef); err != nil {
		return err
	}
	mixw := filepath.Join(work, "mixture_weights")
	w, err := readSendump(m.hmm("sendump"))
	if err != nil {
		return err
	}
	if err := w.write(mixw); err != nil {
		return err
	}
	accum := filepath.Join(work, "accum")
	if err := os.MkdirAll(accum, 0o755); err != nil {
		return err
	}
	err = run(ctx, filepath.Join(sphinxtrainDir, "bw"),
		"-moddeffn", mdef, "-ts2cbfn", ".ptm.",
		"-meanfn", m.hmm("means"), "-varfn", m.hmm("variances"),
		"-mixwfn", mixw, "-tmatfn", m.hmm("transition_matrices"),
		"-feat", "1s_c_d_dd", "-svspec", "0-12/13-25/26-38",
		"-cmn", "batch", "-agc", "none", "-varnorm", "no",
		"-dictfn", m.dict(), "-fdictfn", m.hmm("noisedict"),
		"-ctlfn", ctl, "-lsnfn", lsn, "-cepdir", mfcDir,
		"-accumdir", accum, "-timing", "no")
	if err != nil {
		return err
	}
	if logDir != "" {
		if b, err := os.ReadFile(filepath.Join(logDir, "bw.log")); err == nil {
			fmt.Fprintf(os.Stderr, "bw could not align %d utterances to their transcripts (ignored; bw.log)\n",
				strings.Count(string(b), " ignored\n"))
		}
	}
	if err := run(ctx, filepath.Join(sphinxtrainDir, "mllr_solve"),
		"-meanfn", m.hmm("means"), "-varfn", m.hmm("variances"),
		"-outmllrfn", out, "-accumdir", accum); err != nil {
		return err
	}
	if mapDir == "" {
		return nil
	}
	// MAP re-estimates every codebook's Gaussians from the same counts,
	// each moved from the model's towards the training audio as far as
	// its data warrants: many transforms in one, where pocketsphinx 0.8
	// applies one MLLR class.
	if err := os.MkdirAll(mapDir, 0o755); err != nil {
		return err
	}
	return run(ctx, filepath.Join(sphinxtrainDir, "map_adapt"),
		"-moddeffn", mdef, "-ts2cbfn", ".ptm.",
		"-meanfn", m.hmm("means"), "-varfn", m.hmm("variances"),
		"-mixwfn", mixw, "-tmatfn", m.hmm("transition_matrices"),
		"-accumdir", accum,
		"-mapmeanfn", filepath.Join(mapDir, "means"), "-mapvarfn", filepath.Join(mapDir, "variances"),
		"-mapmixwfn", filepath.Join(work, "map_mixture_weights"), "-maptmatfn", filepath.Join(work, "map_transition_matrices"))
}

// mapDir, when set, is where solve also writes MAP-adapted means and
// variances.
var mapDir string

// logDir, when set, keeps each tool's output as <tool>.log.
var logDir string

// run runs a tool; its output is shown (the end of it) when it fails.
func run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	out, err := cmd.CombinedOutput()
	if logDir != "" {
		os.WriteFile(filepath.Join(logDir, filepath.Base(name)+".log"), out, 0o644)
	}
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return fmt.Errorf("%s: %w:\n%s", filepath.Base(name), err, strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
	return nil
}
