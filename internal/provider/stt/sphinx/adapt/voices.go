package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
)

// A trainer is a synthetic speaker the transform is trained on. None is a
// voice the recognition benchmark scores (flite slt, festival kal_diphone,
// flite kal16, which is kal too) or Allison Smith, the Asterisk prompts'
// speaker: the transform must not have heard the benchmark's speakers.
type trainer struct {
	name string // in utterance ids: letters, digits and '-'
	// speak returns each text as mono PCM at the returned rate, using dir
	// for files.
	speak func(ctx context.Context, dir string, texts []string) ([][]int16, int, error)
}

// trainers are the training voices: the agent's own espeak-ng (Parley's
// client, as agents speak on the loopback trunk) in several variants and
// speeds, flite's awb and rms, and festival's ked_diphone (Debian
// festvox-kdlpc16k). Debian main has no mbrola voices.
func trainers() []trainer {
	return []trainer{
		espeakTrainer("", 1.0),
		espeakTrainer("en-us+m3", 0.85),
		espeakTrainer("en-us+f3", 1.0),
		espeakTrainer("en-us+m7", 1.15),
		espeakTrainer("en-us+f2", 0.9),
		espeakTrainer("en-us+m1", 1.05),
		fliteTrainer("awb"),
		fliteTrainer("rms"),
		{name: "festival-ked", speak: festivalKed},
	}
}

// espeakRate is the rate the agent's voice is asked for.
const espeakRate = 16000

// espeakTrainer speaks through Parley's espeak-ng client ("" voice: the
// agent's default for English).
func espeakTrainer(voice string, speed float64) trainer {
	name := "espeak-" + strings.NewReplacer("+", "-", ".", "-").Replace(voice)
	if voice == "" {
		name = "espeak-default"
	}
	name += fmt.Sprintf("-%03d", int(math.Round(speed*100)))
	return trainer{name: name, speak: func(ctx context.Context, _ string, texts []string) ([][]int16, int, error) {
		if err := espeak.Available(); err != nil {
			return nil, 0, err
		}
		synth := espeak.New(espeak.Config{})
		out := make([][]int16, len(texts))
		for i, t := range texts {
			req := tts.Request{Text: t, Language: "en", Voice: voice, Speed: speed}
			_, err := synth.Synthesize(ctx, req, espeakRate, func(p []int16) error {
				out[i] = append(out[i], p...)
				return nil
			})
			if err != nil {
				return nil, 0, fmt.Errorf("espeak-ng %s %q: %w", voice, t, err)
			}
		}
		return out, espeakRate, nil
	}}
}

// fliteTrainer is one of flite's built-in voices.
func fliteTrainer(voice string) trainer {
	return trainer{name: "flite-" + voice, speak: func(ctx context.Context, dir string, texts []string) ([][]int16, int, error) {
		out := make([][]int16, len(texts))
		rate := 0
		for i, t := range texts {
			path := filepath.Join(dir, fmt.Sprintf("%s-%04d.wav", voice, i))
			if b, err := exec.CommandContext(ctx, "flite", "-voice", voice, "-t", t, "-o", path).CombinedOutput(); err != nil {
				return nil, 0, fmt.Errorf("flite %s %q: %w: %s", voice, t, err, b)
			}
			pcm, r, err := readWAV(path)
			if err != nil {
				return nil, 0, err
			}
			if rate != 0 && r != rate {
				return nil, 0, fmt.Errorf("flite %s: rates %d and %d", voice, rate, r)
			}
			out[i], rate = pcm, r
			os.Remove(path)
		}
		return out, rate, nil
	}}
}

// festivalKed speaks with festival's ked_diphone voice: one festival
// process for all the texts (it takes seconds to start).
func festivalKed(ctx context.Context, dir string, texts []string) ([][]int16, int, error) {
	var script strings.Builder
	script.WriteString("(voice_ked_diphone)\n")
	paths := make([]string, len(texts))
	for i, t := range texts {
		paths[i] = filepath.Join(dir, fmt.Sprintf("ked-%04d.wav", i))
		fmt.Fprintf(&script, "(utt.save.wave (utt.synth (Utterance Text %s)) %s 'riff)\n", scheme(t), scheme(paths[i]))
	}
	scm := filepath.Join(dir, "ked.scm")
	if err := os.WriteFile(scm, []byte(script.String()), 0o644); err != nil {
		return nil, 0, err
	}
	if b, err := exec.CommandContext(ctx, "festival", "--batch", scm).CombinedOutput(); err != nil {
		return nil, 0, fmt.Errorf("festival: %w: %s", err, b)
	}
	out := make([][]int16, len(texts))
	rate := 0
	for i, p := range paths {
		pcm, r, err := readWAV(p)
		if err != nil {
			return nil, 0, fmt.Errorf("festival ked_diphone: %w", err)
		}
		out[i], rate = pcm, r
		os.Remove(p)
	}
	return out, rate, nil
}

// scheme quotes s as a Scheme string literal.
func scheme(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// clip is a training voice's recording of one sentence.
type clip struct {
	pcm  []int16
	rate int
}

// spoken returns t's recordings of texts, kept in dir (sentence i as
// NNNN.wav) so other variants of a training run reuse them: the voices
// are deterministic, and speaking is most of a run's time.
func spoken(ctx context.Context, t trainer, dir string, texts []string) ([]clip, error) {
	clips := make([]clip, len(texts))
	for i := range texts {
		pcm, rate, err := readWAV(filepath.Join(dir, fmt.Sprintf("%04d.wav", i+1)))
		if err != nil {
			clips = nil
			break
		}
		clips[i] = clip{pcm, rate}
	}
	if clips != nil {
		return clips, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	pcms, rate, err := t.speak(ctx, dir, texts)
	if err != nil {
		return nil, err
	}
	clips = make([]clip, len(texts))
	for i, pcm := range pcms {
		if len(pcm) == 0 {
			return nil, fmt.Errorf("%s said nothing for %q", t.name, texts[i])
		}
		if err := writeWAV(filepath.Join(dir, fmt.Sprintf("%04d.wav", i+1)), pcm, rate); err != nil {
			return nil, err
		}
		clips[i] = clip{pcm, rate}
	}
	return clips, nil
}
