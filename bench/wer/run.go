package wer

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// The models a row is measured with.
const (
	// Generic is the recognizer as configured.
	Generic = "generic"
	// Adapted is the recognizer adapted to the bench agent's domain
	// (stt.Adaptable), as a call to that agent would use it.
	Adapted = "adapted"
)

// Bench is the shape of one benchmark run.
type Bench struct {
	Recognizer stt.Recognizer
	Language   string     // asked of the recognizer (default en-US)
	Domain     stt.Domain // what Adapted adapts to (DentalDomain)
	// Models to measure: Generic and/or Adapted. Adapted needs a
	// recognizer that is stt.Adaptable; with one that is not it is left
	// out, and Run says so through Progress.
	Models []string
	Codecs []Codec
	Calls  int // utterances carried at once (Line.Calls)
	// Attempts is how many calls an utterance gets to arrive intact
	// (Line.Attempts).
	Attempts int
	Workers  int    // one-piece recognitions at once (default 1)
	Streams  int    // streamed recognitions at once (default 1)
	Out      string // where the trn files and sclite's reports go
	// KeepAudio writes what the line delivered of every utterance under
	// Out as WAV files (see keepAudio).
	KeepAudio bool
	// Progress receives a line per step (nil: discarded).
	Progress func(string)
}

// Row is one measured (or not yet measurable) combination of set, voice,
// line, model and mode.
type Row struct {
	Set, Voice string
	Codec      Codec
	Model      string
	Mode       Mode
	Utterances int
	Audio      time.Duration // the heard speech given to the recognizer
	Score      Score
	// CPUPerAudio is the CPU seconds recognition took (this process and
	// the recognizer's processes) per second of audio.
	CPUPerAudio        float64
	FinalP50, FinalP90 time.Duration // end of the utterance → its final text
	Failed             int           // utterances the recognizer failed on
	Failure            string        // the first failure, when any
	// Damaged and Retried are the line's (Carried.Damaged, .Retried).
	Damaged, Retried int
	// NotYet says why the row could not be measured ("" when it was).
	NotYet string
}

// Run carries each set over each codec's line once and has each model
// recognise what was heard in each mode it offers (one-piece always,
// streamed when the recognizer is an stt.Streamer), scoring each with
// sclite. A codec the user agent does not offer, or a set recorded below
// a line's rate, gives a NotYet row; anything else that fails fails the
// run.
func (b Bench) Run(ctx context.Context, sets []Set) ([]Row, error) {
	if err := ScliteAvailable(); err != nil {
		return nil, err
	}
	if b.Language == "" {
		b.Language = "en-US"
	}
	say := b.Progress
	if say == nil {
		say = func(string) {}
	}
	models, err := b.models(ctx, say)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, codec := range b.Codecs {
		unavailable := codec.Available()
		for _, s := range sets {
			s := s.ForRate(codec.Rate)
			if why := lineFits(s, codec, unavailable); why != "" {
				say(fmt.Sprintf("%s over %s: not yet: %s", s.Label(), codec.Label, why))
				rows = append(rows, Row{Set: s.Name, Voice: s.Voice, Codec: codec, Utterances: len(s.Utterances), NotYet: why})
				continue
			}
			c, err := Line{Codec: codec, Calls: b.Calls, Attempts: b.Attempts}.Carry(ctx, s)
			if err != nil {
				return nil, err
			}
			if b.KeepAudio {
				if err := keepAudio(b.Out, c); err != nil {
					return nil, err
				}
			}
			say(fmt.Sprintf("%s over %s: %d utterances, %.0f s of speech carried in %.1f s (%d calls placed again for a damaged utterance, %d still damaged)",
				s.Label(), codec.Label, len(c.Heard), c.Audio().Seconds(), c.Wall.Seconds(), c.Retried, c.Damaged))
			for _, m := range models {
				for _, mode := range modes(m.rec) {
					row, err := b.measure(ctx, c, m.name, m.rec, mode)
					if err != nil {
						return nil, err
					}
					say(fmt.Sprintf("%s over %s, %s %s: word accuracy %.1f%% (%d words), %.2f CPU-s per audio-s, final text p50 %v, %d failed",
						s.Label(), codec.Label, m.name, mode, row.Score.Accuracy(), row.Score.Words, row.CPUPerAudio, row.FinalP50.Round(time.Millisecond), row.Failed))
					if row.Failure != "" {
						say("  first failure: " + row.Failure)
					}
					rows = append(rows, row)
				}
			}
		}
	}
	return rows, nil
}

type model struct {
	name string
	rec  stt.Recognizer
}

// models builds the recognizers asked for, adapting once.
func (b Bench) models(ctx context.Context, say func(string)) ([]model, error) {
	var out []model
	for _, name := range b.Models {
		switch name {
		case Generic:
			out = append(out, model{Generic, b.Recognizer})
		case Adapted:
			a, ok := b.Recognizer.(stt.Adaptable)
			if !ok {
				say(fmt.Sprintf("adapted: left out: the recognizer (%T) is not stt.Adaptable", b.Recognizer))
				continue
			}
			start := time.Now()
			rec, err := a.Adapt(ctx, b.Domain)
			if err != nil {
				return nil, fmt.Errorf("adapt to %s: %w", b.Domain.Key, err)
			}
			say(fmt.Sprintf("adapted to %s (%d texts) in %v", b.Domain.Key, len(b.Domain.Texts), time.Since(start).Round(time.Millisecond)))
			out = append(out, model{Adapted, rec})
		default:
			return nil, fmt.Errorf("no model %q (%s, %s)", name, Generic, Adapted)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no model to measure among %q", b.Models)
	}
	return out, nil
}

// modes are the ways rec can be given speech.
func modes(rec stt.Recognizer) []Mode {
	if _, ok := rec.(stt.Streamer); ok {
		return []Mode{OnePiece, Streamed}
	}
	return []Mode{OnePiece}
}

// lineFits says why s cannot be measured over codec's line ("" when it
// can): the user agent does not offer the codec, or the set's recordings
// are narrower than the line (8 kHz prompts on a 16 kHz line would be
// upsampled phone audio, not wideband speech).
func lineFits(s Set, codec Codec, unavailable error) string {
	if unavailable != nil {
		return fmt.Sprintf("%s is not offered by Parley's SIP user agent (%v)", codec.Label, unavailable)
	}
	for _, u := range s.Utterances {
		if u.Clip.Rate < codec.Rate {
			why := fmt.Sprintf("the set is recorded at %d Hz, below %s's %d Hz", u.Clip.Rate, codec.Label, codec.Rate)
			if s.Wideband != "" {
				why += "; " + s.Wideband
			}
			return why
		}
	}
	return ""
}

// measure recognises c with rec in mode and scores it.
func (b Bench) measure(ctx context.Context, c Carried, name string, rec stt.Recognizer, mode Mode) (Row, error) {
	var (
		r   Recognition
		err error
	)
	if mode == Streamed {
		r, err = Stream(ctx, rec.(stt.Streamer), c, max(1, b.Streams), b.Language)
	} else {
		r, err = Transcribe(ctx, rec, c, max(1, b.Workers), b.Language)
	}
	if err != nil {
		return Row{}, err
	}
	ts := make([]Transcript, len(c.Heard))
	for i, u := range c.Set.Utterances {
		ts[i] = Transcript{ID: u.ID, Ref: u.Ref, Hyp: r.Texts[i]}
	}
	file := utteranceID(fmt.Sprintf("%s-%s-%s-%s-%s", c.Set.Name, c.Set.Voice, c.Codec.Name, name, mode))
	score, err := ScoreTranscripts(ctx, b.Out, file, c.Set.Speaker(), ts)
	if err != nil {
		return Row{}, err
	}
	row := Row{
		Set: c.Set.Name, Voice: c.Set.Voice, Codec: c.Codec, Model: name, Mode: mode,
		Utterances: len(c.Heard), Audio: c.Audio(), Score: score,
		FinalP50: percentile(r.Final, 50), FinalP90: percentile(r.Final, 90),
		Failed: r.Failed, Damaged: c.Damaged, Retried: c.Retried,
	}
	if r.FirstErr != nil {
		row.Failure = r.FirstErr.Error()
	}
	if a := c.Audio().Seconds(); a > 0 {
		row.CPUPerAudio = r.CPU.Seconds() / a
	}
	return row, nil
}
