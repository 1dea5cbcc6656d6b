package campaign

import (
	"slices"
	"testing"
)

func TestCallerIDPrefersTheArea(t *testing.T) {
	from := []string{"+12125550100", "+14155550100", "+442071234567", "+14155550199", "+447911123000"}
	for _, c := range []struct{ to, want string }{
		{"+14155551234", "+14155550100"}, // San Francisco: the first of its two
		{"+12125559999", "+12125550100"}, // New York
		{"+442079460000", "+442071234567"},
		{"+447911654321", "+447911123000"}, // a UK mobile range
	} {
		for turn := range 3 {
			if got := CallerID(from, c.to, turn); got != c.want {
				t.Errorf("to %s, turn %d: %s, want %s", c.to, turn, got, c.want)
			}
		}
	}
}

func TestCallerIDTakesTurns(t *testing.T) {
	from := []string{"+12125550100", "+14155550100", "+442071234567"}
	var got []string
	for turn := range 6 {
		// Los Angeles (310), Paris, and a number that does not parse match
		// none of them.
		got = append(got, CallerID(from, []string{"+13105550100", "+33142685300", "+999"}[turn%3], turn))
	}
	if want := slices.Concat(from, from); !slices.Equal(got, want) {
		t.Errorf("turns %v, want %v", got, want)
	}
	if got := CallerID(from, "+13105550100", -1); got != from[2] {
		t.Errorf("negative turn: %s", got)
	}
	if got := CallerID(nil, "+13105550100", 0); got != "" {
		t.Errorf("no numbers: %q", got)
	}
}

// A country with the same digits as an area code elsewhere is not a match.
func TestCallerIDNeedsTheCountry(t *testing.T) {
	from := []string{"+442071234567", "+3320123456"}
	if got := CallerID(from, "+12025550100", 1); got != from[1] {
		t.Errorf("got %s, want the turn's", got)
	}
}

func BenchmarkCallerID(b *testing.B) {
	from := make([]string, 100)
	for i := range from {
		from[i] = "+1212555" + string(rune('0'+i/10%10)) + string(rune('0'+i%10)) + "00"
	}
	for b.Loop() {
		CallerID(from, "+14155550100", 7)
	}
}

// The prefix CallerID compares is what the phone-number data says is the
// country and area code, for the numbers of several plans.
func TestAreaPrefix(t *testing.T) {
	for number, want := range map[string]string{
		"+14155550100":  "+1415",
		"+18005550100":  "+1800",
		"+442071234567": "+4420",
		"+447911123456": "+447911",
		"+493012345678": "+4930",
		"+819012345678": "+8190",
		"+61212345678":  "+612",
		"+999":          "",
		"x":             "",
	} {
		if got := areaPrefix(number); got != want {
			t.Errorf("areaPrefix(%s) = %q, want %q", number, got, want)
		}
	}
}
