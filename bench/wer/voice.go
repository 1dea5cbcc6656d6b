package wer

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
)

// Voice is a synthetic speaker for the sentence sets.
type Voice struct {
	Name    string // flite-slt, festival-kal, espeak-ng, ...
	Package string // the Debian package that provides it
	// speak synthesizes each text, using dir for files.
	speak func(ctx context.Context, dir string, texts []string) ([]Clip, error)
}

// Voices are the voices a run may ask for by name. The agent's own is
// espeak-ng (Parley's espeak client, as the agent speaks); flite's and
// festival's are other speakers, as callers are.
var Voices = []Voice{
	fliteVoice("slt"), fliteVoice("rms"), fliteVoice("awb"), fliteVoice("kal16"),
	{Name: "festival-kal", Package: "festival and festvox-kallpc16k", speak: festivalKal},
	{Name: "espeak-ng", Package: "espeak-ng", speak: espeakAgent},
}

// VoiceNamed finds a voice of [Voices].
func VoiceNamed(name string) (Voice, error) {
	i := slices.IndexFunc(Voices, func(v Voice) bool { return v.Name == name })
	if i < 0 {
		names := make([]string, len(Voices))
		for i, v := range Voices {
			names[i] = v.Name
		}
		return Voice{}, fmt.Errorf("no voice %q (voices: %s)", name, strings.Join(names, ", "))
	}
	return Voices[i], nil
}

// SentenceSet has v speak sentences as the set name.
func SentenceSet(ctx context.Context, name string, inDomain bool, sentences []string, v Voice) (Set, error) {
	dir, err := os.MkdirTemp("", "parley-wer-*")
	if err != nil {
		return Set{}, err
	}
	defer os.RemoveAll(dir)
	clips, err := v.speak(ctx, dir, sentences)
	if err != nil {
		return Set{}, fmt.Errorf("voice %s (Debian %s): %w", v.Name, v.Package, err)
	}
	s := Set{Name: name, Voice: v.Name, InDomain: inDomain}
	for i, text := range sentences {
		if len(clips[i].PCM) == 0 {
			return Set{}, fmt.Errorf("voice %s said nothing for %q", v.Name, text)
		}
		s.Utterances = append(s.Utterances, Utterance{
			ID: fmt.Sprintf("%s-%03d", name, i+1), Text: text, Ref: Normalise(text), Clip: clips[i],
		})
	}
	return s, checkIDs(s)
}

// fliteVoice is one of flite's built-in voices, one process a sentence
// (flite starts in milliseconds).
func fliteVoice(name string) Voice {
	return Voice{Name: "flite-" + name, Package: "flite", speak: func(ctx context.Context, dir string, texts []string) ([]Clip, error) {
		clips := make([]Clip, len(texts))
		for i, t := range texts {
			path := filepath.Join(dir, fmt.Sprintf("%03d.wav", i))
			if out, err := exec.CommandContext(ctx, "flite", "-voice", name, "-t", t, "-o", path).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("flite %q: %w: %s", t, err, clip(strings.TrimSpace(string(out)), 200))
			}
			c, err := readClip(path)
			if err != nil {
				return nil, err
			}
			clips[i] = c
		}
		return clips, nil
	}}
}

// festivalKal speaks with festival's kal_diphone voice: one festival
// process for all the sentences (it takes seconds to start), from a
// Scheme script that saves each utterance as a WAV.
func festivalKal(ctx context.Context, dir string, texts []string) ([]Clip, error) {
	var script strings.Builder
	script.WriteString("(voice_kal_diphone)\n")
	paths := make([]string, len(texts))
	for i, t := range texts {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%03d.wav", i))
		fmt.Fprintf(&script, "(utt.save.wave (utt.synth (Utterance Text %s)) %s 'riff)\n", schemeString(t), schemeString(paths[i]))
	}
	scm := filepath.Join(dir, "say.scm")
	if err := os.WriteFile(scm, []byte(script.String()), 0o600); err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, "festival", "--batch", scm).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("festival: %w: %s", err, clip(strings.TrimSpace(string(out)), 300))
	}
	clips := make([]Clip, len(texts))
	for i, p := range paths {
		c, err := readClip(p)
		if err != nil {
			return nil, fmt.Errorf("festival: %w", err)
		}
		clips[i] = c
	}
	return clips, nil
}

// schemeString quotes s as a Scheme string literal.
func schemeString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// espeakRate is the rate the agent's voice is asked for: the other voices'
// 16 kHz, so every synthetic set reaches the line the same way.
const espeakRate = 16000

// espeakAgent speaks as a Parley agent does: through Parley's espeak-ng
// client with its defaults.
func espeakAgent(ctx context.Context, _ string, texts []string) ([]Clip, error) {
	if err := espeak.Available(); err != nil {
		return nil, err
	}
	synth := espeak.New(espeak.Config{})
	clips := make([]Clip, len(texts))
	for i, t := range texts {
		var pcm []int16
		_, err := synth.Synthesize(ctx, tts.Request{Text: t, Language: "en"}, espeakRate, func(p []int16) error {
			pcm = append(pcm, p...)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("espeak-ng %q: %w", t, err)
		}
		clips[i] = Clip{PCM: pcm, Rate: espeakRate}
	}
	return clips, nil
}
