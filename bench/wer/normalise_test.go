package wer

import (
	"strings"
	"testing"
	"unicode"

	"github.com/parley-voice/parley/internal/spoken"
)

func TestNormalise(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Hello, Acme Dental front desk.", "hello acme dental front desk"},
		{"That agent is already logged on.  Please enter your agent number followed by the pound key.",
			"that agent is already logged on please enter your agent number followed by the pound key"},
		{"[ascending tones]", ""},
		{"(10 seconds of silence)", ""},
		{"<beep ascending>", ""},
		{"at [@]", "at"},
		{"Please leave your message after the tone. (simple tone sound plays)", "please leave your message after the tone"},
		{"IAX (note: does not say \"2\")", "iax"},
		{"an unclosed [note runs to the end", "an unclosed"},
		{"Call-Forward on No Answer.", "call forward on no answer"},
		{"A.M.", "a m"},
		{"I'm sorry, but the party's line isn't free.", "i'm sorry but the party's line isn't free"},
		{"\"don't call\" menu", "don't call menu"},
		{"It’s “quoted”", "it's quoted"},
		{"press * to toggle pause, press # to enter", "press star to toggle pause press pound to enter"},
		{"Dial 1 if you wish", "dial one if you wish"},
		{"dial 500 or 600.", "dial five hundred or six hundred"},
		{"extension 1234 and password 4242.", "extension one two three four and password four two four two"},
		{"a 28.8 kilobit modem", "a twenty eight point eight kilobit modem"},
		{"3D audio", "three d audio"},
		{"H.323", "h three hundred twenty three"},
		{"the 21st and the 2nd, the 3rd, the 12th", "the twenty first and the second the third the twelfth"},
		{"a crown is $1,100 and a cleaning $95", "a crown is one thousand one hundred dollars and a cleaning ninety five dollars"},
		{"$1 or $12.50 or $3.01 or $4.00", "one dollar or twelve dollars fifty cents or three dollars one cent or four dollars"},
		{"20% off", "twenty percent off"},
		{"at 7:30 or 9:05 or 10:00", "at seven thirty or nine oh five or ten"},
		{"007", "zero zero seven"},
		{"1,000,000 and 2,500", "one million and two thousand five hundred"},
		{"Rock & roll", "rock and roll"},
		{"   ", ""},
		{"'tis the season'", "tis the season"},
	} {
		if got := Normalise(c.in); got != c.want {
			t.Errorf("Normalise(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCardinal(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "zero", 13: "thirteen", 40: "forty", 99: "ninety nine", 100: "one hundred", 101: "one hundred one",
		1000: "one thousand", 1100: "one thousand one hundred", 20019: "twenty thousand nineteen",
		1_000_001: "one million one", 7_000_000_000: "seven billion",
	} {
		if got := strings.Join(spoken.Cardinal(n), " "); got != want {
			t.Errorf("cardinal(%d) = %q, want %q", n, got, want)
		}
	}
	for in, want := range map[string]string{"1st": "first", "40th": "fortieth", "22nd": "twenty second", "100th": "one hundredth", "9th": "ninth", "5th": "fifth"} {
		got, ok := spoken.Number(in)
		if !ok || strings.Join(got, " ") != want {
			t.Errorf("number(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "1,00", "12,3456", "1.", "abc", "1.2.3"} {
		if got, ok := spoken.Number(in); ok {
			t.Errorf("number(%q) = %q, want not a number", in, got)
		}
	}
}

// FuzzNormalise checks that any text normalises to lower-case words of
// letters (apostrophes inside) separated by single spaces, with no ASCII
// digit left, and that normalising again changes nothing.
func FuzzNormalise(f *testing.F) {
	for _, s := range []string{"Hello, world.", "press # 1234 [beep] $12.50 7:30 21st 28.8", "A.M. (note) <x> don't", "1,000,000,000,000,000,000", "İ ǅ ß"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Normalise(s)
		if got != strings.Join(strings.Fields(got), " ") {
			t.Fatalf("Normalise(%q) = %q: not single-spaced words", s, got)
		}
		for _, w := range strings.Fields(got) {
			if strings.HasPrefix(w, "'") || strings.HasSuffix(w, "'") {
				t.Fatalf("Normalise(%q): word %q has an apostrophe at its edge", s, w)
			}
			for _, c := range w {
				if spoken.IsDigit(c) || (c != '\'' && !unicode.IsLetter(c) && !unicode.IsDigit(c)) {
					t.Fatalf("Normalise(%q): word %q holds %q", s, w, c)
				}
			}
		}
		if again := Normalise(got); again != got {
			t.Fatalf("Normalise(%q) = %q, but Normalise of that = %q", s, got, again)
		}
	})
}
