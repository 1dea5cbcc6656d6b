package audio

import (
	"math"
	"testing"
	"time"
)

func TestToneAndSilence(t *testing.T) {
	tone := Tone(1000, 8000, 20*time.Millisecond, 0.5)
	if len(tone) != 160 {
		t.Fatalf("Tone: %d samples, want 160", len(tone))
	}
	if got := RMS(tone); math.Abs(got-0.5/math.Sqrt2) > 0.001 {
		t.Errorf("RMS of a half-scale sine = %.4f, want %.4f", got, 0.5/math.Sqrt2)
	}
	if got := RMS(Tone(1000, 8000, time.Second, 2)); math.Abs(got-1/math.Sqrt2) > 0.001 {
		t.Errorf("amplitude is not clamped to full scale: RMS %.4f", got)
	}
	s := Silence(48000, 20*time.Millisecond)
	if len(s) != 960 || RMS(s) != 0 {
		t.Errorf("Silence: %d samples, RMS %v", len(s), RMS(s))
	}
	if len(Silence(8000, -time.Second)) != 0 || len(Tone(440, 0, time.Second, 1)) != 0 {
		t.Error("negative durations or rates must give no samples")
	}
	if got := len(Tone(440, 44100, 1500*time.Millisecond, 1)); got != 66150 {
		t.Errorf("1.5 s at 44.1 kHz = %d samples, want 66150", got)
	}
}

func TestToneShareAndDetect(t *testing.T) {
	const rate = 8000
	block := 100 * time.Millisecond
	tone := func(f, a float64) []int16 { return Tone(f, rate, block, a) }
	tests := []struct {
		name      string
		pcm       []int16
		freq      float64
		minShare  float64
		maxShare  float64
		wantFound bool
	}{
		{"pure tone", tone(1000, 0.5), 1000, 0.99, 1, true},
		{"quiet tone", tone(1000, 0.01), 1000, 0.99, 1, true},
		{"tone below -50 dBFS", tone(1000, 0.003), 1000, 0.99, 1, false},
		{"absent", tone(1000, 0.5), 2000, 0, 0.01, false},
		{"440 is not 1000", tone(440, 0.5), 1000, 0, 0.01, false},
		{"1000 is not 440", tone(1000, 0.5), 440, 0, 0.01, false},
		{"440", tone(440, 0.5), 440, 0.99, 1, true},
		{"silence", Silence(rate, block), 1000, 0, 0, false},
		{"empty", nil, 1000, 0, 0, false},
		{"noise", noise(rate, block, 0.2, 9), 1000, 0, 0.05, false},
		{"tone in noise at 0 dB SNR", mix(Tone(1000, rate, 500*time.Millisecond, 0.3), noise(rate, 500*time.Millisecond, 0.3/math.Sqrt2, 5)), 1000, 0.4, 0.6, true},
		{"two equal tones (DTMF 1)", mix(tone(697, 0.3), tone(1209, 0.3)), 697, 0.45, 0.55, true},
		{"G.711 round trip", DecodeULaw(nil, EncodeULaw(nil, tone(1000, 0.5))), 1000, 0.99, 1, true},
		{"20 ms frame", Tone(1000, rate, 20*time.Millisecond, 0.5), 1000, 0.99, 1, true},
		{"frequency above Nyquist", tone(1000, 0.5), 5000, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			share := ToneShare(tt.pcm, rate, tt.freq)
			if share < tt.minShare || share > tt.maxShare {
				t.Errorf("ToneShare = %.4f, want %.2f..%.2f", share, tt.minShare, tt.maxShare)
			}
			if got := DetectTone(tt.pcm, rate, tt.freq); got != tt.wantFound {
				t.Errorf("DetectTone = %v, want %v (share %.4f, RMS %.5f)", got, tt.wantFound, share, RMS(tt.pcm))
			}
		})
	}
}

func TestToneShareAtOtherRates(t *testing.T) {
	for _, rate := range []int{16000, 24000, 48000} {
		pcm := Tone(1000, rate, 20*time.Millisecond, 0.5)
		if !DetectTone(pcm, rate, 1000) || DetectTone(pcm, rate, 440) {
			t.Errorf("%d Hz: 1000 vs 440 not told apart (%.3f, %.3f)", rate, ToneShare(pcm, rate, 1000), ToneShare(pcm, rate, 440))
		}
	}
}

func mix(a, b []int16) []int16 {
	out := make([]int16, max(len(a), len(b)))
	for i := range out {
		var s int
		if i < len(a) {
			s += int(a[i])
		}
		if i < len(b) {
			s += int(b[i])
		}
		out[i] = int16(max(math.MinInt16, min(math.MaxInt16, s)))
	}
	return out
}
