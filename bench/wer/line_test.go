package wer

import (
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

func TestCut(t *testing.T) {
	const rate = 8000
	speech := audio.Tone(300, rate, 500*time.Millisecond, 0.3)
	pcm := append(audio.Silence(rate, time.Second), speech...)
	pcm = append(pcm, audio.Silence(rate, time.Second)...)
	got := cut(pcm, rate)
	// 200 ms either side of the speech's frames.
	if want := len(speech) + 2*rate/5; len(got) != want {
		t.Errorf("cut kept %d samples, want %d", len(got), want)
	}
	if cut(audio.Silence(rate, time.Second), rate) != nil {
		t.Error("silence: kept something")
	}
	// Speech at the very edges keeps no margin it does not have.
	if got := cut(speech, rate); len(got) != len(speech) {
		t.Errorf("edge speech: kept %d of %d", len(got), len(speech))
	}
}

func TestCodecs(t *testing.T) {
	for _, n := range []string{"PCMU", "pcmu", "G.711"} {
		if c, err := CodecNamed(n); err != nil || c != PCMU {
			t.Errorf("CodecNamed(%q) = %+v, %v", n, c, err)
		}
	}
	if c, err := CodecNamed("G722"); err != nil || c.Rate != 16000 {
		t.Errorf("CodecNamed(G722) = %+v, %v", c, err)
	}
	if _, err := CodecNamed("opus"); err == nil {
		t.Error("opus: no error")
	}
	if err := PCMU.Available(); err != nil {
		t.Errorf("PCMU: %v", err)
	}
	if err := (Codec{Name: "NOPE"}).Available(); err == nil {
		t.Error("an unknown codec is available")
	}
}

func TestToRate(t *testing.T) {
	c := Clip{PCM: audio.Tone(440, 16000, time.Second, 0.5), Rate: 16000}
	got := toRate(c, 8000)
	// The whole second, plus the 20 ms of silence that flushes the filter.
	if want := 8000 + 160; len(got) != want {
		t.Errorf("%d samples, want %d", len(got), want)
	}
	if !audio.DetectTone(got[2000:4000], 8000, 440) {
		t.Error("the tone did not survive resampling")
	}
	same := toRate(Clip{PCM: []int16{1, 2, 3}, Rate: 8000}, 8000)
	same[0] = 9
	if c := []int16{1, 2, 3}; same[1] != c[1] || len(same) != 3 {
		t.Errorf("same rate: %v", same)
	}
}

func TestIntact(t *testing.T) {
	const rate = 8000
	speech := append(audio.Tone(300, rate, 300*time.Millisecond, 0.3), audio.Tone(500, rate, 300*time.Millisecond, 0.3)...)
	sent := played(Clip{PCM: speech, Rate: rate}, rate)
	g711 := func(pcm []int16) []int16 { return audio.DecodeULaw(nil, audio.EncodeULaw(nil, pcm)) }
	quiet := audio.Silence(rate, 260*time.Millisecond)
	join := func(parts ...[]int16) (out []int16) {
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	frame := make([]int16, 160)
	for name, c := range map[string]struct {
		heard    []int16
		pcmu, g7 bool // intact over PCMU, over a codec compared by length
	}{
		// Whole, with more or less silence around it than was played.
		"whole": {join(quiet, g711(speech), quiet, quiet), true, true},
		// A frame of silence filled in for late packets, the rest after it.
		"late frame":  {join(quiet, g711(speech[:2400]), frame, g711(speech[2400:]), quiet), false, true},
		"late frames": {join(quiet, g711(speech[:2400]), frame, frame, frame, g711(speech[2400:]), quiet), false, false},
		// A frame lost.
		"lost frame":  {join(quiet, g711(speech[:2400]), g711(speech[2560:]), quiet), false, true},
		"lost frames": {join(quiet, g711(speech[:2400]), g711(speech[2880:]), quiet), false, false},
	} {
		if got := intact(c.heard, sent, PCMU); got != c.pcmu {
			t.Errorf("%s over PCMU: intact %v, want %v", name, got, c.pcmu)
		}
		if got := intact(c.heard, sent, Codec{Name: "X", Rate: rate}); got != c.g7 {
			t.Errorf("%s compared by length: intact %v, want %v", name, got, c.g7)
		}
	}
	if trimSilence(make([]int16, 10)) != nil {
		t.Error("silence trimmed to something")
	}
}
