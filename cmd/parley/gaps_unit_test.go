package main

import (
	"math"
	"slices"
	"testing"
	"time"
)

// tonesAt is a channel of rate with a loud tone over each [start, end)
// in seconds, silence elsewhere, total seconds long.
func tonesAt(rate int, total float64, spans ...[2]float64) []int16 {
	pcm := make([]int16, int(total*float64(rate)))
	for _, s := range spans {
		for i := int(s[0] * float64(rate)); i < int(s[1]*float64(rate)); i++ {
			pcm[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate)))
		}
	}
	return pcm
}

func TestSpeechSpansAndGaps(t *testing.T) {
	const rate = 8000
	// The caller speaks twice (the first line with a 0.3 s pause inside),
	// with a click; the agent answers each after 0.8 s and 1.2 s.
	left := tonesAt(rate, 10, [2]float64{0.5, 1.5}, [2]float64{1.8, 2.5}, [2]float64{6, 7}, [2]float64{9, 9.04})
	right := tonesAt(rate, 10, [2]float64{3.3, 5}, [2]float64{8.2, 8.9})
	l, r := speechSpans(left, rate), speechSpans(right, rate)
	near := func(d time.Duration, want float64) bool { return math.Abs(d.Seconds()-want) <= 0.021 }
	if len(l) != 2 || !near(l[0].start, 0.5) || !near(l[0].end, 2.5) || !near(l[1].start, 6) || !near(l[1].end, 7) {
		t.Fatalf("caller spans %v", l)
	}
	if len(r) != 2 {
		t.Fatalf("agent spans %v", r)
	}
	gaps := responseGaps(l, r)
	if len(gaps) != 2 || !near(gaps[0], 0.8) || !near(gaps[1], 1.2) {
		t.Fatalf("gaps %v", gaps)
	}
	if m := median(gaps); !near(m, 1.0) {
		t.Errorf("median %v", m)
	}
	// The agent's gaps to the caller: after its first turn the caller
	// answers in 1 s; after its last nobody does.
	if back := responseGaps(r, l); len(back) != 1 || !near(back[0], 1.0) {
		t.Errorf("gaps back %v", back)
	}
	// An overlap is not a gap.
	if g := responseGaps([]span{{0, 2 * time.Second}}, []span{{time.Second, 3 * time.Second}}); len(g) != 0 {
		t.Errorf("overlap gave %v", g)
	}
}

func TestWordAccuracy(t *testing.T) {
	for _, c := range []struct {
		ref, hyp string
		want     float64
	}{
		{"I'd like a cleaning, please.", "i'd like a cleaning please", 1},
		{"a table for two", "a table for", 0.75},
		{"a table for two", "the table for two people", 0.5},
		{"yes", "", 0},
		{"", "anything", 0},
	} {
		if got := wordAccuracy(c.ref, c.hyp); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("wordAccuracy(%q, %q) = %v, want %v", c.ref, c.hyp, got, c.want)
		}
	}
	if w := words("Hello, Acme-Dental's desk!"); !slices.Equal(w, []string{"hello", "acme", "dental's", "desk"}) {
		t.Errorf("words %q", w)
	}
}
