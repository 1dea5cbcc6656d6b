package wer

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/media/audio"
)

// sampleTranscript is shaped like Debian's core-sounds-en.txt (lines
// copied from it, misspellings included).
const sampleTranscript = `; Core Asterisk Sounds in English

agent-pass: Please enter your password followed by the pound key.
ascending-2tone: [ascending tones]
digits/7: seven
digits/h-40: fourtieth
dictate/both_help: press * to toggle pause, press # to enter a new dictation filename
letters/exclaimation-point: exclaimation-point [!]
silence/1: (1 second of silence)
unidentified-no-callback: Un-indentified or witheld and therefore cannot be called back.
no-recording: This prompt has no file.
demo-instruct: A prompt longer than any caller's turn.
`

func TestParseTranscript(t *testing.T) {
	got, err := ParseTranscript(strings.NewReader(sampleTranscript))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("%d prompts, want 10: %+v", len(got), got)
	}
	if want := (Prompt{Name: "dictate/both_help", Text: "press * to toggle pause, press # to enter a new dictation filename"}); got[4] != want {
		t.Errorf("prompt 5: %+v, want %+v", got[4], want)
	}
	for _, bad := range []string{
		"no colon here\n",
		"../etc/passwd: escape\n",
		"a/../b: escape\n",
		"/abs: absolute\n",
		"sp ace: name with a space\n",
		"x: one\nx: twice\n",
		"a//b: empty segment\n",
		"./a: dot segment\n",
	} {
		if p, err := ParseTranscript(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseTranscript(%q) = %+v, want an error", bad, p)
		}
	}
}

func FuzzParseTranscript(f *testing.F) {
	f.Add([]byte(sampleTranscript))
	f.Add([]byte("a: b\n\n;c\nd/e_f.g-h: i: j\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := ParseTranscript(bytes.NewReader(b))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range ps {
			if !promptName.MatchString(p.Name) || strings.Contains("/"+p.Name+"/", "/../") || seen[p.Name] {
				t.Fatalf("name %q accepted (or twice)", p.Name)
			}
			if filepath.IsAbs(p.Name) || !filepath.IsLocal(filepath.FromSlash(p.Name)) {
				t.Fatalf("name %q is not a local path", p.Name)
			}
			seen[p.Name] = true
		}
	})
}

func TestAsteriskSet(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte(sampleTranscript))
	z.Close()
	path := filepath.Join(dir, "core-sounds-en.txt.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sounds := filepath.Join(dir, "sounds")
	for _, name := range []string{"agent-pass", "ascending-2tone", "digits/7", "digits/h-40", "dictate/both_help",
		"letters/exclaimation-point", "silence/1", "unidentified-no-callback"} {
		p := filepath.Join(sounds, filepath.FromSlash(name)+".wav")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeWAV(p, Clip{PCM: audio.Tone(440, 8000, 100e6, 0.3), Rate: 8000}); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeWAV(filepath.Join(sounds, "demo-instruct.wav"), Clip{PCM: make([]int16, 8000*61), Rate: 8000}); err != nil {
		t.Fatal(err)
	}
	// Every prompt but one also at 16 kHz, as G.722.
	wide := audio.NewG722Encoder().Encode(nil, audio.Tone(6000, 16000, 100e6, 0.3))
	for _, name := range []string{"agent-pass", "digits/7", "digits/h-40", "dictate/both_help", "letters/exclaimation-point"} {
		if err := os.WriteFile(filepath.Join(sounds, filepath.FromSlash(name)+".g722"), wide, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := AsteriskSet(sounds, path)
	if err != nil {
		t.Fatal(err)
	}
	var ids, refs []string
	for _, u := range s.Utterances {
		ids, refs = append(ids, u.ID), append(refs, u.Ref)
		if u.Clip.Rate != 8000 || len(u.Clip.PCM) != 800 {
			t.Errorf("%s: %d samples at %d Hz, want 800 at 8000", u.ID, len(u.Clip.PCM), u.Clip.Rate)
		}
		if u.ID == "unidentified-no-callback" {
			if u.Wide.Rate != 0 {
				t.Errorf("%s: a wideband clip at %d Hz, but it has no .g722", u.ID, u.Wide.Rate)
			}
		} else if u.Wide.Rate != 16000 || len(u.Wide.PCM) != 1600 || !audio.DetectTone(u.Wide.PCM[400:], 16000, 6000) {
			t.Errorf("%s: wideband clip of %d samples at %d Hz, want the 6 kHz tone's 1600 at 16000", u.ID, len(u.Wide.PCM), u.Wide.Rate)
		}
	}
	if s.Wideband != "1 of its prompts have no 16 kHz recording (install asterisk-core-sounds-en-g722)" {
		t.Errorf("wideband note %q", s.Wideband)
	}
	if g := s.ForRate(16000); g.Utterances[0].Clip.Rate != 16000 || s.Utterances[0].Clip.Rate != 8000 || g.Utterances[5].Clip.Rate != 8000 {
		t.Errorf("ForRate(16000): first clip at %d Hz (the set's still %d), last at %d", g.Utterances[0].Clip.Rate, s.Utterances[0].Clip.Rate, g.Utterances[5].Clip.Rate)
	}
	wantIDs := []string{"agent-pass", "digits-7", "digits-h-40", "dictate-both-help", "letters-exclaimation-point", "unidentified-no-callback"}
	wantRefs := []string{
		"please enter your password followed by the pound key",
		"seven",
		"fortieth",
		"press star to toggle pause press pound to enter a new dictation filename",
		"exclamation point",
		"unidentified or withheld and therefore cannot be called back",
	}
	if !reflect.DeepEqual(ids, wantIDs) || !reflect.DeepEqual(refs, wantRefs) {
		t.Errorf("ids %q\nrefs %q\nwant %q\n%q", ids, refs, wantIDs, wantRefs)
	}
	if want := "6 of 10 prompts: 2 of non-speech only, 1 without a recording and 1 over 1m0s left out"; s.Note != want {
		t.Errorf("note %q, want %q", s.Note, want)
	}
	if s.Name != "asterisk" || s.Voice != AsteriskVoice || s.Speaker() != "allison" {
		t.Errorf("set %q voice %q speaker %q", s.Name, s.Voice, s.Speaker())
	}

	if _, err := AsteriskSet(filepath.Join(dir, "nowhere"), path); err == nil || !strings.Contains(err.Error(), "asterisk-core-sounds-en-wav") {
		t.Errorf("no recordings: %v, want an error naming the package", err)
	}
	if _, err := AsteriskSet(sounds, filepath.Join(dir, "missing.txt.gz")); err == nil || !strings.Contains(err.Error(), "asterisk-core-sounds-en") {
		t.Errorf("no transcript: %v, want an error naming the package", err)
	}
}
