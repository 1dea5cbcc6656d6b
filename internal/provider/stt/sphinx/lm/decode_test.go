package lm

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/media/audio"
)

const (
	hmm        = "/usr/share/pocketsphinx/model/en-us/en-us"
	genericLM  = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"
	sphinxRate = 16000
)

// TestDecodeWithDomainModel loads the files Build writes into real
// pocketsphinx and decodes ten sentences callers say to the test clinic
// (testdata/callers.txt), spoken by espeak-ng, with the domain model and
// with the generic en-us model: the domain model must load and make fewer
// word errors.
func TestDecodeWithDomainModel(t *testing.T) {
	for _, what := range []string{"pocketsphinx_continuous", "espeak-ng", hmm, genericLM, cmudict} {
		need(t, what)
	}
	b, err := os.ReadFile("testdata/callers.txt")
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	var pcm []int16
	silence := make([]int16, sphinxRate) // a second between sentences
	pcm = append(pcm, silence...)
	dir := t.TempDir()
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, s := range Sentences(line) {
			refs = append(refs, s...)
		}
		pcm = append(pcm, speak(t, dir, line)...)
		pcm = append(pcm, silence...)
	}
	wav := filepath.Join(dir, "callers.wav")
	if err := os.WriteFile(wav, wavBytes(pcm, sphinxRate), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Build(context.Background(), clinic(t), filepath.Join(dir, "lm"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	domain := decode(t, wav, f.LM, f.Dict)
	generic := decode(t, wav, genericLM, cmudict)
	werD := float64(editDistance(domain, refs)) / float64(len(refs))
	werG := float64(editDistance(generic, refs)) / float64(len(refs))
	t.Logf("reference (%d words): %s", len(refs), strings.Join(refs, " "))
	t.Logf("domain model, WER %.1f%%: %s", 100*werD, strings.Join(domain, " "))
	t.Logf("generic en-us model, WER %.1f%%: %s", 100*werG, strings.Join(generic, " "))
	if len(domain) == 0 || werD >= werG {
		t.Errorf("domain model WER %.1f%%, generic %.1f%%: want the domain model better", 100*werD, 100*werG)
	}
}

// speak is line as espeak-ng's en-us voice says it, at 16 kHz.
func speak(t *testing.T, dir, line string) []int16 {
	t.Helper()
	out := filepath.Join(dir, "say.wav")
	if b, err := exec.Command("espeak-ng", "-v", "en-us", "-w", out, line).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := audio.ReadWAV(f)
	if err != nil {
		t.Fatal(err)
	}
	return audio.NewResampler(w.Rate, sphinxRate).Process(nil, w.Channels[0])
}

// decode runs pocketsphinx_continuous on wav with a language model and
// dictionary and returns the words it heard.
func decode(t *testing.T, wav, lm, dict string) []string {
	t.Helper()
	cmd := exec.Command("pocketsphinx_continuous", "-infile", wav, "-hmm", hmm, "-lm", lm, "-dict", dict)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		log := stderr.String()
		if len(log) > 4000 {
			log = log[len(log)-4000:]
		}
		t.Fatalf("pocketsphinx_continuous -lm %s: %v\n%s", lm, err, log)
	}
	if strings.Contains(stderr.String(), "ERROR:") {
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(l, "ERROR:") {
				t.Errorf("pocketsphinx -lm %s: %s", filepath.Base(lm), l)
			}
		}
	}
	return strings.Fields(stdout.String())
}

func wavBytes(pcm []int16, rate int) []byte {
	var b bytes.Buffer
	data := uint32(2 * len(pcm))
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, 36+data)
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, data)
	binary.Write(&b, binary.LittleEndian, pcm)
	return b.Bytes()
}
