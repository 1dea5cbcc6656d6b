package voicemail

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

const (
	machineGreeting = "Hi, you have reached Ada Lovelace. I can't take your call right now. Please leave a message after the tone."
	lead            = 500 * time.Millisecond // silence between answer and the first words
	lineNoise       = -65.0                  // dBFS of the background under the tests' calls
)

// call is what the far end sends: parts in order, under low line noise,
// and at 8 kHz through G.711 μ-law as on the phone network.
func call(rate int, parts ...[]int16) []int16 {
	pcm := concat(parts...)
	pcm = mix(pcm, noise(rate, dur(rate, pcm), lineNoise, 1), 0, 1)
	if rate == 8000 {
		pcm = audio.DecodeULaw(nil, audio.EncodeULaw(nil, pcm))
	}
	return pcm
}

// speechEnd is the time the last loud sample of pcm ends (espeak-ng pads
// its audio with a little silence).
func speechEnd(pcm []int16, rate int) time.Duration {
	last := 0
	for i, v := range pcm {
		if v > 500 || v < -500 {
			last = i
		}
	}
	return time.Duration(last+1) * time.Second / time.Duration(rate)
}

func dur(rate int, pcm []int16) time.Duration {
	return time.Duration(len(pcm)) * time.Second / time.Duration(rate)
}

// A machine's greeting is long: Machine long before it ends, and the beep
// after it is reported on its frames, then AfterBeep.
func TestMachineWithBeep(t *testing.T) {
	for _, rate := range rates {
		greeting := speak(t, machineGreeting, rate)
		beepAt := lead + dur(rate, greeting) + 300*time.Millisecond
		beepEnd := beepAt + 500*time.Millisecond
		pcm := call(rate, audio.Silence(rate, lead), greeting, audio.Silence(rate, 300*time.Millisecond),
			audio.Tone(1000, rate, 500*time.Millisecond, 0.3), audio.Silence(rate, time.Second))
		states := feed(New(Config{Rate: rate}), rate, pcm)
		i, s := decided(states)
		if s.Verdict != Machine || !strings.HasPrefix(s.Reason, "greeting ") {
			t.Fatalf("%d Hz: verdict %v (%s), want Machine on the greeting's length", rate, s.Verdict, s.Reason)
		}
		if at(i) > lead+3*time.Second {
			t.Errorf("%d Hz: Machine at %v, want within 3 s of the greeting's start (%v)", rate, at(i), lead)
		}
		t.Logf("%d Hz: Machine at %v (%s); greeting %v..%v, beep %v..%v", rate, at(i), s.Reason, lead, lead+speechEnd(greeting, rate), beepAt, beepEnd)
		for i, s := range states {
			end := at(i)
			// The frame the beep ends in may go either way.
			edge := end > beepEnd && end <= beepEnd+20*time.Millisecond
			switch {
			case s.Verdict != Machine && end > lead+3*time.Second:
				t.Fatalf("%d Hz: %v at %v", rate, s.Verdict, end)
			case s.Beep && end <= beepAt:
				t.Errorf("%d Hz: Beep at %v, before the beep", rate, end)
			case !s.Beep && end > beepAt+140*time.Millisecond && end <= beepEnd:
				t.Errorf("%d Hz: no Beep at %v, 140 ms or more into the beep", rate, end)
			case s.Beep && end > beepEnd && !edge:
				t.Errorf("%d Hz: Beep at %v, after the beep", rate, end)
			case s.AfterBeep != (end > beepEnd) && !edge:
				t.Errorf("%d Hz: AfterBeep %v at %v (beep ends %v)", rate, s.AfterBeep, end, beepEnd)
			case s.GreetingDone:
				t.Errorf("%d Hz: GreetingDone at %v, with a beep", rate, end)
			}
		}
		if last := states[len(states)-1]; math.Abs(last.BeepHz-1000) > 5 || last.Reason != s.Reason {
			t.Errorf("%d Hz: at the end BeepHz %v (want 1000), Reason %q (want %q kept)", rate, last.BeepHz, last.Reason, s.Reason)
		}
	}
}

// The transcript's "you have reached" decides before the greeting's length
// can: at once, within the greeting's first two seconds.
func TestMachinePhrase(t *testing.T) {
	for _, rate := range rates {
		greeting := speak(t, machineGreeting, rate)
		pcm := call(rate, audio.Silence(rate, lead), greeting)
		heard := lead + 1800*time.Millisecond // "Hi, you have reached Ada Lovelace" has been said
		d, control := New(Config{Rate: rate}), New(Config{Rate: rate})
		n := rate / 50
		for i := 0; i+n <= len(pcm); i += n {
			s, c := d.Frame(pcm[i:i+n]), control.Frame(pcm[i:i+n])
			if at(i/n) < heard {
				continue
			}
			if c.Verdict != Undecided {
				t.Fatalf("%d Hz: without the transcript the verdict is already %v (%s) at %v: the test proves nothing", rate, c.Verdict, c.Reason, at(i/n))
			}
			d.Transcript("Hi, you have reached")
			s = d.State()
			if s.Verdict != Machine || s.Reason != `phrase "you have reached"` {
				t.Fatalf("%d Hz: after the phrase %v (%s), want Machine on the phrase", rate, s.Verdict, s.Reason)
			}
			break
		}
	}
}

// A machine without a beep: GreetingDone once its speech has ended and
// GreetingPause (2 s) has passed in silence.
func TestMachineWithoutBeep(t *testing.T) {
	for _, rate := range rates {
		greeting := speak(t, machineGreeting, rate)
		pcm := call(rate, audio.Silence(rate, lead), greeting, audio.Silence(rate, 4*time.Second))
		end := lead + speechEnd(greeting, rate)
		states := feed(New(Config{Rate: rate}), rate, pcm)
		done := -1
		for i, s := range states {
			if s.Beep || s.AfterBeep {
				t.Fatalf("%d Hz: beep at %v", rate, at(i))
			}
			if s.GreetingDone && done < 0 {
				done = i
				if s.Verdict != Machine {
					t.Fatalf("%d Hz: GreetingDone with verdict %v", rate, s.Verdict)
				}
			}
			if done >= 0 && !s.GreetingDone {
				t.Fatalf("%d Hz: GreetingDone cleared at %v", rate, at(i))
			}
		}
		if done < 0 {
			t.Fatalf("%d Hz: no GreetingDone; speech ends at %v, audio at %v", rate, end, dur(rate, pcm))
		}
		if wait := at(done) - end; wait < DefaultGreetingPause-100*time.Millisecond || wait > DefaultGreetingPause+300*time.Millisecond {
			t.Errorf("%d Hz: GreetingDone %v after the speech ended, want about %v", rate, wait, DefaultGreetingPause)
		}
	}
}

// A person says a short greeting and waits: Human AfterGreeting (800 ms)
// after the words, and never a beep.
func TestHuman(t *testing.T) {
	for _, text := range []string{"Hello?", "Hello, this is Ada speaking."} {
		for _, rate := range rates {
			greeting := speak(t, text, rate)
			end := lead + speechEnd(greeting, rate)
			states := feed(New(Config{Rate: rate}), rate, call(rate, audio.Silence(rate, lead), greeting, audio.Silence(rate, 3*time.Second)))
			i, s := decided(states)
			if s.Verdict != Human || !strings.Contains(s.Reason, "silence") {
				t.Fatalf("%q %d Hz: %v (%s), want Human after silence", text, rate, s.Verdict, s.Reason)
			}
			if wait := at(i) - end; wait < DefaultAfterGreeting || wait > DefaultAfterGreeting+400*time.Millisecond {
				t.Errorf("%q %d Hz: Human %v after the words, want %v or a little more", text, rate, wait, DefaultAfterGreeting)
			}
			for j, s := range states[i:] {
				if s.Verdict != Human || s.Beep || s.GreetingDone {
					t.Fatalf("%q %d Hz: at %v %+v", text, rate, at(i+j), s)
				}
			}
			t.Logf("%q %d Hz: Human at %v (%s)", text, rate, at(i), s.Reason)
		}
	}
}

// Dead air (no speech at all) stays Undecided for the Window, then is
// Human: a person who answers and waits for us to speak first.
func TestDeadAir(t *testing.T) {
	for _, rate := range rates {
		for _, window := range []time.Duration{0, 3 * time.Second} {
			want := window
			if want == 0 {
				want = DefaultWindow
			}
			states := feed(New(Config{Rate: rate, Window: window}), rate, call(rate, audio.Silence(rate, want+time.Second)))
			i, s := decided(states)
			if s.Verdict != Human || at(i) != want || !strings.Contains(s.Reason, "dead air") {
				t.Errorf("%d Hz window %v: %v at %v (%s), want Human at %v on dead air", rate, window, s.Verdict, at(i), s.Reason, want)
			}
		}
	}
}

// Speech that begins too late to be judged leaves the verdict to the
// Window: Human.
func TestUndecidedAtWindow(t *testing.T) {
	rate := 16000
	pcm := call(rate, audio.Silence(rate, DefaultWindow-time.Second), speak(t, machineGreeting, rate))
	i, s := decided(feed(New(Config{Rate: rate}), rate, pcm))
	if s.Verdict != Human || at(i) != DefaultWindow || !strings.HasPrefix(s.Reason, "undecided") {
		t.Errorf("%v at %v (%s), want Human at %v, undecided", s.Verdict, at(i), s.Reason, DefaultWindow)
	}
}

// A greeting of many short words is a machine's even before it is long
// (the length rule is switched off here to see the word rule alone).
func TestManyWords(t *testing.T) {
	for _, rate := range rates {
		pcm := call(rate, audio.Silence(rate, lead), speak(t, "Hi! Yes? Ada. Here. Now. Bye.", rate), audio.Silence(rate, time.Second))
		_, s := decided(feed(New(Config{Rate: rate, LongGreeting: time.Hour}), rate, pcm))
		if s.Verdict != Machine || s.Reason != "greeting of 6 words" {
			t.Errorf("%d Hz: %v (%s), want Machine on 6 words", rate, s.Verdict, s.Reason)
		}
	}
}

// A beep turns even a Human verdict into Machine: a machine with a short
// greeting and a slow beep.
func TestBeepAfterHuman(t *testing.T) {
	for _, rate := range rates {
		pcm := call(rate, audio.Silence(rate, lead), speak(t, "Hello?", rate), audio.Silence(rate, 1500*time.Millisecond),
			audio.Tone(1400, rate, 400*time.Millisecond, 0.2), audio.Silence(rate, 500*time.Millisecond))
		states := feed(New(Config{Rate: rate}), rate, pcm)
		_, first := decided(states)
		last := states[len(states)-1]
		if first.Verdict != Human || last.Verdict != Machine || last.Reason != "beep 1400 Hz" || !last.AfterBeep {
			t.Errorf("%d Hz: first %v (%s), then %+v; want Human, then Machine on the beep", rate, first.Verdict, first.Reason, last)
		}
	}
}

// Frames of any length give the same states as 20 ms frames.
func TestOddFrameSizes(t *testing.T) {
	rate := 8000
	pcm := call(rate, audio.Silence(rate, lead), speak(t, "Hello?", rate), audio.Silence(rate, time.Second),
		audio.Tone(850, rate, 300*time.Millisecond, 0.1), audio.Silence(rate, 200*time.Millisecond))
	want := New(Config{Rate: rate})
	feed(want, rate, pcm)
	d := New(Config{Rate: rate})
	for i, n := 0, 0; i < len(pcm); i += n {
		n = min(1+i%457, len(pcm)-i)
		d.Frame(pcm[i : i+n])
	}
	d.Frame(nil)
	if d.State() != want.State() {
		t.Errorf("odd sizes: %+v, 20 ms frames: %+v", d.State(), want.State())
	}
}

func TestBadRate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New accepted Rate 0")
		}
	}()
	New(Config{})
}
