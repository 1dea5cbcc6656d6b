package voicemail

import (
	"math"

	"github.com/parley-voice/parley/internal/media/audio"
)

// Beep detection: doc.go says how and why with these numbers.
const (
	beepLoHz    = 400.0  // the peak is searched for in beepLoHz..beepHiHz
	beepHiHz    = 2600.0 //
	highPassHz  = 200.0  // the meter's high-pass: DC and mains hum are no part of a beep
	maxSwing    = 1.5    // dB between a beep block's loudest and quietest quarter
	maxDriftHz  = 25.0   // a beep's frequency stays this close to its first block's
	minLevelDBF = -100.0 // the level of digital silence
)

// reading is what toneMeter.measure finds in one block.
type reading struct {
	level  float64 // dBFS (RMS) of the high-passed block
	hz     float64 // frequency of the strongest peak in beepLoHz..beepHiHz
	purity float64 // share of the block's energy in that peak's main lobe
	swing  float64 // dB between the loudest and the quietest quarter of the block
}

// toneMeter measures how much of a block's energy one sinusoid carries.
type toneMeter struct {
	rate   int
	window []float64 // Hann, one block long
	x      []float64 // the windowed block
	hp     [2]audio.Biquad
	spec   *spectrum
	lo, hi int // peak search range, in bins
	lobe   int // half-width of a tone's main lobe, in bins
}

func newToneMeter(rate, block int) *toneMeter {
	n := 1
	for n < block {
		n <<= 1
	}
	m := &toneMeter{rate: rate, window: make([]float64, block), x: make([]float64, block), spec: newSpectrum(n)}
	for i := range m.window {
		m.window[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(block))
	}
	// A 4th-order Butterworth (two sections): 50/60 Hz are 40 dB down,
	// 400 Hz passes whole.
	m.hp = audio.HighPass4(highPassHz, rate)
	bin := float64(rate) / float64(n)
	m.lo = max(int(math.Ceil(beepLoHz/bin)), 1)
	m.hi = min(int(beepHiHz/bin), n/2-1)
	// The Hann window's main lobe reaches two unpadded bins (2·rate/block
	// Hz, 100 Hz for 20 ms) either side of a tone.
	m.lobe = int(2 * float64(n) / float64(block))
	return m
}

// measure analyses one block (at most the block length given to
// newToneMeter). It does not allocate.
func (m *toneMeter) measure(pcm []int16) reading {
	r := reading{level: minLevelDBF}
	var e float64
	var quarter [4]float64
	q := (len(pcm) + 3) / 4
	for i, v := range pcm {
		f := m.hp[1].Step(m.hp[0].Step(float64(v)))
		quarter[i/q] += f * f
		m.x[i] = f * m.window[i]
	}
	for _, v := range quarter {
		e += v
	}
	if e == 0 {
		return r
	}
	r.level = math.Max(minLevelDBF, dB(e/float64(len(pcm))/(32768*32768)))
	lo, hi := quarter[0], quarter[0]
	for _, v := range quarter[1:] {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	r.swing = 100
	if lo > 0 {
		r.swing = dB(hi / lo)
	}

	p := m.spec.power(m.x[:len(pcm)])
	var total float64
	for _, v := range p {
		total += v
	}
	if total == 0 {
		return r
	}
	k := m.lo
	for i := m.lo + 1; i <= m.hi; i++ {
		if p[i] > p[k] {
			k = i
		}
	}
	var lobe float64
	for _, v := range p[max(0, k-m.lobe):min(len(p), k+m.lobe+1)] {
		lobe += v
	}
	r.purity = lobe / total
	// Parabolic interpolation on the log power of the peak and its
	// neighbours places the tone between bins (within a few Hz for a Hann
	// window).
	a, b, c := math.Log(p[k-1]+1e-30), math.Log(p[k]+1e-30), math.Log(p[k+1]+1e-30)
	delta := 0.0
	if den := a - 2*b + c; den < 0 {
		delta = math.Max(-0.5, math.Min(0.5, 0.5*(a-c)/den))
	}
	r.hz = (float64(k) + delta) * float64(m.rate) / float64(m.spec.n)
	return r
}

func dB(ratio float64) float64 { return 10 * math.Log10(ratio) }

// beepTracker follows runs of tone blocks and confirms a beep once a run
// lasts long enough.
type beepTracker struct {
	meter     *toneMeter
	minPurity float64
	minLevel  float64
	minBlocks int

	run    int     // blocks in the current run of steady tone
	first  float64 // the run's first frequency
	sumHz  float64 // for the run's mean frequency
	heard  int     // confirmed beeps so far
	active bool    // the current run is a confirmed beep
}

// block feeds one block and reports whether a confirmed beep is sounding
// in it, and whether a confirmed beep ended just before it.
func (t *beepTracker) block(pcm []int16) (on, ended bool) {
	r := t.meter.measure(pcm)
	tone := r.level >= t.minLevel && r.purity >= t.minPurity && r.swing <= maxSwing
	switch {
	case tone && t.run > 0 && math.Abs(r.hz-t.first) <= maxDriftHz:
		t.run++
		t.sumHz += r.hz
	case tone:
		ended = t.active
		t.run, t.first, t.sumHz, t.active = 1, r.hz, r.hz, false
	default:
		ended = t.active
		t.run, t.active = 0, false
	}
	if t.run >= t.minBlocks && !t.active {
		t.active = true
		t.heard++
	}
	return t.active, ended
}

// hz is the mean frequency of the current run.
func (t *beepTracker) hz() float64 {
	if t.run == 0 {
		return 0
	}
	return t.sumHz / float64(t.run)
}
