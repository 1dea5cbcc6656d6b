package voicemail

import (
	"testing"
	"time"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"":                        " ",
		"  ...  ":                 " ",
		"Hi, you've reached ADA!": " hi youve reached ada ",
		"I can’t take your call":  " i cant take your call ",
		"voice-mail\tbox\n":       " voice mail box ",
		"Élodie's número 42":      " élodies número 42 ",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPhrases(t *testing.T) {
	for _, c := range []struct {
		pieces []string
		want   string // the phrase found, "" for none
	}{
		{[]string{"Please leave a message after the tone."}, "leave a message"},
		{[]string{"PLEASE LEAVE A MESSAGE"}, "leave a message"},
		{[]string{"I can't take your call"}, "can't take your call"},
		{[]string{"I cant take your call"}, "can't take your call"},
		{[]string{"You've reached the voicemail of Ada"}, "voicemail"},
		{[]string{"Please leave a", "message after the tone"}, "leave a message"}, // straddles two pieces
		{[]string{"Please leave", "", "a message"}, "leave a message"},
		{[]string{"Hello?", "Who is this?"}, ""},
		{[]string{"She's not here, can I take a message?"}, ""},
		{[]string{"mailboxes"}, ""}, // whole words only
		{[]string{"Is it available?"}, ""},
	} {
		m := newPhraseMatcher(DefaultPhrases)
		got := ""
		for _, p := range c.pieces {
			if f := m.add(p); f != "" && got == "" {
				got = f
			}
		}
		if got != c.want {
			t.Errorf("%q: found %q, want %q", c.pieces, got, c.want)
		}
	}
}

// A long transcript keeps only its last words for the next piece.
func TestPhraseTail(t *testing.T) {
	m := newPhraseMatcher(DefaultPhrases)
	m.add("one two three four five six seven eight nine ten eleven twelve")
	if m.tail != " five six seven eight nine ten eleven twelve " {
		t.Errorf("tail %q", m.tail)
	}
	if f := m.add("leave a"); f != "" {
		t.Errorf("found %q", f)
	}
	if f := m.add("message"); f != "leave a message" {
		t.Errorf("found %q", f)
	}
}

// Config.Phrases replaces the defaults; an empty list disables matching;
// a phrase once the verdict is Human changes nothing.
func TestTranscriptConfig(t *testing.T) {
	d := New(Config{Rate: 8000, Phrases: []string{"Bitte sprechen Sie"}})
	d.Transcript("leave a message")
	if s := d.State(); s.Verdict != Undecided {
		t.Errorf("default phrase with custom list: %+v", s)
	}
	d.Transcript("Bitte sprechen Sie nach dem Ton")
	if s := d.State(); s.Verdict != Machine || s.Reason != `phrase "Bitte sprechen Sie"` {
		t.Errorf("custom phrase: %+v", s)
	}

	d = New(Config{Rate: 8000, Phrases: []string{}})
	d.Transcript("leave a message")
	if s := d.State(); s.Verdict != Undecided {
		t.Errorf("no phrases: %+v", s)
	}

	d = New(Config{Rate: 8000, Window: 20 * time.Millisecond})
	d.Frame(make([]int16, 160))
	if s := d.State(); s.Verdict != Human {
		t.Fatalf("after the window: %+v", s)
	}
	d.Transcript("leave a message")
	if s := d.State(); s.Verdict != Human {
		t.Errorf("phrase after Human: %+v", s)
	}
}
