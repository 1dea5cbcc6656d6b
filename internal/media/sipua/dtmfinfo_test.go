package sipua

import "testing"

func TestParseDTMFInfo(t *testing.T) {
	for _, tc := range []struct {
		ct, body string
		want     rune
		ok       bool
	}{
		{"application/dtmf-relay", "Signal=5\r\nDuration=160\r\n", '5', true},
		{"application/dtmf-relay; charset=x", "signal = 11\nDuration=100", '#', true},
		{"Application/DTMF-Relay", "Signal=10", '*', true},
		{"application/dtmf-relay", "Signal=d", 'D', true},
		{"application/dtmf", "7", '7', true},
		{"application/dtmf-relay", "Duration=160", 0, false},
		{"application/dtmf-relay", "Signal=12", 0, false},
		{"application/dtmf-relay", "Signal=x", 0, false},
		{"text/plain", "Signal=5", 0, false},
	} {
		got, ok := ParseDTMFInfo(tc.ct, []byte(tc.body))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q %q: %q %v, want %q %v", tc.ct, tc.body, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParseDTMFInfo: SIP INFO bodies come from the network.
func FuzzParseDTMFInfo(f *testing.F) {
	f.Add("application/dtmf-relay", []byte("Signal=5\r\nDuration=160"))
	f.Add("application/dtmf", []byte("#"))
	f.Add("application/dtmf-relay", []byte("Signal="))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		d, ok := ParseDTMFInfo(ct, body)
		if ok && !validDigit(d) {
			t.Fatalf("accepted %q", d)
		}
		if !ok && d != 0 {
			t.Fatalf("refused but returned %q", d)
		}
	})
}
