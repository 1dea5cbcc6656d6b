package turntaking

import (
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		text string
		want Ending
	}{
		{"", Undecided},
		{"   ", Undecided},
		{"...", Unfinished},
		{"?!", Complete},
		// Punctuation from the recognizer decides.
		{"I'd like a table for two.", Complete},
		{"What time do you open?", Complete},
		{"Stop!", Complete},
		{"I'd like a table for two,", Unfinished},
		{"I was wondering...", Unfinished},
		{"I was wondering…", Unfinished},
		{"Well -", Unfinished},
		// Without punctuation, the last words.
		{"i'd like a table for two and", Unfinished},
		{"i'd like a table for two AND", Unfinished},
		{"i want to book um", Unfinished},
		{"it's for the uh", Unfinished},
		{"i'm calling because", Unfinished},
		{"can i book a table for", Unfinished},
		{"my name is", Unfinished},
		{"so basically i", Unfinished},
		{"it's about my appointment you know", Unfinished},
		{"yes", Complete},
		{"no thank you", Complete},
		{"Thank you very much", Complete},
		{"that's right", Complete},
		{"can you help me", Complete},
		{"i'd like to book it please", Complete},
		{"i need an appointment tomorrow", Complete},
		{"thank you", Complete},
		{"ok thank you", Complete},
		{"when do you open", Complete},
		{"what time do you", Undecided}, // a question cut before its verb is not judged complete
		{"i'd like a table for two", Undecided},
		{"john smith", Undecided},
		{"please", Undecided},                  // a closer needs a sentence before it
		{"that's a bit late though", Complete}, // the adverb
		{"i can come in even though", Unfinished},
		{"it sounds as though", Unfinished},
		{"can i come by", Complete}, // a particle, not a preposition
		{"i'll stop by tomorrow", Complete},
		{"we might swing by", Complete}, // the rule itself, without a closer after it
		{"okay by", Complete},           // "bye" as recognizers write it
		{"can i pay by", Unfinished},
	} {
		if got := Judge(c.text); got != c.want {
			t.Errorf("Judge(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestSilenceFollowsTheWords(t *testing.T) {
	s := Defaults()
	complete, undecided, unfinished := s.Silence("Can I book a table for tonight?"), s.Silence("a table for two"), s.Silence("a table for two and")
	if complete != DefaultMinSilence || unfinished != DefaultMaxSilence {
		t.Errorf("complete %v, unfinished %v; want %v and %v", complete, unfinished, DefaultMinSilence, DefaultMaxSilence)
	}
	if undecided != 525*time.Millisecond {
		t.Errorf("undecided %v, want a quarter of the way from min to max (525ms)", undecided)
	}
	if s.Silence("") != undecided {
		t.Errorf("nothing recognised yet waits %v, want the in-between %v", s.Silence(""), undecided)
	}
	s.MinSilence, s.MaxSilence = 400, 400
	if s.Silence("and") != 400 || s.Silence("yes") != 400 || s.Silence("x") != 400 {
		t.Error("equal minimum and maximum must give one silence")
	}
}

func TestRealWords(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"uh-huh", 0},
		{"Uh huh.", 0},
		{"mm-hm", 0},
		{"mhm yeah okay", 0},
		{"yeah, right, sure", 0},
		{"oh I see", 0},
		{"got it, all right", 0},
		{"um uh", 0},
		{"wait", 1},
		{"wait, stop", 2},
		{"wait stop please", 3},
		{"uh-huh, wait a second", 3},
		{"no no no", 3},
		{"That's not what I said!", 5},
		{"it's 5 o'clock", 3},
	} {
		if got := RealWords(c.text); got != c.want {
			t.Errorf("RealWords(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestWords(t *testing.T) {
	got := Words("  Hello, ACME's front-desk… “Yes?” it’s 9am ")
	want := []string{"hello", "acme's", "front", "desk", "yes", "it's", "9am"}
	if len(got) != len(want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Words = %q, want %q", got, want)
			break
		}
	}
}

// Recognizer text is untrusted: any bytes are judged and counted without
// panicking, and the counts stay within the words.
func FuzzJudge(f *testing.F) {
	for _, s := range []string{"", "uh-huh", "wait, stop please", "a table for two and", "Yes?", "…", "\xff\xfe", "it’s", "'a'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		e := Judge(text)
		if e != Undecided && e != Complete && e != Unfinished {
			t.Fatalf("Judge(%q) = %d", text, e)
		}
		if n, w := RealWords(text), len(Words(text)); n < 0 || n > w {
			t.Fatalf("RealWords(%q) = %d of %d words", text, n, w)
		}
		s := Defaults()
		if d := s.Silence(text); d < s.MinSilence || d > s.MaxSilence {
			t.Fatalf("Silence(%q) = %v outside %v..%v", text, d, s.MinSilence, s.MaxSilence)
		}
	})
}
