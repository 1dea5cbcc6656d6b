package audio

import (
	"math"
	"time"
)

// holdNotes is a four-bar arpeggio over C, Am, F and G, four notes a bar,
// voiced between 196 and 523 Hz so it survives the phone band.
var holdNotes = [...]float64{
	261.63, 329.63, 392.00, 523.25, // C: C4 E4 G4 C5
	220.00, 261.63, 329.63, 440.00, // Am: A3 C4 E4 A4
	220.00, 261.63, 349.23, 440.00, // F: A3 C4 F4 A4
	196.00, 246.94, 293.66, 392.00, // G: G3 B3 D4 G4
}

const (
	holdStep    = 250 * time.Millisecond // one note starts every step
	holdRing    = 2 * holdStep           // and sounds for two, overlapping the next
	holdAttack  = 15 * time.Millisecond
	holdRelease = 40 * time.Millisecond
	holdDecay   = 0.4  // seconds for a note to fall to 1/e
	holdLevel   = 0.15 // peak per note; two overlap, so peaks stay under -10 dBFS
)

// HoldMusic returns d of gentle on-hold music at rate: a looping four-second
// arpeggio of soft sine notes, each faded in and out so that nothing clicks.
// The last note is faded out at the end of the buffer too, so the result
// starts and ends at silence and can itself be looped.
func HoldMusic(rate int, d time.Duration) []int16 {
	n := samples(rate, d)
	if n == 0 {
		return []int16{}
	}
	mix := make([]float64, n)
	step, ring := samples(rate, holdStep), samples(rate, holdRing)
	attack, release := samples(rate, holdAttack), samples(rate, holdRelease)
	step, ring = max(step, 1), max(ring, 1)
	attack, release = max(attack, 1), max(release, 1)
	for k, start := 0, 0; start < n; k, start = k+1, start+step {
		end := min(start+ring, n)
		w := 2 * math.Pi * holdNotes[k%len(holdNotes)] / float64(rate)
		for i := start; i < end; i++ {
			t := i - start
			env := math.Exp(-float64(t) / (holdDecay * float64(rate)))
			env *= math.Min(1, math.Min(float64(t)/float64(attack), float64(end-1-i)/float64(release)))
			mix[i] += holdLevel * env * math.Sin(w*float64(t))
		}
	}
	out := make([]int16, n)
	for i, v := range mix {
		out[i] = int16(math.Round(v * math.MaxInt16))
	}
	return out
}
