package sphinx

import (
	"math"

	"github.com/parley-voice/parley/internal/media/audio"
)

// Conditioning makes a leg's audio look like what the en-us acoustic model
// was trained on: 16 kHz wideband speech at a steady level. Phone audio
// differs in two ways that cost most of the words:
//
//   - Narrowband codecs (G.711) carry nothing above 4 kHz. Upsampled, the
//     model's filterbank (up to 6.8 kHz) sees its upper channels at digital
//     silence, whose log energies are far outside anything it was trained
//     on. Faint noise shaped to the empty band gives those channels the
//     low, steady energy of a quiet room instead.
//   - Levels vary from call to call. The features are mean-normalised, but
//     the band fill must sit a fixed distance below the speech, so the
//     speech is brought to one active level first.
//
// A Conditioner works on a stream, frame by frame, as the caller speaks:
// the level is estimated from the speech heard so far (the first loud
// block sets it, later ones move it slowly), so the decoder can run while
// the caller is still talking.
const (
	// ConditionedRate is the rate a Conditioner produces.
	ConditionedRate = Rate
	// activeLevel is the RMS (of full scale) speech is brought to.
	activeLevel = 0.02
	// bandFill is the RMS (of full scale) of the noise put in the band a
	// narrowband source left empty: 26 dB below the speech.
	bandFill = 0.001
	// floorNoise is white noise under everything, so no channel of the
	// filterbank ever sees digital silence (log of zero).
	floorNoise = 0.0002
	// speechBlock is the block (at 16 kHz) whose energy decides whether
	// the level estimate moves: 10 ms.
	speechBlock = ConditionedRate / 100
	// speechGate is the block RMS (of full scale, before gain) above which
	// a block counts as speech: -50 dBFS.
	speechGate = 0.00316
	// levelSmoothing is the weight of the running level estimate against
	// a new speech block (about 0.5 s of speech to move it by 1/e).
	levelSmoothing = 0.98
	// minGain and maxBoost bound how much the level is changed.
	minGain, maxBoost = 0.02, 16.0
)

// Conditioner turns mono 16-bit PCM at a leg's rate into conditioned
// 16 kHz PCM. It keeps state between calls (resampler history, the level
// estimate, the noise generator), so audio must be given in order. It is
// not safe for concurrent use.
type Conditioner struct {
	rs      *audio.Resampler
	fill    bool            // the source leaves a band to fill
	shape   [2]audio.Biquad // high-pass that shapes the band fill
	rng     uint64          // xorshift state: deterministic noise
	level   float64         // running active level (RMS of full scale), 0 before speech
	gain    float64         // applied gain, moved towards activeLevel/level
	block   []float64       // the current 10 ms block, before gain
	scratch []int16
}

// NewConditioner returns a Conditioner for audio at rate Hz. Below 16 kHz
// the band above the source's Nyquist frequency (less a margin for the
// codec's own roll-off) is filled.
func NewConditioner(rate int) *Conditioner {
	c := &Conditioner{
		rs:   audio.NewResampler(rate, ConditionedRate),
		rng:  0x9e3779b97f4a7c15,
		gain: 1,
	}
	if rate < ConditionedRate {
		c.fill = true
		c.shape = audio.HighPass4(0.46*float64(rate), ConditionedRate)
	}
	return c
}

// Condition conditions one whole utterance at rate: a new Conditioner's
// output for it.
func Condition(pcm []int16, rate int) []int16 {
	return NewConditioner(rate).Process(nil, pcm)
}

// Process conditions src, appends the 16 kHz result to dst and returns it.
func (c *Conditioner) Process(dst, src []int16) []int16 {
	c.scratch = c.rs.Process(c.scratch[:0], src)
	for _, s := range c.scratch {
		x := float64(s) / 32768
		c.observe(x)
		y := x*c.gain + floorNoise*c.noise()
		if c.fill {
			y += bandFill * 2 * c.shape[1].Step(c.shape[0].Step(c.noise()))
		}
		dst = append(dst, clamp(y))
	}
	return dst
}

// observe adds one sample to the level estimate: each full block loud
// enough to be speech moves it, and the gain follows.
func (c *Conditioner) observe(x float64) {
	c.block = append(c.block, x)
	if len(c.block) < speechBlock {
		return
	}
	var sum float64
	for _, v := range c.block {
		sum += v * v
	}
	c.block = c.block[:0]
	rms := math.Sqrt(sum / speechBlock)
	if rms < speechGate {
		return
	}
	if c.level == 0 {
		c.level = rms
	} else {
		c.level = levelSmoothing*c.level + (1-levelSmoothing)*rms
	}
	c.gain = min(max(activeLevel/c.level, minGain), maxBoost)
}

// noise is white noise with unit RMS (uniform on ±√3).
func (c *Conditioner) noise() float64 {
	c.rng ^= c.rng << 13
	c.rng ^= c.rng >> 7
	c.rng ^= c.rng << 17
	return (float64(c.rng>>11)/float64(1<<53)*2 - 1) * math.Sqrt(3)
}

func clamp(y float64) int16 {
	v := math.Round(y * 32768)
	if v > math.MaxInt16 {
		return math.MaxInt16
	}
	if v < math.MinInt16 {
		return math.MinInt16
	}
	return int16(v)
}
