package main

import (
	"math"
	"path/filepath"
	"testing"
)

// The sendump's quantised weights, read back, must sum to about one per
// senone and stream before renormalising: that checks the reading of the
// format and the value's scale, not only the layout.
func TestSendumpWeightsSumToOne(t *testing.T) {
	path := "/usr/share/pocketsphinx/model/en-us/en-us/sendump"
	m, err := readSendumpRaw(path)
	if err != nil {
		t.Skipf("no Debian en-us model (pocketsphinx-en-us): %v", err)
	}
	if m.senones != 5126 || m.streams != 3 || m.densities != 128 {
		t.Fatalf("got %d senones, %d streams, %d densities; want 5126, 3, 128", m.senones, m.streams, m.densities)
	}
	var worst float64
	for i := 0; i < len(m.w); i += m.densities {
		var sum float64
		for _, v := range m.w[i : i+m.densities] {
			sum += float64(v)
		}
		worst = max(worst, math.Abs(sum-1))
	}
	if worst > 0.25 {
		t.Errorf("a senone's weights sum %.3f away from one", worst)
	}
	t.Logf("largest distance of a sum from one: %.3f", worst)
	out := filepath.Join(t.TempDir(), "mixture_weights")
	m.normalise()
	if err := m.write(out); err != nil {
		t.Fatal(err)
	}
}
