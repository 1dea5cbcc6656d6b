package voicemail

import (
	"fmt"
	"math"
	"time"

	"github.com/parley-voice/parley/internal/pipeline/vad"
)

// Defaults for the zero values of Config; doc.go says why.
const (
	DefaultWindow        = 6 * time.Second
	DefaultLongGreeting  = 2500 * time.Millisecond
	DefaultAfterGreeting = 800 * time.Millisecond
	DefaultMaxWords      = 5
	DefaultGreetingPause = 2 * time.Second
	DefaultMinBeep       = 120 * time.Millisecond
	DefaultBeepPurity    = 0.9
	DefaultBeepLevel     = -55.0
	blockDuration        = 20 * time.Millisecond
	wordGap              = 100 * time.Millisecond // silence that ends a word
	minWord              = 100 * time.Millisecond // speech a word needs to count
)

// Config tunes a Detector; zero values take the documented defaults.
type Config struct {
	// Rate is the sample rate of the frames in Hz: 8000 or 16000 (any rate
	// from 8000 to 48000 works). Required.
	Rate int
	// Window is how long after answer the detector may decide from the
	// greeting (default 6 s); an undecided call is Human after it. A beep
	// still makes it Machine later.
	Window time.Duration
	// LongGreeting: a greeting whose speech spans longer is a machine's
	// (default 2.5 s).
	LongGreeting time.Duration
	// AfterGreeting: this much silence after a greeting no longer than
	// LongGreeting, of at most MaxWords words, makes a human (default 800
	// ms): a person says "Hello?" and waits for us.
	AfterGreeting time.Duration
	// MaxWords: a greeting of more words is a machine's (default 5). A word
	// is at least 100 ms of speech ended by 100 ms of silence.
	MaxWords int
	// GreetingPause: once the verdict is Machine, this much silence after
	// its speech with no beep sets GreetingDone (default 2 s).
	GreetingPause time.Duration
	// MinBeep is how long a steady pure tone must last to be a beep
	// (default 120 ms, so that any beep of 150 ms or more is heard whatever
	// its alignment to the frames).
	MinBeep time.Duration
	// BeepPurity is the share of a block's energy that must lie in one
	// tone's main lobe (default 0.9: a two-tone DTMF digit has at most
	// 0.86, even at 8 dB twist).
	BeepPurity float64
	// BeepLevel is the quietest beep heard, in dBFS RMS (default -55).
	BeepLevel float64
	// Phrases mark a machine when the transcript contains one (nil means
	// DefaultPhrases; an empty non-nil slice disables phrase matching).
	Phrases []string
	// Sensitivity is passed to the voice activity detector (0 means its
	// default, 0.5).
	Sensitivity float64
}

// Verdict is what the detector thinks answered.
type Verdict int

const (
	Undecided Verdict = iota // not yet: keep listening
	Human                    // a person answered: talk
	Machine                  // a machine answered: hang up, or wait for Beep/AfterBeep or GreetingDone and leave a message
)

func (v Verdict) String() string {
	switch v {
	case Human:
		return "human"
	case Machine:
		return "machine"
	}
	return "undecided"
}

// State is the detector's state after a frame.
type State struct {
	Verdict Verdict
	// Reason says why, for logs and metrics: "greeting 2.5s of speech",
	// "greeting of 6 words", "beep 1000 Hz", `phrase "leave a message"`,
	// "greeting 0.4s then 0.8s of silence", "no speech in 6s (dead air)",
	// "undecided after 6s". It is set with the verdict and kept.
	Reason string
	// Beep: a beep is sounding in this frame (the machine records after
	// it). It is reported from 120 ms (MinBeep) into the beep to its end.
	Beep bool
	// BeepHz is the frequency of the latest beep heard, 0 before any.
	BeepHz float64
	// AfterBeep: a beep has been heard and has ended; the machine is
	// recording, speak now. It stays set.
	AfterBeep bool
	// GreetingDone: the verdict is Machine, no beep has been heard, and the
	// greeting's speech was followed by GreetingPause of silence (some
	// machines have no beep); speak now. It stays set.
	GreetingDone bool
}

// Detector decides whether a call was answered by a person or a machine.
// It is for one call and is not safe for concurrent use.
type Detector struct {
	rate  int
	block int // samples in 20 ms
	buf   []int16
	fill  int

	window, longGreeting, afterGreeting, greetingPause int64 // samples
	maxWords                                           int
	wordGap, minWord                                   int64

	vad     *vad.Detector
	beep    beepTracker
	phrases *phraseMatcher

	now int64 // samples heard

	// The greeting: the far end's speech from its first utterance on.
	spoke       bool
	greetStart  int64 // sample index of its first speech
	lastSpeech  int64 // sample index just after its latest speech frame
	talking     bool
	words       int   // words finished
	wordSpeech  int64 // speech in the word under way
	wordSilence int64 // silence since it

	state State
}

// New returns a detector for c. It panics if c.Rate is outside 8000..48000.
func New(c Config) *Detector {
	if c.Rate < 8000 || c.Rate > 48000 {
		panic("voicemail: Config.Rate must be 8000 or 16000 (8000..48000 accepted)")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Window, DefaultWindow)
	def(&c.LongGreeting, DefaultLongGreeting)
	def(&c.AfterGreeting, DefaultAfterGreeting)
	def(&c.GreetingPause, DefaultGreetingPause)
	def(&c.MinBeep, DefaultMinBeep)
	if c.MaxWords <= 0 {
		c.MaxWords = DefaultMaxWords
	}
	if c.BeepPurity <= 0 || c.BeepPurity > 1 || math.IsNaN(c.BeepPurity) {
		c.BeepPurity = DefaultBeepPurity
	}
	if c.BeepLevel == 0 || math.IsNaN(c.BeepLevel) {
		c.BeepLevel = DefaultBeepLevel
	}
	if c.Phrases == nil {
		c.Phrases = DefaultPhrases
	}
	block := c.Rate / 50
	s := func(t time.Duration) int64 { return int64(t) * int64(c.Rate) / int64(time.Second) }
	d := &Detector{
		rate:          c.Rate,
		block:         block,
		buf:           make([]int16, block),
		window:        s(c.Window),
		longGreeting:  s(c.LongGreeting),
		afterGreeting: s(c.AfterGreeting),
		greetingPause: s(c.GreetingPause),
		maxWords:      c.MaxWords,
		wordGap:       s(wordGap),
		minWord:       s(minWord),
		vad:           vad.New(vad.Config{Rate: c.Rate, Sensitivity: c.Sensitivity}),
		beep: beepTracker{
			meter:     newToneMeter(c.Rate, block),
			minPurity: c.BeepPurity,
			minLevel:  c.BeepLevel,
			minBlocks: max(1, int((c.MinBeep+blockDuration-1)/blockDuration)),
		},
		phrases: newPhraseMatcher(c.Phrases),
	}
	return d
}

// Frame takes the next frame of the far end's audio, 20 ms (Rate/50
// samples), and returns the state after it. Other lengths work: audio is
// analysed in 20 ms blocks as they fill, and the state is that after the
// last complete block. It does not allocate, except to format a Reason once
// when the verdict changes.
func (d *Detector) Frame(pcm []int16) State {
	for len(pcm) > 0 {
		if d.fill == 0 && len(pcm) >= d.block {
			d.analyse(pcm[:d.block])
			pcm = pcm[d.block:]
			continue
		}
		n := copy(d.buf[d.fill:], pcm)
		d.fill += n
		pcm = pcm[n:]
		if d.fill == d.block {
			d.analyse(d.buf)
			d.fill = 0
		}
	}
	return d.state
}

// State returns the state now, for instance after Transcript.
func (d *Detector) State() State { return d.state }

// Transcript adds text recognised from the far end's speech (pieces in
// order; a phrase may straddle two). While undecided, a phrase from
// Config.Phrases makes the verdict Machine.
func (d *Detector) Transcript(text string) {
	p := d.phrases.add(text)
	if p != "" && d.state.Verdict == Undecided {
		d.decide(Machine, fmt.Sprintf("phrase %q", p))
	}
}

func (d *Detector) decide(v Verdict, reason string) {
	d.state.Verdict, d.state.Reason = v, reason
}

func (d *Detector) seconds(samples int64) float64 {
	return float64(samples) / float64(d.rate)
}

// analyse takes one 20 ms block.
func (d *Detector) analyse(pcm []int16) {
	v := d.vad.Process(pcm)
	on, ended := d.beep.block(pcm)
	d.now += int64(len(pcm))
	d.follow(v, int64(len(pcm)))

	st := &d.state
	st.Beep = on
	if on {
		st.BeepHz = math.Round(d.beep.hz())
		if d.beep.run == d.beep.minBlocks && st.Verdict != Machine {
			// To 10 Hz: enough for a log, and few values for a metric label.
			d.decide(Machine, fmt.Sprintf("beep %.0f Hz", math.Round(st.BeepHz/10)*10))
		}
	}
	if ended {
		st.AfterBeep = true
	}

	switch st.Verdict {
	case Undecided:
		d.judge()
	case Machine:
		if !st.GreetingDone && d.beep.heard == 0 && d.beep.run == 0 && d.spoke && !d.talking &&
			d.now-d.lastSpeech >= d.greetingPause {
			st.GreetingDone = true
		}
	}
}

// follow updates the greeting from the VAD's verdict on the block.
func (d *Detector) follow(v vad.Frame, n int64) {
	if v.Start {
		run := int64(v.Length) * int64(d.rate) / int64(time.Second)
		if !d.spoke {
			d.spoke = true
			d.greetStart = d.now - run
			d.wordSpeech = run - n // the run's speech before this block
		}
	}
	d.talking = v.Talking
	if v.Talking && v.Speech {
		d.lastSpeech = d.now
	}
	if !d.spoke {
		return
	}
	if v.Speech {
		d.wordSpeech += n
		d.wordSilence = 0
		return
	}
	d.wordSilence += n
	if d.wordSilence >= d.wordGap {
		if d.wordSpeech >= d.minWord {
			d.words++
		}
		d.wordSpeech = 0
	}
}

// judge applies the greeting rules while the verdict is open.
func (d *Detector) judge() {
	words := d.words
	if d.wordSpeech >= d.minWord {
		words++
	}
	span := d.lastSpeech - d.greetStart
	switch {
	case d.spoke && span > d.longGreeting:
		d.decide(Machine, fmt.Sprintf("greeting %.1fs of speech", d.seconds(span)))
	case d.spoke && words > d.maxWords:
		d.decide(Machine, fmt.Sprintf("greeting of %d words", words))
	case d.spoke && !d.talking && d.now-d.lastSpeech >= d.afterGreeting:
		d.decide(Human, fmt.Sprintf("greeting %.1fs then %.1fs of silence", d.seconds(span), d.seconds(d.now-d.lastSpeech)))
	case d.now >= d.window && !d.spoke:
		d.decide(Human, fmt.Sprintf("no speech in %.0fs (dead air)", d.seconds(d.window)))
	case d.now >= d.window:
		d.decide(Human, fmt.Sprintf("undecided after %.0fs", d.seconds(d.window)))
	}
}
