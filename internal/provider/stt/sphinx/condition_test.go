package sphinx

import (
	"math"
	"testing"

	"github.com/parley-voice/parley/internal/media/audio"
)

// rms is the RMS of pcm as a fraction of full scale.
func rms(pcm []int16) float64 {
	var sum float64
	for _, s := range pcm {
		x := float64(s) / 32768
		sum += x * x
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

// above is the RMS of pcm (16 kHz) above fc.
func above(pcm []int16, fc float64) float64 {
	hp := audio.HighPass4(fc, ConditionedRate)
	out := make([]int16, len(pcm))
	for i, s := range pcm {
		out[i] = clamp(hp[1].Step(hp[0].Step(float64(s) / 32768)))
	}
	return rms(out[ConditionedRate/10:]) // past the filter's settling
}

func tone(rate int, hz, amp float64, d float64) []int16 {
	out := make([]int16, int(d*float64(rate)))
	for i := range out {
		out[i] = int16(amp * 32767 * math.Sin(2*math.Pi*hz*float64(i)/float64(rate)))
	}
	return out
}

func TestConditionBringsSpeechToOneLevel(t *testing.T) {
	for _, amp := range []float64{0.01, 0.1, 0.7} {
		out := Condition(tone(8000, 440, amp, 2), 8000)
		if len(out) != 2*ConditionedRate {
			t.Fatalf("amp %v: %d samples out, want %d", amp, len(out), 2*ConditionedRate)
		}
		got := rms(out[ConditionedRate:])
		if math.Abs(got-activeLevel)/activeLevel > 0.1 {
			t.Errorf("amp %v: level %.4f after a second, want %.4f ±10%%", amp, got, activeLevel)
		}
	}
}

func TestConditionFillsOnlyTheEmptyBand(t *testing.T) {
	narrow := above(Condition(tone(8000, 440, 0.1, 2), 8000), 4500)
	wide := above(Condition(tone(16000, 440, 0.1, 2), 16000), 4500)
	// The fill is bandFill spread from ~3.7 kHz to 8 kHz; above 4.5 kHz
	// most of it remains. The wideband source gets only the floor.
	if narrow < bandFill/2 || narrow > bandFill*2 {
		t.Errorf("narrowband source: %.5f above 4.5 kHz, want about %.5f", narrow, bandFill)
	}
	if wide > floorNoise {
		t.Errorf("wideband source: %.5f above 4.5 kHz, want at most the floor %.5f", wide, floorNoise)
	}
}

func TestConditionStreamsAsOneBlock(t *testing.T) {
	in := tone(8000, 300, 0.2, 1)
	whole := Condition(in, 8000)
	c := NewConditioner(8000)
	var parts []int16
	for i := 0; i < len(in); i += 160 {
		parts = c.Process(parts, in[i:min(i+160, len(in))])
	}
	if len(parts) != len(whole) {
		t.Fatalf("framed: %d samples, whole: %d", len(parts), len(whole))
	}
	for i := range whole {
		if parts[i] != whole[i] {
			t.Fatalf("sample %d: framed %d, whole %d", i, parts[i], whole[i])
		}
	}
}
