package sipua

import (
	"strings"
)

// ParseDTMFInfo reads a keypad digit from a SIP INFO body:
// application/dtmf-relay ("Signal=5\r\nDuration=160") or application/dtmf
// ("5"). Signals 10 and 11 are * and # (RFC 4733 event codes).
func ParseDTMFInfo(contentType string, body []byte) (rune, bool) {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	if len(body) > 1024 {
		return 0, false
	}
	switch ct {
	case "application/dtmf-relay":
		for _, line := range strings.Split(string(body), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "signal") {
				continue
			}
			return signal(strings.TrimSpace(v))
		}
		return 0, false
	case "application/dtmf":
		return signal(strings.TrimSpace(string(body)))
	}
	return 0, false
}

func signal(v string) (rune, bool) {
	switch v {
	case "10":
		return '*', true
	case "11":
		return '#', true
	}
	if len(v) != 1 {
		return 0, false
	}
	d := rune(v[0])
	if d >= 'a' && d <= 'd' {
		d -= 'a' - 'A'
	}
	if validDigit(d) {
		return d, true
	}
	return 0, false
}
