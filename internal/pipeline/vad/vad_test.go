package vad

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

var rates = []int{8000, 16000}

const frame = 20 * time.Millisecond

func frameLen(rate int) int { return rate / 50 }

// run feeds pcm to d in 20 ms frames and returns the verdicts.
func run(d *Detector, rate int, pcm []int16) []Frame {
	n := frameLen(rate)
	var out []Frame
	for i := 0; i+n <= len(pcm); i += n {
		out = append(out, d.Process(pcm[i:i+n]))
	}
	return out
}

func samplesFor(rate int, t time.Duration) int {
	return int(int64(t) * int64(rate) / int64(time.Second))
}

// events lists the frame indices of Starts and Ends, and whether any frame
// was Talking.
func events(fs []Frame) (starts, ends []int, talking int) {
	for i, f := range fs {
		if f.Start {
			starts = append(starts, i)
		}
		if f.End {
			ends = append(ends, i)
		}
		if f.Talking {
			talking++
		}
	}
	return
}

func TestSilenceAndLowNoise(t *testing.T) {
	for _, rate := range rates {
		sigs := map[string][]int16{
			"silence":     audio.Silence(rate, 5*time.Second),
			"white -60dB": whiteNoise(rate, 5*time.Second, dbBelow(1, 60), 1),
			"white -40dB": whiteNoise(rate, 5*time.Second, dbBelow(1, 40), 2),
			"pink -30dB":  pinkNoise(rate, 5*time.Second, dbBelow(1, 30), 3),
		}
		for name, s := range sigs {
			fs := run(New(Config{Rate: rate}), rate, s)
			if _, _, talking := events(fs); talking > 0 {
				t.Errorf("%d Hz %s: Talking in %d frames", rate, name, talking)
			}
			for i, f := range fs {
				if !finite(f.Level) || !finite(f.Floor) {
					t.Fatalf("%d Hz %s frame %d: Level %v Floor %v", rate, name, i, f.Level, f.Floor)
				}
			}
		}
	}
}

// TestTonesAndHum: loud steady tones and mains hum are not speech (at most
// a frame or two at their onset, less than StartAfter), over silence and
// over low noise, starting after a second of quiet.
func TestTonesAndHum(t *testing.T) {
	for _, rate := range rates {
		d4 := 4 * time.Second
		hum := audio.Tone(50, rate, d4, 0.5)
		hum60 := mix(audio.Tone(60, rate, d4, 0.4), audio.Tone(180, rate, d4, 0.05), 0)
		sigs := map[string][]int16{
			"1 kHz":        audio.Tone(1000, rate, d4, 0.5),
			"1 kHz quiet":  audio.Tone(1000, rate, d4, 0.05),
			"50 Hz hum":    hum,
			"60 Hz hum+3h": hum60,
			"dial 350+440": mix(audio.Tone(350, rate, d4, 0.25), audio.Tone(440, rate, d4, 0.25), 0),
			"DTMF 5":       mix(audio.Tone(770, rate, d4, 0.25), audio.Tone(1336, rate, d4, 0.25), 0),
		}
		for name, s := range sigs {
			for _, bg := range []string{"silence", "noise"} {
				lead := audio.Silence(rate, time.Second)
				if bg == "noise" {
					lead = whiteNoise(rate, time.Second+d4, dbBelow(1, 60), 7)
				}
				sig := mix(lead, s, samplesFor(rate, time.Second))
				if bg == "silence" {
					sig = concat(lead, s)
				}
				fs := run(New(Config{Rate: rate}), rate, sig)
				speech := 0
				for _, f := range fs {
					if f.Speech {
						speech++
					}
				}
				if _, _, talking := events(fs); talking > 0 || time.Duration(speech)*frame >= DefaultStartAfter {
					t.Errorf("%d Hz %s over %s: %d speech frames, Talking in %d", rate, name, bg, speech, talking)
				}
			}
		}
	}
}

type onsetCase struct {
	rate         int
	snr          float64
	startLatency time.Duration // from speech onset to the Start frame's end
	endLatency   time.Duration // from speech offset to the End frame's end
	length       time.Duration
}

// utterance returns 1 s of noise, speech of length speechDur at snr dB above
// the noise, then 1.5 s of noise; and the speech's onset and offset sample.
func utterance(rate int, speechDur time.Duration, snr float64, seed uint64) (pcm []int16, on, off int) {
	const speechRMS = 0.1 // -20 dBFS
	total := time.Second + speechDur + 1500*time.Millisecond
	noise := whiteNoise(rate, total, dbBelow(speechRMS, snr), seed)
	on = samplesFor(rate, time.Second)
	sp := speechLike(rate, speechDur, speechRMS, seed)
	return mix(noise, sp, on), on, on + len(sp)
}

func measure(t *testing.T, rate int, pcm []int16, on, off int, c Config) onsetCase {
	t.Helper()
	c.Rate = rate
	fs := run(New(c), rate, pcm)
	starts, ends, _ := events(fs)
	if len(starts) != 1 || len(ends) != 1 {
		t.Fatalf("%d Hz: starts at frames %v, ends at %v; want one of each", rate, starts, ends)
	}
	n := frameLen(rate)
	at := func(i int) time.Duration { return time.Duration(int64((i+1)*n) * int64(time.Second) / int64(rate)) }
	ts := func(s int) time.Duration { return time.Duration(int64(s) * int64(time.Second) / int64(rate)) }
	return onsetCase{
		rate:         rate,
		startLatency: at(starts[0]) - ts(on),
		endLatency:   at(ends[0]) - ts(off),
		length:       fs[ends[0]].Length,
	}
}

func TestOnsetOffsetInNoise(t *testing.T) {
	for _, rate := range rates {
		for _, snr := range []float64{20, 10} {
			for seed := uint64(1); seed <= 3; seed++ {
				pcm, on, off := utterance(rate, 2*time.Second, snr, seed)
				m := measure(t, rate, pcm, on, off, Config{})
				t.Logf("%d Hz, SNR %.0f dB, seed %d: start after %v, end after %v, length %v",
					rate, snr, seed, m.startLatency, m.endLatency, m.length)
				if m.startLatency < 0 || m.startLatency > 100*time.Millisecond {
					t.Errorf("%d Hz SNR %.0f: Start %v after onset, want within 100ms", rate, snr, m.startLatency)
				}
				if m.endLatency < 0 || m.endLatency > DefaultHangover+60*time.Millisecond {
					t.Errorf("%d Hz SNR %.0f: End %v after offset, want within %v", rate, snr, m.endLatency, DefaultHangover+60*time.Millisecond)
				}
			}
		}
	}
}

// TestBackchannel: a 150 ms "mm-hm" starts and ends, and its Length says
// it is far shorter than a 500 ms interruption threshold.
func TestBackchannel(t *testing.T) {
	for _, rate := range rates {
		noise := whiteNoise(rate, 3*time.Second, dbBelow(0.1, 25), 9)
		on := samplesFor(rate, time.Second)
		burst := speechLikeBurst(rate, 150*time.Millisecond, 0.1, 4)
		pcm := mix(noise, burst, on)
		m := measure(t, rate, pcm, on, on+len(burst), Config{})
		t.Logf("%d Hz backchannel: length %v, start after %v, end after %v", rate, m.length, m.startLatency, m.endLatency)
		if m.length < 100*time.Millisecond || m.length > 200*time.Millisecond {
			t.Errorf("%d Hz: backchannel Length %v, want about 150ms", rate, m.length)
		}
	}
}

// speechLikeBurst is a single voiced syllable: speechLike without the
// syllable envelope's dips, with 10 ms fades.
func speechLikeBurst(rate int, d time.Duration, rms float64, seed uint64) []int16 {
	s := speechLike(rate, d+time.Second, rms, seed)
	// Take a stretch from the middle of a syllable: at 4 Hz the envelope
	// peaks at 125 ms, 375 ms, ...; 300..450 ms is voiced throughout.
	start := samplesFor(rate, 300*time.Millisecond)
	n := samplesFor(rate, d)
	out := append([]int16(nil), s[start:start+n]...)
	fade := samplesFor(rate, 10*time.Millisecond)
	for i := 0; i < fade; i++ {
		g := float64(i) / float64(fade)
		out[i] = int16(float64(out[i]) * g)
		out[n-1-i] = int16(float64(out[n-1-i]) * g)
	}
	return out
}

func TestPauseBridging(t *testing.T) {
	for _, rate := range rates {
		for _, tc := range []struct {
			pause time.Duration
			want  int
		}{{150 * time.Millisecond, 1}, {600 * time.Millisecond, 2}} {
			noise := whiteNoise(rate, 5*time.Second, dbBelow(0.1, 20), 5)
			a := speechLike(rate, 800*time.Millisecond, 0.1, 1)
			b := speechLike(rate, 800*time.Millisecond, 0.1, 2)
			sp := concat(a, audio.Silence(rate, tc.pause), b)
			pcm := mix(noise, sp, samplesFor(rate, time.Second))
			fs := run(New(Config{Rate: rate, Hangover: 300 * time.Millisecond}), rate, pcm)
			starts, ends, _ := events(fs)
			if len(starts) != tc.want || len(ends) != tc.want {
				t.Errorf("%d Hz, pause %v: %d starts %d ends, want %d utterances", rate, tc.pause, len(starts), len(ends), tc.want)
			}
		}
	}
}

// TestFloorAdapts: after the background noise steps up 20 dB the detector
// may call it speech for a while, but within 2 s it stops, and speech over
// the new noise is still detected.
func TestFloorAdapts(t *testing.T) {
	for _, rate := range rates {
		low := whiteNoise(rate, 2*time.Second, dbBelow(1, 55), 1)
		high := pinkNoise(rate, 6*time.Second, dbBelow(1, 35), 2)
		sp := speechLike(rate, time.Second, dbBelow(1, 20), 3)
		high = mix(high, sp, samplesFor(rate, 4*time.Second))
		pcm := concat(low, high)
		fs := run(New(Config{Rate: rate}), rate, pcm)
		step := 2 * time.Second / frame
		for i := int(step + 2*time.Second/frame); i < int(step+4*time.Second/frame); i++ {
			if fs[i].Speech {
				t.Errorf("%d Hz: frame %v after the step still speech (level %.1f floor %.1f)", rate, time.Duration(i-int(step))*frame, fs[i].Level, fs[i].Floor)
				break
			}
		}
		last := fs[int(step+2*time.Second/frame)]
		if last.Floor < -45 {
			t.Errorf("%d Hz: floor %.1f dBFS 2 s after the step to -35 dBFS", rate, last.Floor)
		}
		found := false
		for _, f := range fs[int(step+4*time.Second/frame):] {
			found = found || f.Start
		}
		if !found {
			t.Errorf("%d Hz: no Start for speech over the louder noise", rate)
		}
	}
}

func TestReset(t *testing.T) {
	for _, rate := range rates {
		d := New(Config{Rate: rate})
		pcm, _, _ := utterance(rate, time.Second, 20, 1)
		pcm = pcm[:samplesFor(rate, 1500*time.Millisecond)] // stop mid-utterance
		fs := run(d, rate, pcm)
		if !fs[len(fs)-1].Talking {
			t.Fatalf("%d Hz: not talking mid-utterance", rate)
		}
		d.Reset()
		fresh := New(Config{Rate: rate})
		tail := whiteNoise(rate, time.Second, 0.001, 8)
		a, b := run(d, rate, tail), run(fresh, rate, tail)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%d Hz frame %d after Reset: %+v, new detector: %+v", rate, i, a[i], b[i])
			}
		}
	}
}

func TestNoAllocs(t *testing.T) {
	for _, rate := range rates {
		d := New(Config{Rate: rate})
		pcm := speechLike(rate, 2*time.Second, 0.1, 1)
		n := frameLen(rate)
		i := 0
		allocs := testing.AllocsPerRun(500, func() {
			if i+n > len(pcm) {
				i = 0
			}
			d.Process(pcm[i : i+n])
			i += n
		})
		if allocs != 0 {
			t.Errorf("%d Hz: %v allocations per Process", rate, allocs)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	d := New(Config{Rate: 8000})
	if d.startAfter != 480 || d.hangover != 2400 || math.Abs(d.margin-7.5) > 1e-9 {
		t.Errorf("defaults: startAfter %d hangover %d margin %v", d.startAfter, d.hangover, d.margin)
	}
	defer func() {
		if recover() == nil {
			t.Error("New with Rate 0 did not panic")
		}
	}()
	New(Config{})
}

func FuzzProcess(f *testing.F) {
	f.Add([]byte{}, uint16(8000))
	f.Add([]byte{1}, uint16(16000))
	f.Add([]byte{0xff, 0x7f, 0x00, 0x80, 0xff, 0x7f}, uint16(8000))
	f.Fuzz(func(t *testing.T, data []byte, r uint16) {
		rate := 8000
		if r%2 == 1 {
			rate = 16000
		}
		d := New(Config{Rate: rate, Sensitivity: float64(r%11) / 10})
		pcm := make([]int16, len(data)/2)
		for i := range pcm {
			pcm[i] = int16(uint16(data[2*i]) | uint16(data[2*i+1])<<8)
		}
		// Split into frames of varying lengths, 0..640 samples.
		for round := 0; round < 3; round++ {
			rest := pcm
			k := int(r)%641 + round
			for {
				m := min(k%641, len(rest))
				fr := d.Process(rest[:m])
				if !finite(fr.Level) || !finite(fr.Floor) || fr.Length < 0 {
					t.Fatalf("frame of %d: %+v", m, fr)
				}
				rest = rest[m:]
				if len(rest) == 0 {
					break
				}
				k = k*7 + 3
			}
			d.Process(nil)
		}
	})
}

// BenchmarkProcess is one 20 ms frame at a G.711 line's 8 kHz (what the
// engine runs on a phone call) and at 16 kHz.
func BenchmarkProcess(b *testing.B) {
	for _, rate := range []int{8000, 16000} {
		b.Run(fmt.Sprintf("%dHz", rate), func(b *testing.B) {
			d := New(Config{Rate: rate})
			pcm := mix(speechLike(rate, 2*time.Second, 0.1, 1), whiteNoise(rate, 2*time.Second, 0.01, 1), 0)
			n := frameLen(rate)
			i := 0
			for b.Loop() {
				if i+n > len(pcm) {
					i = 0
				}
				d.Process(pcm[i : i+n])
				i += n
			}
		})
	}
}

// TestSilenceAndEndUtterance: inside an utterance Silence counts the
// non-speech since its latest speech frame, so a consumer can end the
// utterance sooner than the hangover; what follows is a new utterance.
func TestSilenceAndEndUtterance(t *testing.T) {
	for _, rate := range rates {
		noise := whiteNoise(rate, 6*time.Second, dbBelow(0.1, 25), 3)
		a := speechLike(rate, 800*time.Millisecond, 0.1, 1)
		b := speechLike(rate, 800*time.Millisecond, 0.1, 2)
		pcm := mix(mix(noise, a, samplesFor(rate, time.Second)), b, samplesFor(rate, 3*time.Second))
		d := New(Config{Rate: rate, Hangover: 1500 * time.Millisecond})
		n := frameLen(rate)
		var cut, starts int
		var lastSilence time.Duration
		for i := 0; i+n <= len(pcm); i += n {
			f := d.Process(pcm[i : i+n])
			if f.Start {
				starts++
			}
			switch {
			case !f.Talking && !f.End && f.Silence != 0:
				t.Fatalf("%d Hz: Silence %v outside an utterance", rate, f.Silence)
			case f.Speech && f.Talking && f.Silence != 0:
				t.Fatalf("%d Hz: Silence %v on a speech frame", rate, f.Silence)
			case f.Talking && !f.Speech:
				if f.Silence != lastSilence+frame {
					t.Fatalf("%d Hz: Silence went from %v to %v in one frame", rate, lastSilence, f.Silence)
				}
				if f.Silence >= 400*time.Millisecond && cut == 0 {
					cut = i
					if !d.EndUtterance() || d.EndUtterance() {
						t.Fatalf("%d Hz: EndUtterance did not end exactly one utterance", rate)
					}
					if g := d.Process(pcm[i+n : i+2*n]); g.Talking || g.Length != 0 || g.End {
						t.Fatalf("%d Hz: after EndUtterance the next frame is %+v", rate, g)
					}
					i += n
				}
			}
			lastSilence = f.Silence
		}
		// Cut 400 ms after the first burst ended (not 1.5 s), and the
		// second burst is an utterance of its own.
		if at := time.Duration(cut/n) * frame; at < 1800*time.Millisecond || at > 2300*time.Millisecond {
			t.Errorf("%d Hz: cut at %v, want about 1.8 s + 0.4 s", rate, at)
		}
		if starts != 2 {
			t.Errorf("%d Hz: %d utterances, want 2", rate, starts)
		}
	}
}

// speechThenSilence is 1 s of speech-like audio and then d of digital
// silence (G.711 0xFF decodes to exact zeros), as a caller who stops
// talking on a line that sends no comfort noise.
func speechThenSilence(rate int, d time.Duration) []int16 {
	return append(speechLike(rate, time.Second, 0.1, 1), make([]int16, samplesFor(rate, d))...)
}

// On digital silence after speech the high-pass's output (and so the
// memory behind it) must not decay into subnormal numbers, whose
// arithmetic costs up to thirty times more per frame, and must end at zero.
func TestNoSubnormalOnSilence(t *testing.T) {
	for _, rate := range rates {
		d := New(Config{Rate: rate})
		pcm := speechThenSilence(rate, 5*time.Second)
		n := frameLen(rate)
		for i := 0; i+n <= len(pcm); i += n {
			d.Process(pcm[i : i+n])
			for _, y := range d.hist {
				if y != 0 && math.Abs(y) < 0x1p-1022 {
					t.Fatalf("%d Hz, %v in: filtered sample %g is subnormal", rate, d.dur(int64(i+n)), y)
				}
			}
		}
		// Nor does it ring on just above the subnormals: the silence ends
		// as exact zeros.
		if d.hist != [lpcOrder]float64{} {
			t.Errorf("%d Hz: filtered samples after 5 s of silence %v, want zeros", rate, d.hist)
		}
	}
}

// BenchmarkProcessSilence is BenchmarkProcess's 20 ms frame on the digital
// silence that follows speech: it must cost no more than a frame of speech.
func BenchmarkProcessSilence(b *testing.B) {
	for _, rate := range []int{8000, 16000} {
		b.Run(fmt.Sprintf("%dHz", rate), func(b *testing.B) {
			d := New(Config{Rate: rate})
			run(d, rate, speechThenSilence(rate, 2*time.Second))
			silence := make([]int16, frameLen(rate))
			for b.Loop() {
				d.Process(silence)
			}
		})
	}
}
