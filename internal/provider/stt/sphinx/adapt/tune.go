package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/parley-voice/parley/bench/wer"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/stt/sphinx"
	"github.com/parley-voice/parley/internal/provider/stt/sphinx/lm"
)

// tuneCmd is the quick loop for choosing decoder options: held-out
// in-domain sentences (testdata/dental-heldout.txt) in training voices,
// never the benchmark's, carried over G.711 and recognised by the
// in-process recognizer as parley serve runs it (adapted to the bench
// agent's domain, the phone transform on narrowband audio), once per
// option set given ("-lw 10 -wip 0.5"; "" is the defaults). It prints
// sclite's word accuracy per option set.
func tuneCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tune", flag.ExitOnError)
	var c common
	c.flags(fs)
	textPath := fs.String("text", filepath.Join(pkgDir, "adapt", "testdata", "dental-heldout.txt"), "held-out in-domain sentences, one a line")
	voices := fs.String("voices", "flite-awb,flite-rms,festival-ked,espeak-default-100", "training voices to speak them (never the benchmark's)")
	weight := fs.Float64("domain-weight", lm.DefaultDomainWeight, "the domain model's interpolation weight (the conversation model's is 1 minus it)")
	commonWeight := fs.Float64("common-weight", lm.DefaultCommonWeight, "the common-words model's interpolation weight (0: none)")
	commonWords := fs.Int("common-words", lm.DefaultCommonWords, "how many common words")
	genericWeight := fs.Float64("generic-weight", 0, "the generic model's weight, interpolated with the domain's as the decoder searches (0: sphinx.DefaultGenericWeight; negative: none)")
	generic := fs.Bool("generic", false, "the generic language model instead of the domain's")
	mllr := fs.String("mllr", "builtin", "narrowband transform: builtin, none or a file")
	narrowOpts := fs.String("narrowband-options", "", "pocketsphinx options for narrowband decoders (\"-mean file -var file\")")
	workers := fs.Int("workers", 2, "utterances recognised at once")
	fs.Parse(args)
	sets := fs.Args()
	if len(sets) == 0 {
		sets = []string{""}
	}
	work := filepath.Join(c.work, "tune")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	texts, err := readLines(*textPath)
	if err != nil {
		return err
	}
	utts, err := tuneUtterances(ctx, c.work, *voices, texts)
	if err != nil {
		return err
	}
	narrow := ""
	narrowOptions := strings.Fields(*narrowOpts)
	switch *mllr {
	case "builtin":
		// As parley serve has it: the transform and its training audio's
		// cepstral mean, unless -narrowband-options names a -featparams.
		var phoneOpts []string
		if narrow, phoneOpts, err = sphinx.WritePhoneAdaptation(work, c.model.dir); err != nil {
			return err
		}
		if !slices.Contains(narrowOptions, "-featparams") {
			narrowOptions = append(phoneOpts, narrowOptions...)
		}
	case "none":
	default:
		narrow = *mllr
	}
	opt := lm.Options{CommonWords: *commonWords, Weights: lm.Weights{Domain: *weight, Conversation: 1 - *weight, Common: *commonWeight}}
	fmt.Printf("| options | words | word accuracy | sub / del / ins |\n|---|---|---|---|\n")
	for i, set := range sets {
		r := sphinx.New(sphinx.Config{
			ModelDir: c.model.dir, NarrowbandMLLR: narrow, Options: strings.Fields(set), NarrowbandOptions: narrowOptions,
			Decoders: *workers, DomainDecoders: *workers, GenericWeight: *genericWeight,
			Builder: sphinx.LMBuilder(opt), CacheDir: filepath.Join(work, fmt.Sprint("cache-", i)),
		})
		var rec stt.Recognizer = r
		if !*generic {
			if rec, err = r.Adapt(ctx, wer.DentalDomain()); err != nil {
				r.Close()
				return err
			}
		}
		ts, err := recogniseAll(ctx, rec, utts, *workers)
		r.Close()
		if err != nil {
			return fmt.Errorf("options %q: %w", set, err)
		}
		s, err := wer.ScoreTranscripts(ctx, filepath.Join(work, fmt.Sprint("sclite-", i)), "tune", "dev", ts)
		if err != nil {
			return err
		}
		fmt.Printf("| `%s` | %d | %.1f %% | %.1f / %.1f / %.1f %% |\n", set, s.Words, s.Accuracy(),
			100*float64(s.Sub)/float64(s.Words), 100*float64(s.Del)/float64(s.Words), 100*float64(s.Ins)/float64(s.Words))
	}
	return nil
}

// tuneUtterance is one held-out sentence as a G.711 leg delivers it.
type tuneUtterance struct {
	id, ref string
	pcm     []int16 // 8 kHz
}

// tuneUtterances speaks texts in the named training voices (recordings
// kept under work/voices, as train keeps them) and carries each over
// G.711 μ-law with 200 ms of silence either side, as the benchmark's cut
// leaves it.
func tuneUtterances(ctx context.Context, work, voices string, texts []string) ([]tuneUtterance, error) {
	byName := map[string]trainer{}
	for _, t := range trainers() {
		byName[t.name] = t
	}
	var out []tuneUtterance
	for _, name := range strings.Split(voices, ",") {
		t, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("no training voice %q", name)
		}
		clips, err := spoken(ctx, t, filepath.Join(work, "voices-heldout", t.name), texts)
		if err != nil {
			return nil, err
		}
		for i, cl := range clips {
			narrow := cl.pcm
			if cl.rate != lineRate {
				narrow = audio.NewResampler(cl.rate, lineRate).Process(nil, cl.pcm)
			}
			pad := make([]int16, lineRate/5)
			heard := audio.DecodeULaw(nil, audio.EncodeULaw(nil, append(append(append([]int16(nil), pad...), narrow...), pad...)))
			out = append(out, tuneUtterance{id: fmt.Sprintf("%s-%03d", t.name, i+1), ref: wer.Normalise(texts[i]), pcm: heard})
		}
	}
	return out, nil
}

// recogniseAll transcribes every utterance, workers at once.
func recogniseAll(ctx context.Context, rec stt.Recognizer, utts []tuneUtterance, workers int) ([]wer.Transcript, error) {
	ts := make([]wer.Transcript, len(utts))
	errs := make([]error, len(utts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				res, err := rec.Transcribe(ctx, utts[i].pcm, lineRate, "en")
				ts[i] = wer.Transcript{ID: utts[i].id, Ref: utts[i].ref, Hyp: wer.Normalise(res.Text)}
				errs[i] = err
			}
		})
	}
	for i := range utts {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return ts, nil
}
