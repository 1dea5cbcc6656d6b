package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestTrainingSentencesLeaveOutUnknownWords(t *testing.T) {
	d := dictionary{"call": true, "me": true, "at": true, "nine": true, "thirty": true}
	kept, dropped := trainingSentences([]string{"Call me at 9:30.", "Call me, Zyxt!", "  "}, d)
	if len(kept) != 1 || kept[0].words != "call me at nine thirty" || kept[0].text != "Call me at 9:30." {
		t.Errorf("kept %+v", kept)
	}
	if !slices.Equal(dropped, []string{"Call me, Zyxt!", "  "}) {
		t.Errorf("dropped %q", dropped)
	}
	if got := transcriptLine("call me", "v-0001"); got != "<s> call me </s> (v-0001)\n" {
		t.Errorf("transcript line %q", got)
	}
}

func TestReadHyps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h")
	text := "hello there (utt-001 -1234)\n (utt-002 0)\ncall me (utt-003)\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readHyps(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"utt-001": "hello there", "utt-002": "", "utt-003": "call me"}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// overG711 keeps the clip's length, at 16 kHz, with the 300 ms pads.
func TestOverG711Length(t *testing.T) {
	pcm := make([]int16, 16000) // 1 s at 16 kHz
	for _, b := range []band{bandFill, bandPlain} {
		got := overG711(pcm, 16000, b)
		if want := 16000 + 2*4800; len(got) < want-100 || len(got) > want+100 {
			t.Errorf("%s: %d samples, want about %d", b, len(got), want)
		}
	}
}
