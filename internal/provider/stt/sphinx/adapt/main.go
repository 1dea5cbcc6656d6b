// Command adapt trains the MLLR transform that adapts pocketsphinx's
// Debian en-us acoustic model to phone audio (internal/provider/stt/sphinx,
// model/phone.mllr), and measures what it does. Run it from the
// repository's root (`make stt-adapt`):
//
//	go run ./internal/provider/stt/sphinx/adapt train [-out file] [-cmninit-out file] [-band fill|plain] [-voices n,..] [-sentences n]
//	go run ./internal/provider/stt/sphinx/adapt measure [-band fill|plain] [-prompts n] [transform ...]
//	go run ./internal/provider/stt/sphinx/adapt tune [-voices a,b] [-domain-weight w] [-common-weight w] [-generic-weight w] [-narrowband-options "..."] -- ["-lw 8" ...]
//
// train speaks the training sentences (testdata/phone.txt) in the
// training voices ([trainers]: none the benchmark scores), carries each
// over a G.711 μ-law leg and through the recognizer's own conditioning
// ([overG711]), computes the model's cepstra (sphinx_fe with the model's
// feat.params), aligns them to their transcripts with the model (bw, with
// the model's quantised mixture weights turned back into a
// mixture_weights file) and solves one global MLLR transform of the
// Gaussians' means (mllr_solve). Everything is deterministic: the voices,
// the line and the conditioning's noise.
//
// measure decodes held-out sets (testdata/dental-heldout.txt in flite
// slt, festival kal and espeak-ng; Asterisk's prompts, real human speech)
// over the same line with pocketsphinx_batch and the generic en-us
// language model, without a transform and with each transform given, and
// prints sclite's word accuracy as a Markdown table.
//
// tune is the quick loop for the recognizer's options: held-out dental
// sentences spoken by training voices (never the benchmark's), carried
// over G.711 and recognised in-process by stt/sphinx adapted to the bench
// agent's domain, once per set of pocketsphinx options; it prints word
// accuracy per set. train -map also writes MAP-adapted means and
// variances (for -mean and -var) from the same counts.
//
// It needs Debian's sphinxtrain (bw, mllr_solve), sphinxbase-utils
// (sphinx_fe), pocketsphinx (pocketsphinx_batch, pocketsphinx_mdef_convert),
// pocketsphinx-en-us, espeak-ng, flite, festival with festvox-kdlpc16k,
// sctk and, to measure, festvox-kallpc16k and asterisk-core-sounds-en-wav
// (scripts/bench-packages.txt).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/parley-voice/parley/bench/wer"
)

const pkgDir = "internal/provider/stt/sphinx"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: adapt train|measure|tune [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "train":
		err = trainCmd(ctx, os.Args[2:])
	case "measure":
		err = measureCmd(ctx, os.Args[2:])
	case "tune":
		err = tuneCmd(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (train, measure, tune)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "adapt:", err)
		os.Exit(1)
	}
}

// common flags.
type common struct {
	model model
	work  string
	band  band
}

func (c *common) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.model.dir, "model", "/usr/share/pocketsphinx/model/en-us", "pocketsphinx model directory (en-us/, cmudict-en-us.dict, en-us.lm.bin)")
	fs.StringVar(&c.work, "work", filepath.Join(os.TempDir(), "parley-adapt"), "work directory (audio, features, counts, logs)")
	fs.StringVar((*string)(&c.band), "band", string(bandFill), "how 8 kHz line audio reaches 16 kHz: fill (sphinx.Condition, as the recognizer does) or plain (upsampled only)")
}

func (c *common) check() error {
	if c.band != bandFill && c.band != bandPlain {
		return fmt.Errorf("-band %q: fill or plain", c.band)
	}
	return nil
}

func trainCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("train", flag.ExitOnError)
	var c common
	c.flags(fs)
	out := fs.String("out", filepath.Join(pkgDir, "model", "phone.mllr"), "the transform to write")
	cmnOut := fs.String("cmninit-out", filepath.Join(pkgDir, "model", "phone.cmninit"), "where to write the training audio's cepstral mean (-cmninit for narrowband decoders)")
	textPath := fs.String("text", filepath.Join(pkgDir, "adapt", "testdata", "phone.txt"), "training sentences, one a line")
	voices := fs.String("voices", "", "training voices to use, comma-separated (default all)")
	limit := fs.Int("sentences", 0, "use only the first n sentences (0: all)")
	fs.StringVar(&mapDir, "map", "", "also write MAP-adapted means and variances into this directory")
	fs.Parse(args)
	if err := c.check(); err != nil {
		return err
	}
	start := time.Now()
	work := filepath.Join(c.work, "train-"+string(c.band))
	wavDir, mfcDir := filepath.Join(work, "wav"), filepath.Join(work, "mfc")
	for _, d := range []string{wavDir, mfcDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	logDir = work
	lines, err := readLines(*textPath)
	if err != nil {
		return err
	}
	dict, err := readDictionary(c.model.dict())
	if err != nil {
		return err
	}
	sents, dropped := trainingSentences(lines, dict)
	for _, d := range dropped {
		fmt.Fprintf(os.Stderr, "left out (a word not in the dictionary): %s\n", d)
	}
	if *limit > 0 && *limit < len(sents) {
		sents = sents[:*limit]
	}
	want := map[string]bool{}
	for _, v := range strings.Split(*voices, ",") {
		if v != "" {
			want[v] = true
		}
	}
	texts := make([]string, len(sents))
	for i, s := range sents {
		texts[i] = s.text
	}
	var ctl, lsn strings.Builder
	var ids []string
	var audio time.Duration
	for _, t := range trainers() {
		if len(want) > 0 && !want[t.name] {
			continue
		}
		clips, err := spoken(ctx, t, filepath.Join(c.work, "voices", t.name), texts)
		if err != nil {
			return err
		}
		for i, cl := range clips {
			id := fmt.Sprintf("%s-%04d", t.name, i+1)
			heard := overG711(cl.pcm, cl.rate, c.band)
			audio += time.Duration(len(heard)) * time.Second / 16000
			if err := writeWAV(filepath.Join(wavDir, id+".wav"), heard, 16000); err != nil {
				return err
			}
			ctl.WriteString(id + "\n")
			ids = append(ids, id)
			lsn.WriteString(transcriptLine(sents[i].words, id))
		}
		fmt.Fprintf(os.Stderr, "%s: %d sentences\n", t.name, len(clips))
	}
	ctlPath, lsnPath := filepath.Join(work, "fileids"), filepath.Join(work, "transcription")
	if err := os.WriteFile(ctlPath, []byte(ctl.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(lsnPath, []byte(lsn.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%v of conditioned audio; features...\n", audio.Round(time.Second))
	if err := features(ctx, c.model, ctlPath, wavDir, mfcDir); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "bw and mllr_solve...")
	if err := solve(ctx, c.model, work, ctlPath, lsnPath, mfcDir, *out); err != nil {
		return err
	}
	mean, err := cepstralMean(mfcDir, ids)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*cmnOut, []byte(mean+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s and %s in %v (logs in %s)\n", *out, *cmnOut, time.Since(start).Round(time.Second), work)
	return nil
}

func measureCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("measure", flag.ExitOnError)
	var c common
	c.flags(fs)
	dental := fs.String("text", filepath.Join(pkgDir, "adapt", "testdata", "dental-heldout.txt"), "held-out sentences, one a line")
	fs.BoolVar(&continuousDecoder, "continuous", false, "decode each utterance with its own pocketsphinx_continuous, as the recognizer does (slower: the model loads each time)")
	prompts := fs.Int("prompts", 100, "Asterisk prompts to measure on, evenly spread (0: all, -1: none)")
	voices := fs.String("voices", "flite-slt,festival-kal,espeak-ng", "voices of the held-out sentences (bench/wer's names; \"\": none)")
	fs.Parse(args)
	if err := c.check(); err != nil {
		return err
	}
	transforms := append([]string{""}, fs.Args()...)
	work := filepath.Join(c.work, "measure-"+string(c.band))
	logDir = work
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	sets, err := heldOut(ctx, *dental, strings.FieldsFunc(*voices, func(r rune) bool { return r == ',' }), *prompts)
	if err != nil {
		return err
	}
	var tb strings.Builder
	tb.WriteString("| set / voice | words |")
	for _, t := range transforms {
		fmt.Fprintf(&tb, " %s |", label(t))
	}
	tb.WriteString("\n|---|---|" + strings.Repeat("---|", len(transforms)) + "\n")
	for _, s := range sets {
		fmt.Fprintf(&tb, "| %s | %d |", s.Label(), s.Words())
		dir := filepath.Join(work, s.Name+"-"+s.Voice)
		for i, t := range transforms {
			abs := t
			if t != "" {
				if abs, err = filepath.Abs(t); err != nil {
					return err
				}
			}
			ts, err := decodeSet(ctx, c.model, s, dir, c.band, abs)
			if err != nil {
				return fmt.Errorf("%s with %s: %w", s.Label(), label(t), err)
			}
			score, err := wer.ScoreTranscripts(ctx, filepath.Join(dir, fmt.Sprint("sclite-", i)), "adapt", s.Speaker(), ts)
			if err != nil {
				return err
			}
			fmt.Fprintf(&tb, " %.1f%% |", score.Accuracy())
			fmt.Fprintf(os.Stderr, "%s, %s: %.1f%% of %d words\n", s.Label(), label(t), score.Accuracy(), score.Words)
		}
		tb.WriteString("\n")
	}
	decoder := "pocketsphinx_batch"
	if continuousDecoder {
		decoder = "pocketsphinx_continuous per utterance"
	}
	fmt.Printf("word accuracy over G.711 (band %s), %s, generic en-us LM\n\n%s", c.band, decoder, tb.String())
	return nil
}

func label(transform string) string {
	if transform == "" {
		return "no transform"
	}
	return filepath.Base(transform)
}
