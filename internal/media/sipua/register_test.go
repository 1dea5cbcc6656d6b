package sipua

import (
	"testing"
	"time"
)

func TestGrantedExpiry(t *testing.T) {
	ours := "sip:alice@203.0.113.5"
	for _, tc := range []struct {
		name     string
		contacts []string
		expires  string
		want     time.Duration
	}{
		{"our contact's parameter", []string{`<sip:alice@203.0.113.5:5060>;expires=120;q=1`}, "3600", 120 * time.Second},
		{"among several in one header", []string{`<sip:bob@198.51.100.1>;expires=30, <sip:alice@203.0.113.5:5070;transport=tcp>;q=0.5;Expires = 90`}, "", 90 * time.Second},
		{"across headers", []string{`<sip:bob@198.51.100.1>;expires=30`, `<sip:ALICE@203.0.113.5>;expires=45`}, "", 45 * time.Second},
		{"the Expires header", []string{`<sip:bob@198.51.100.1>;expires=30`}, " 600 ", 600 * time.Second},
		{"what was asked", nil, "soon", 3600 * time.Second},
		{"capped at a year", []string{`<sip:alice@203.0.113.5>;expires=99999999999999999999`}, "", maxGranted},
	} {
		if got := grantedExpiry(tc.contacts, tc.expires, ours, time.Hour); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func FuzzGrantedExpiry(f *testing.F) {
	f.Add(`<sip:alice@203.0.113.5:5060>;expires=120`, "3600")
	f.Add(`<sip:bob@h>;expires=1, <sip:alice@203.0.113.5>;EXPIRES=0`, "")
	f.Add(`,,,;expires=;expires=5`, "-1")
	f.Fuzz(func(t *testing.T, contact, expires string) {
		got := grantedExpiry([]string{contact}, expires, "sip:alice@203.0.113.5", time.Hour)
		if got < 0 || got > maxGranted {
			t.Fatalf("grantedExpiry(%q, %q) = %s", contact, expires, got)
		}
	})
}
