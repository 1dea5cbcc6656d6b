package voicemail

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

// beeps returns the frames on which d reported a beep, and the last state.
func beeps(rate int, pcm []int16) (frames []int, last State) {
	for i, s := range feed(New(Config{Rate: rate}), rate, pcm) {
		if s.Beep {
			frames = append(frames, i)
		}
		last = s
	}
	return frames, last
}

// Beeps at the usual frequencies and across the band, loud and quiet, with
// and without noise, are heard as Machine with their frequency.
func TestBeeps(t *testing.T) {
	for _, rate := range rates {
		for _, hz := range []float64{450, 850, 1000, 1400, 2000, 2500} {
			for _, c := range []struct {
				level, noise float64 // dBFS RMS
			}{{-10, -100}, {-30, lineNoise}, {-50, -70}, {-20, -35}} {
				name := fmt.Sprintf("%d Hz rate, %v Hz at %v dBFS, noise %v dBFS", rate, hz, c.level, c.noise)
				beep := audio.Tone(hz, rate, 300*time.Millisecond, amp(c.level))
				pcm := concat(audio.Silence(rate, 210*time.Millisecond), beep, audio.Silence(rate, 200*time.Millisecond))
				pcm = mix(pcm, noise(rate, dur(rate, pcm), c.noise, 2), 0, 1)
				frames, last := beeps(rate, pcm)
				if len(frames) < 7 || last.Verdict != Machine || last.Reason != fmt.Sprintf("beep %.0f Hz", hz) ||
					math.Abs(last.BeepHz-hz) > 5 || !last.AfterBeep {
					t.Errorf("%s: %d beep frames, %+v", name, len(frames), last)
				}
			}
		}
	}
}

// A beep under mains hum 15 dB louder is heard.
func TestBeepOverHum(t *testing.T) {
	for _, rate := range rates {
		for _, hum := range []float64{50, 60} {
			pcm := mix(audio.Tone(1000, rate, 500*time.Millisecond, 0.05), audio.Tone(hum, rate, 500*time.Millisecond, 0.3), 0, 1)
			if frames, last := beeps(rate, pcm); len(frames) < 15 || last.BeepHz != 1000 {
				t.Errorf("%d Hz, %v Hz hum: %d beep frames, %+v", rate, hum, len(frames), last)
			}
		}
	}
}

// A beep of 150 ms is heard however it falls on the frames; one of 100 ms
// (under MinBeep) is not.
func TestBeepLength(t *testing.T) {
	for _, rate := range rates {
		for off := time.Duration(0); off < 20*time.Millisecond; off += 2 * time.Millisecond {
			for _, c := range []struct {
				d    time.Duration
				want bool
			}{{150 * time.Millisecond, true}, {100 * time.Millisecond, false}} {
				pcm := concat(audio.Silence(rate, 100*time.Millisecond+off), audio.Tone(1000, rate, c.d, 0.2), audio.Silence(rate, 100*time.Millisecond))
				if frames, _ := beeps(rate, pcm); (len(frames) > 0) != c.want {
					t.Errorf("%d Hz, %v beep at offset %v: beep frames %v, want heard %v", rate, c.d, off, frames, c.want)
				}
			}
		}
	}
}

// Nothing that is not one steady tone is a beep: speech, DTMF digits (two
// tones, even with 8 dB between them), ringback and busy tones and other
// close pairs (beating), a glide, noise and silence.
func TestNotBeeps(t *testing.T) {
	for _, rate := range rates {
		d := 500 * time.Millisecond
		sigs := map[string][]int16{
			"silence":             audio.Silence(rate, d),
			"white noise -20dB":   noise(rate, time.Second, -20, 3),
			"white noise -50dB":   noise(rate, time.Second, -50, 4),
			"ringback 440+480":    twoTone(440, 480, rate, 2*time.Second, 0.2, 0.2),
			"UK ringback 400+450": twoTone(400, 450, rate, 2*time.Second, 0.2, 0.2),
			"busy 480+620":        twoTone(480, 620, rate, d, 0.2, 0.2),
			// One tone 6 dB under the other is inside its main lobe: the
			// pair looks pure, but beats.
			"400+450, 6 dB apart": twoTone(400, 450, rate, time.Second, 0.2, 0.1),
			"1000+1025":           twoTone(1000, 1025, rate, time.Second, 0.2, 0.2),
			"glide 800-1600 Hz":   glide(800, 1600, rate, time.Second, 0.3),
			"1000 Hz at -65 dBFS": audio.Tone(1000, rate, time.Second, amp(-65)),
		}
		for _, voice := range []string{"en-us", "en-us+f3", "en-gb+f4", "en-us+m7"} {
			sigs["speech, voice "+voice] = speakAs(t, voice, "Good morning and thank you for calling. All of our agents are busy right now. "+
				"Ooooh, I see. Mmmm. Weeeell, sing la la laaaa, nine, nine, nine, one, one, two.", rate)
		}
		rows := []float64{697, 770, 852, 941}
		cols := []float64{1209, 1336, 1477, 1633}
		for _, r := range rows {
			for _, c := range cols {
				sigs[fmt.Sprintf("DTMF %v+%v", r, c)] = twoTone(r, c, rate, d, 0.2, 0.2)
				sigs[fmt.Sprintf("DTMF %v+%v, low 8 dB louder", r, c)] = twoTone(r, c, rate, d, 0.25, 0.1)
				sigs[fmt.Sprintf("DTMF %v+%v, high 4 dB louder", r, c)] = twoTone(r, c, rate, d, 0.1, 0.16)
			}
		}
		for name, s := range sigs {
			if frames, last := beeps(rate, s); len(frames) > 0 || last.BeepHz != 0 {
				t.Errorf("%d Hz %s: beep on frames %v (%v Hz)", rate, name, frames, last.BeepHz)
			}
		}
	}
}

// glide is a sine sweeping from f0 to f1 Hz over d.
func glide(f0, f1 float64, rate int, d time.Duration, amp float64) []int16 {
	out := make([]int16, samplesOf(rate, d))
	phase := 0.0
	for i := range out {
		phase += 2 * math.Pi * (f0 + (f1-f0)*float64(i)/float64(len(out))) / float64(rate)
		out[i] = int16(math.Round(amp * math.MaxInt16 * math.Sin(phase)))
	}
	return out
}

// measureLast runs a fresh meter over pcm's 20 ms blocks (the first lets the
// high-pass settle) and returns its reading of the last.
func measureLast(rate int, pcm []int16) reading {
	m, n := newToneMeter(rate, rate/50), rate/50
	var r reading
	for i := 0; i+n <= len(pcm); i += n {
		r = m.measure(pcm[i : i+n])
	}
	return r
}

// The meter's own numbers: a tone is nearly all in its lobe, placed within
// a few Hz and flat; two tones, beating tones and noise are not.
func TestToneMeter(t *testing.T) {
	const d = 40 * time.Millisecond
	for _, rate := range rates {
		for hz := 400.0; hz <= 2600; hz += 37 {
			r := measureLast(rate, audio.Tone(hz, rate, d, 0.5))
			if r.purity < 0.99 || math.Abs(r.hz-hz) > 3 || r.swing > 0.8 || math.Abs(r.level-(-9.03)) > 0.2 {
				t.Errorf("%d Hz: tone %v Hz: %+v", rate, hz, r)
			}
		}
		// Mains hum as loud as the tone changes nothing.
		hum := mix(audio.Tone(1000, rate, d, 0.1), audio.Tone(60, rate, d, 0.1), 0, 1)
		if r := measureLast(rate, hum); r.purity < 0.99 || r.swing > 0.3 {
			t.Errorf("%d Hz: tone with hum: %+v", rate, r)
		}
		if r := measureLast(rate, twoTone(697, 1209, rate, d, 0.3, 0.3)); math.Abs(r.purity-0.5) > 0.05 {
			t.Errorf("%d Hz: DTMF purity %v, want 0.5", rate, r.purity)
		}
		if r := measureLast(rate, twoTone(440, 480, rate, d, 0.3, 0.3)); r.swing < 3 {
			t.Errorf("%d Hz: ringback swing %v dB, want it beating", rate, r.swing)
		}
		if r := measureLast(rate, noise(rate, d, -20, 5)); r.purity > 0.3 {
			t.Errorf("%d Hz: noise purity %v", rate, r.purity)
		}
		if r := measureLast(rate, audio.Silence(rate, d)); r.level != minLevelDBF || r.purity != 0 {
			t.Errorf("%d Hz: silence %+v", rate, r)
		}
	}
}

// speechThenSilence is 1 s of noise at -30 dBFS with a tone, then 5 s of
// digital silence (G.711 0xFF decodes to exact zeros).
func speechThenSilence(rate int) []int16 {
	loud := mix(noise(rate, time.Second, -30, 3), audio.Tone(700, rate, time.Second, 0.3), 0, 1)
	return append(loud, make([]int16, 5*rate)...)
}

// The meter's high-pass must not decay into subnormal numbers on digital
// silence after sound (each costs up to thirty times a normal one), and
// must end at exact zeros.
func TestToneMeterNoSubnormalOnSilence(t *testing.T) {
	for _, rate := range rates {
		block := rate / 50
		m := newToneMeter(rate, block)
		pcm := speechThenSilence(rate)
		for i := 0; i+block <= len(pcm); i += block {
			m.measure(pcm[i : i+block])
			for _, x := range m.x {
				if x != 0 && math.Abs(x) < 0x1p-1022 {
					t.Fatalf("%d Hz, block at %d: filtered sample %g is subnormal", rate, i, x)
				}
			}
		}
		// Exact zeros at the end, so a silent block skips the spectrum.
		for _, x := range m.x {
			if x != 0 {
				t.Fatalf("%d Hz: filtered sample %g after 5 s of silence, want 0", rate, x)
			}
		}
	}
}
