package lm

import (
	"strings"
	"testing"
)

func TestSentences(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Hello, Acme Dental. How can I help?", "hello acme dental | how can i help"},
		{"Hi {{caller_name}}! Call us at 9:30 or 10am.", "hi | call us at nine thirty or ten a m"},
		{"Open 8 a.m. to 6 p.m. Closed Sunday.", "open eight a m to six p m | closed sunday"},
		{"Dr. Patel sees children; Mrs. Lee does not", "doctor patel sees children | missus lee does not"},
		{"A crown is $1,100 and a cleaning $95.50", "a crown is one thousand one hundred dollars and a cleaning ninety five dollars fifty cents"},
		{"Save 20% on the 2nd visit", "save twenty percent on the second visit"},
		{"Your PIN is 4242", "your pin is four two four two"},
		{"Book at https://www.acmedental.com/book or mail info@acme-dental.com", "book at acmedental dot com or mail info at acme dental dot com"},
		{"See acmedental.com for more", "see acmedental dot com for more"},
		{"Founded in 1985, renovated in 2019, since 2005", "founded in nineteen eighty five renovated in twenty nineteen since two thousand five"},
		{"Born March 3, 1985", "born march third nineteen eighty five"},
		{"Hours:\n- Monday: 8-5\n* Friday closed\n1. Saturday by appointment", "hours | monday | eight to five | friday closed | saturday by appointment"},
		{"Call (555) 123-4567 now", "call five five five one two three four five six seven now"},
		{"Crowns (and root canals) cost more", "crowns | and root canals | cost more"},
		{"Don't forget the patients' x-rays", "don't forget the patients x rays"},
		{"It’s <b>bold</b> and **strong** and [a link](http://x.io/y)", "it's bold and strong and a link"},
		{"open 24/7 e.g. holidays", "open twenty four seven for example holidays"},
		{"   ", ""},
	} {
		var got []string
		for _, s := range Sentences(c.in) {
			got = append(got, strings.Join(s, " "))
		}
		if g := strings.Join(got, " | "); g != c.want {
			t.Errorf("Sentences(%q)\n got %q\nwant %q", c.in, g, c.want)
		}
	}
}

func TestYear(t *testing.T) {
	for n, want := range map[uint64]string{1985: "nineteen eighty five", 1905: "nineteen oh five", 1900: "nineteen hundred",
		2000: "two thousand", 2007: "two thousand seven", 2019: "twenty nineteen", 2100: ""} {
		w, _ := year(n)
		if got := strings.Join(w, " "); got != want {
			t.Errorf("year(%d) = %q, want %q", n, got, want)
		}
	}
}
