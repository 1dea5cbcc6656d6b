package vad

import (
	"math"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

// Defaults for the zero values of Config.
const (
	DefaultStartAfter  = 60 * time.Millisecond
	DefaultHangover    = 300 * time.Millisecond
	DefaultSensitivity = 0.5
)

// Tuning; doc.go says why each value is what it is.
const (
	frameDuration = 20 * time.Millisecond

	// MinLevel is the Level of digital silence (and of an empty frame).
	MinLevel = -100.0

	highPassHz    = 250.0 // cut-off of the 4th-order high-pass in front of everything
	absMinSpeech  = -55.0 // dBFS: quieter frames are never speech
	marginLoose   = 12.0  // dB above the floor at Sensitivity 0
	marginTight   = 3.0   // dB above the floor at Sensitivity 1
	holdRelief    = 3.0   // dB the margin drops by while an utterance is on
	minMargin     = 2.0   // dB: the margin never goes below this
	toneGainDB    = 25.0  // 4th-order prediction gain above which a frame is a tone
	steadyGainDB  = 10.0  // ... or above which a frame that repeats the last one is
	steadyLevelDB = 1.0   // "repeats": level within this of the last frame's
	steadyShape   = 0.05  // and normalised correlations (lags 1-4) within this
	zcrMinPerSec  = 150.0 // zero crossings per second, lower bound for speech
	zcrMaxPerSec  = 6000.0
	floorSub      = 200 * time.Millisecond // one sub-window of the minimum tracker
	floorSubs     = 8                      // sub-windows kept: floor is the minimum over 1.6-1.8 s
	startGap      = 40 * time.Millisecond  // non-speech a start run tolerates
	lpcOrder      = 4
)

// Config tunes the detector; zero values take the documented defaults.
type Config struct {
	// Rate is the sample rate in Hz: 8000 or 16000 (required; any rate
	// from 8000 to 48000 works).
	Rate int
	// StartAfter is how much speech (within a run that tolerates gaps of
	// up to 40 ms) starts an utterance. Default 60 ms.
	StartAfter time.Duration
	// Hangover is how much non-speech ends an utterance. Default 300 ms.
	Hangover time.Duration
	// Sensitivity, 0..1 (default 0.5), sets how far above the noise floor a
	// frame must be to count as speech: 12 dB at 0 down to 3 dB at 1
	// (7.5 dB at the default). Zero or NaN means the default.
	Sensitivity float64
}

// Frame is one 20 ms frame's verdict.
type Frame struct {
	Speech  bool          // this frame looks like speech
	Start   bool          // an utterance started (at the first speech frame of the StartAfter run)
	End     bool          // an utterance ended (after Hangover of non-speech)
	Talking bool          // inside an utterance
	Length  time.Duration // length of the current (or just ended) utterance so far, from its first speech frame
	// Silence is, inside an utterance (and on its End), the non-speech
	// since its latest speech frame: 0 on a speech frame and outside
	// utterances. A consumer that ends turns itself (EndUtterance) compares
	// it with the silence it wants.
	Silence time.Duration
	Level   float64 // frame energy in dBFS
	Floor   float64 // the tracked noise floor in dBFS
}

// Detector is a voice activity detector for one stream of audio. It is
// not safe for concurrent use.
type Detector struct {
	rate       int
	startAfter int64 // samples
	hangover   int64
	startGap   int64
	margin     float64
	zcrMin     float64 // crossings per sample
	zcrMax     float64

	hp   [2]audio.Biquad
	hist [lpcOrder]float64 // the last filtered samples of the previous frame, newest first

	// noise floor: minimum statistics over sub-windows
	subLen  int64
	subFill int64
	subMin  float64
	subs    [floorSubs]float64
	nSubs   int
	subNext int
	floor   float64

	now int64 // samples processed

	prev features // the last non-empty frame's

	// start run
	runOn     bool
	runStart  int64 // sample index of the run's first speech frame
	runSpeech int64
	runGap    int64

	// utterance
	talking    bool
	uttStart   int64
	lastSpeech int64 // sample index just after the last speech frame
}

// New returns a detector for c. It panics if c.Rate is outside 8000..48000.
func New(c Config) *Detector {
	if c.Rate < 8000 || c.Rate > 48000 {
		panic("vad: Config.Rate must be 8000 or 16000 (8000..48000 accepted)")
	}
	if c.StartAfter <= 0 {
		c.StartAfter = DefaultStartAfter
	}
	if c.Hangover <= 0 {
		c.Hangover = DefaultHangover
	}
	s := c.Sensitivity
	if s == 0 || math.IsNaN(s) {
		s = DefaultSensitivity
	}
	s = math.Max(0, math.Min(1, s))
	d := &Detector{
		rate:       c.Rate,
		startAfter: samplesOf(c.Rate, c.StartAfter),
		hangover:   samplesOf(c.Rate, c.Hangover),
		startGap:   samplesOf(c.Rate, startGap),
		margin:     marginLoose + (marginTight-marginLoose)*s,
		zcrMin:     zcrMinPerSec / float64(c.Rate),
		zcrMax:     zcrMaxPerSec / float64(c.Rate),
		subLen:     samplesOf(c.Rate, floorSub),
	}
	d.hp = audio.HighPass4(highPassHz, c.Rate)
	d.Reset()
	return d
}

func samplesOf(rate int, t time.Duration) int64 {
	return int64(t) * int64(rate) / int64(time.Second)
}

func (d *Detector) dur(samples int64) time.Duration {
	return time.Duration(samples * int64(time.Second) / int64(d.rate))
}

// Reset forgets everything heard so far: filter state, noise floor and
// any utterance in progress, as if the detector were new.
func (d *Detector) Reset() {
	for i := range d.hp {
		d.hp[i].Reset()
	}
	d.hist = [lpcOrder]float64{}
	d.subFill = 0
	d.subMin = math.Inf(1)
	d.subs = [floorSubs]float64{}
	d.nSubs, d.subNext = 0, 0
	d.floor = MinLevel
	d.now = 0
	d.prev = features{level: MinLevel}
	d.runOn, d.runStart, d.runSpeech, d.runGap = false, 0, 0, 0
	d.talking, d.uttStart, d.lastSpeech = false, 0, 0
}

// features is what one frame measures.
type features struct {
	level float64           // dBFS of the high-passed frame
	gain  float64           // prediction gain, dB
	zcr   float64           // zero crossings per sample
	rho   [lpcOrder]float64 // normalised correlation at lags 1..4
}

// analyse filters frame and measures it in one pass, then solves a 4×4
// system for the prediction gain.
func (d *Detector) analyse(frame []int16) features {
	// c[j] = Σ y[n]·y[n-j] over the frame, the first row of the
	// covariance matrix; the rest follows from it and the samples at the
	// frame's edges.
	var c [lpcOrder + 1]float64
	old := d.hist
	h := old
	var crossings int
	prevNeg := h[0] < 0
	for _, s := range frame {
		y := d.hp[1].Step(d.hp[0].Step(float64(s)))
		c[0] += y * y
		c[1] += y * h[0]
		c[2] += y * h[1]
		c[3] += y * h[2]
		c[4] += y * h[3]
		h[3], h[2], h[1], h[0] = h[2], h[1], h[0], y
		neg := y < 0
		if neg != prevNeg {
			crossings++
		}
		prevNeg = neg
	}
	d.hist = h
	// Keep the filter from carrying overflow or NaN into the next frame
	// whatever it was fed (it cannot be, from int16, but be sure).
	for i := range d.hp {
		if !d.hp[i].Finite() {
			d.hp[i].Reset()
			d.hist = [lpcOrder]float64{}
		}
	}
	n := float64(len(frame))
	f := features{level: MinLevel}
	if n == 0 || c[0] <= 0 || !finite(c[0]) {
		return f
	}
	ms := c[0] / n / (32768 * 32768)
	f.level = math.Max(MinLevel, 10*math.Log10(ms))
	f.zcr = float64(crossings) / n
	f.gain = predictionGain(&c, &old, &h)
	for j := range f.rho {
		f.rho[j] = c[j+1] / c[0]
	}
	return f
}

// predictionGain is the gain, in dB, of the best order-4 linear predictor
// of the frame (covariance method): the frame's energy over the energy of
// what the predictor leaves. c is the first row of the covariance matrix,
// before and after the samples just before and the last samples of the
// frame, newest first.
func predictionGain(c *[lpcOrder + 1]float64, before, after *[lpcOrder]float64) float64 {
	// phi[i][j] = Σ y[n-i]·y[n-j]; phi[i+1][j+1] = phi[i][j] +
	// y[-1-i]·y[-1-j] - y[N-1-i]·y[N-1-j].
	var phi [lpcOrder + 1][lpcOrder + 1]float64
	phi[0] = *c
	for i := 0; i < lpcOrder; i++ {
		for j := i; j < lpcOrder; j++ {
			phi[i+1][j+1] = phi[i][j] + before[i]*before[j] - after[i]*after[j]
		}
	}
	// Solve phi[1..4][1..4]·a = phi[1..4][0] by Cholesky, with a little
	// diagonal loading so that a pure tone (a singular system) still
	// solves; the loading caps the gain near 60 dB.
	const p = lpcOrder
	var l [p][p]float64
	load := phi[0][0] * 1e-6
	for i := 0; i < p; i++ {
		for j := 0; j <= i; j++ {
			a, b := i, j
			if b > a {
				a, b = b, a
			}
			sum := phi[b+1][a+1]
			if i == j {
				sum += load
			}
			for k := 0; k < j; k++ {
				sum -= l[i][k] * l[j][k]
			}
			if i == j {
				if sum <= 0 {
					return 0
				}
				l[i][i] = math.Sqrt(sum)
			} else {
				l[i][j] = sum / l[j][j]
			}
		}
	}
	// Forward substitution: l·z = phi[0][1..4]; the explained energy is |z|².
	var z [p]float64
	var explained float64
	for i := 0; i < p; i++ {
		sum := phi[0][i+1]
		for k := 0; k < i; k++ {
			sum -= l[i][k] * z[k]
		}
		z[i] = sum / l[i][i]
		explained += z[i] * z[i]
	}
	e := phi[0][0] - explained
	if !(e > 0) {
		return 60
	}
	return math.Max(0, math.Min(60, 10*math.Log10(phi[0][0]/e)))
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// trackFloor feeds one frame's level (n samples long) to the minimum
// tracker.
func (d *Detector) trackFloor(level float64, n int64) {
	d.subMin = math.Min(d.subMin, level)
	d.subFill += n
	if d.subFill >= d.subLen {
		d.subs[d.subNext] = d.subMin
		d.subNext = (d.subNext + 1) % floorSubs
		if d.nSubs < floorSubs {
			d.nSubs++
		}
		d.subFill = 0
		d.subMin = math.Inf(1)
	}
	m := d.subMin
	for i := 0; i < d.nSubs; i++ {
		m = math.Min(m, d.subs[i])
	}
	if math.IsInf(m, 1) {
		m = level
	}
	d.floor = m
}

// Process takes the next frame (20 ms at the configured rate; other
// lengths work, time advancing by the samples given) and returns its
// verdict. It does not allocate.
func (d *Detector) Process(frame []int16) Frame {
	if len(frame) == 0 {
		return Frame{Talking: d.talking, Length: d.length(), Level: MinLevel, Floor: d.floor}
	}
	n := int64(len(frame))
	f := d.analyse(frame)
	d.trackFloor(f.level, n)

	margin := d.margin
	if d.talking {
		margin = math.Max(minMargin, margin-holdRelief)
	}
	tonal := f.gain >= toneGainDB || (f.gain >= steadyGainDB && repeats(&f, &d.prev))
	d.prev = f
	speech := f.level > absMinSpeech &&
		f.level > d.floor+margin &&
		!tonal &&
		f.zcr >= d.zcrMin && f.zcr <= d.zcrMax

	out := Frame{Speech: speech, Level: f.level, Floor: d.floor}
	begin := d.now
	d.now += n

	if d.talking {
		if speech {
			d.lastSpeech = d.now
		} else if d.now-d.lastSpeech >= d.hangover {
			out.End = true
			out.Length = d.dur(d.lastSpeech - d.uttStart)
			out.Silence = d.dur(d.now - d.lastSpeech)
			d.talking = false
			d.runOn = false
			return out
		}
		out.Talking = true
		out.Length = d.length()
		out.Silence = d.dur(d.now - d.lastSpeech)
		return out
	}

	// Not talking: build up a start run.
	if speech {
		if !d.runOn {
			d.runOn, d.runStart, d.runSpeech = true, begin, 0
		}
		d.runSpeech += n
		d.runGap = 0
		if d.runSpeech >= d.startAfter {
			d.runOn = false
			d.talking = true
			d.uttStart = d.runStart
			d.lastSpeech = d.now
			out.Start, out.Talking = true, true
			out.Length = d.length()
		}
		return out
	}
	if d.runOn {
		d.runGap += n
		if d.runGap > d.startGap {
			d.runOn = false
		}
	}
	return out
}

// EndUtterance ends the utterance under way now, as its hangover would
// have: the caller of Process decided the turn is over sooner (an
// adaptive end of turn, judged from the words). The noise floor and the
// filters are kept; the next speech starts a new utterance after
// StartAfter. False when no utterance was under way.
func (d *Detector) EndUtterance() bool {
	if !d.talking {
		return false
	}
	d.talking = false
	d.runOn = false
	return true
}

// repeats says whether f looks like p again: the same level and the same
// short-term spectrum, as a steady tone does frame after frame.
func repeats(f, p *features) bool {
	if math.Abs(f.level-p.level) > steadyLevelDB {
		return false
	}
	for j := range f.rho {
		if math.Abs(f.rho[j]-p.rho[j]) > steadyShape {
			return false
		}
	}
	return true
}

// length is the current utterance's span from its first speech frame to
// the end of its latest speech frame, or 0 outside one.
func (d *Detector) length() time.Duration {
	if !d.talking {
		return 0
	}
	return d.dur(d.lastSpeech - d.uttStart)
}
