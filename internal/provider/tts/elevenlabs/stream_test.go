package elevenlabs

import (
	"slices"
	"testing"

	"github.com/parley-voice/parley/internal/media/audio"
)

// TestPlaySplitSamples: a sample split across two messages is joined, and
// a message of a single byte gives nothing yet.
func TestPlaySplitSamples(t *testing.T) {
	var got []int16
	x := &exchange{rs: audio.NewResampler(16000, 16000), out: func(p []int16) error {
		got = append(got, p...)
		return nil
	}}
	for _, b := range [][]byte{{1, 0, 2}, {0x01}, {0xff, 0x7f, 0x00}, {0x80}} {
		if err := x.play(b); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int16{1, 0x102, 0x7fff, -0x8000}; !slices.Equal(got, want) || x.emitted != 4 {
		t.Errorf("samples %#v (%d emitted), want %#v", got, x.emitted, want)
	}
}
