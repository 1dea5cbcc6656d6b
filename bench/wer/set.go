package wer

import (
	"fmt"
	"strings"
	"time"
)

// Clip is mono 16-bit PCM at Rate Hz.
type Clip struct {
	PCM  []int16
	Rate int
}

// Duration is how long the clip lasts.
func (c Clip) Duration() time.Duration {
	if c.Rate <= 0 {
		return 0
	}
	return time.Duration(len(c.PCM)) * time.Second / time.Duration(c.Rate)
}

// MaxUtterance is the longest utterance a set keeps: longer than any turn
// a caller takes (the VAD ends a turn at a pause), and engines refuse more
// (stt/sphinx's MaxAudio).
const MaxUtterance = 60 * time.Second

// Utterance is one labelled piece of speech.
type Utterance struct {
	ID   string // unique in its set; letters, digits and '-' (see [utteranceID])
	Text string // the reference as written
	Ref  string // Normalise(Text): the words sclite compares
	Clip Clip   // the speech as recorded or synthesized, at its own rate
	// Wide is the same speech recorded at a wider band than Clip, when
	// there is such a recording (zero otherwise): a wideband line plays it.
	Wide Clip
}

// Set is the utterances of one labelled set spoken by one voice.
type Set struct {
	Name     string // asterisk, dental, everyday
	Voice    string // allison (the human recordings), flite-slt, festival-kal, espeak-ng, ...
	InDomain bool   // the sentences are drawn from the bench agent's domain
	// Note says what was left out and why ("12 prompts of non-speech
	// only"), for the report.
	Note string
	// Wideband says where recordings of the set at a wider band than its
	// clips are, when they exist elsewhere ("" when they do not).
	Wideband   string
	Utterances []Utterance
}

// ForRate is the set as a line at rate Hz plays it: an utterance recorded
// below rate takes its wideband recording (Wide) when it has one.
func (s Set) ForRate(rate int) Set {
	us := make([]Utterance, len(s.Utterances))
	for i, u := range s.Utterances {
		if u.Clip.Rate < rate && u.Wide.Rate >= rate {
			u.Clip = u.Wide
		}
		us[i] = u
	}
	s.Utterances = us
	return s
}

// Speaker is the set's speaker name in sclite's utterance ids: the voice's
// letters and digits (sclite's spu_id ends the speaker at '-' or '_').
func (s Set) Speaker() string { return strings.ReplaceAll(utteranceID(s.Voice), "-", "") }

// Label names the set and voice in reports: "dental / flite-slt".
func (s Set) Label() string { return s.Name + " / " + s.Voice }

// Audio is how long the set's speech lasts, as recorded.
func (s Set) Audio() time.Duration {
	var d time.Duration
	for _, u := range s.Utterances {
		d += u.Clip.Duration()
	}
	return d
}

// Words is the number of reference words.
func (s Set) Words() int {
	n := 0
	for _, u := range s.Utterances {
		n += len(strings.Fields(u.Ref))
	}
	return n
}

// Subset keeps at most n utterances, evenly spread over the set in its
// order (indices ⌊i·len/n⌋), so a shorter run still samples every part of
// it, and the same n always picks the same utterances. n <= 0 keeps all.
func (s Set) Subset(n int) Set {
	if n <= 0 || n >= len(s.Utterances) {
		return s
	}
	out := s
	out.Utterances = make([]Utterance, 0, n)
	for i := range n {
		out.Utterances = append(out.Utterances, s.Utterances[i*len(s.Utterances)/n])
	}
	note := fmt.Sprintf("%d of %d utterances, evenly spread", n, len(s.Utterances))
	if out.Note != "" {
		note = out.Note + "; " + note
	}
	out.Note = note
	return out
}

// utteranceID makes name safe as (part of) an sclite utterance id: lower
// case letters, digits and '-'; anything else becomes '-'. sclite's
// spu_id ids are speaker_utterance, so '_' may not appear in either part.
func utteranceID(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// checkIDs fails when two utterances of s share an id.
func checkIDs(s Set) error {
	seen := make(map[string]bool, len(s.Utterances))
	for _, u := range s.Utterances {
		if seen[u.ID] {
			return fmt.Errorf("set %s: utterance id %q twice", s.Label(), u.ID)
		}
		seen[u.ID] = true
	}
	return nil
}
