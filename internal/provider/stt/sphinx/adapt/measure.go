package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/parley-voice/parley/bench/wer"
)

// heldOut are the sets a transform is measured on: held-out dental
// sentences in the benchmark's synthetic voices (measuring on them is
// fair; only training on them would not be) and Allison Smith's Asterisk
// prompts, real human recordings.
func heldOut(ctx context.Context, dentalPath string, voices []string, prompts int) ([]wer.Set, error) {
	texts, err := readLines(dentalPath)
	if err != nil {
		return nil, err
	}
	var sets []wer.Set
	for _, name := range voices {
		v, err := wer.VoiceNamed(name)
		if err != nil {
			return nil, err
		}
		s, err := wer.SentenceSet(ctx, "dental-heldout", true, texts, v)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	if prompts < 0 {
		return sets, nil
	}
	a, err := wer.AsteriskSet(wer.AsteriskSounds, wer.AsteriskTranscript)
	if err != nil {
		return nil, err
	}
	return append(sets, a.Subset(prompts)), nil
}

// decodeSet writes each utterance of s as heard over G.711 into dir and
// has pocketsphinx_batch decode them with the generic language model and
// the transform at mllr ("" for none), in two processes. It returns the
// utterances' transcripts.
func decodeSet(ctx context.Context, m model, s wer.Set, dir string, b band, mllr string) ([]wer.Transcript, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ctl := filepath.Join(dir, "ctl")
	var ids strings.Builder
	for _, u := range s.Utterances {
		path := filepath.Join(dir, u.ID+".wav")
		if _, err := os.Stat(path); err != nil {
			if err := writeWAV(path, overG711(u.Clip.PCM, u.Clip.Rate, b), 16000); err != nil {
				return nil, err
			}
		}
		ids.WriteString(u.ID + "\n")
	}
	if err := os.WriteFile(ctl, []byte(ids.String()), 0o644); err != nil {
		return nil, err
	}
	// Hypotheses are kept per transform content, so a run again decodes
	// only what it has not.
	tag := "none"
	if mllr != "" {
		raw, err := os.ReadFile(mllr)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(raw)
		tag = fmt.Sprintf("%s-%x", strings.TrimSuffix(filepath.Base(mllr), filepath.Ext(mllr)), sum[:6])
	}
	if continuousDecoder {
		return decodeEach(ctx, m, s, dir, tag, mllr)
	}
	const parts = 2
	n := len(s.Utterances)
	hyps := make(map[string]string, n)
	errs := make([]error, parts)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for p := range parts {
		off, cnt := p*n/parts, (p+1)*n/parts-p*n/parts
		hyp := filepath.Join(dir, fmt.Sprintf("%s.%d.hyp", tag, p))
		wg.Go(func() {
			if got, err := readHyps(hyp); err == nil && len(got) == cnt {
				mu.Lock()
				maps.Copy(hyps, got)
				mu.Unlock()
				return
			}
			args := []string{
				"-hmm", m.hmm(""), "-lm", m.lm(), "-dict", m.dict(),
				"-adcin", "yes", "-adchdr", "44", "-cepdir", dir, "-cepext", ".wav",
				"-ctl", ctl, "-ctloffset", fmt.Sprint(off), "-ctlcount", fmt.Sprint(cnt),
				"-hyp", hyp}
			if mllr != "" {
				args = append(args, "-mllr", mllr)
			}
			if err := run(ctx, "pocketsphinx_batch", args...); err != nil {
				errs[p] = err
				return
			}
			got, err := readHyps(hyp)
			mu.Lock()
			defer mu.Unlock()
			maps.Copy(hyps, got)
			errs[p] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	ts := make([]wer.Transcript, n)
	for i, u := range s.Utterances {
		ts[i] = wer.Transcript{ID: u.ID, Ref: u.Ref, Hyp: wer.Normalise(hyps[u.ID])}
	}
	return ts, nil
}

// readHyps reads pocketsphinx_batch's -hyp file: "words (id score)".
func readHyps(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		i := strings.LastIndexByte(l, '(')
		if i < 0 {
			continue
		}
		id, _, _ := strings.Cut(strings.TrimSuffix(l[i+1:], ")"), " ")
		out[id] = strings.TrimSpace(l[:i])
	}
	return out, sc.Err()
}

// continuousDecoder has decodeSet run pocketsphinx_continuous once per
// utterance, as the recognizer does (its own voice-activity detection,
// live cepstral mean from the model's initial value), instead of
// pocketsphinx_batch on all of them.
var continuousDecoder bool

// decodeEach decodes each utterance's WAV in dir with its own
// pocketsphinx_continuous, three at a time, keeping the hypotheses in
// tag.continuous.hyp.
func decodeEach(ctx context.Context, m model, s wer.Set, dir, tag, mllr string) ([]wer.Transcript, error) {
	hypPath := filepath.Join(dir, tag+".continuous.hyp")
	hyps, err := readHyps(hypPath)
	if err != nil || len(hyps) != len(s.Utterances) {
		hyps = make(map[string]string, len(s.Utterances))
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make([]error, len(s.Utterances))
		slots := make(chan struct{}, 3)
		for i, u := range s.Utterances {
			wg.Go(func() {
				slots <- struct{}{}
				defer func() { <-slots }()
				args := []string{"-infile", filepath.Join(dir, u.ID+".wav"),
					"-hmm", m.hmm(""), "-lm", m.lm(), "-dict", m.dict(), "-logfn", "/dev/null"}
				if mllr != "" {
					args = append(args, "-mllr", mllr)
				}
				out, err := exec.CommandContext(ctx, "pocketsphinx_continuous", args...).Output()
				if err != nil {
					errs[i] = fmt.Errorf("pocketsphinx_continuous %s: %w", u.ID, err)
					return
				}
				mu.Lock()
				hyps[u.ID] = strings.Join(strings.Fields(string(out)), " ")
				mu.Unlock()
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		var b strings.Builder
		for _, u := range s.Utterances {
			fmt.Fprintf(&b, "%s (%s)\n", hyps[u.ID], u.ID)
		}
		if err := os.WriteFile(hypPath, []byte(b.String()), 0o644); err != nil {
			return nil, err
		}
	}
	ts := make([]wer.Transcript, len(s.Utterances))
	for i, u := range s.Utterances {
		ts[i] = wer.Transcript{ID: u.ID, Ref: u.Ref, Hyp: wer.Normalise(hyps[u.ID])}
	}
	return ts, nil
}
