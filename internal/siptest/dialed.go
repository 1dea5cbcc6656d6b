package siptest

import (
	"net/url"
	"slices"
	"strings"
)

// Dialed is, for each number a UAS was called at (the user of the
// Request-URI of the INVITEs it received), the distinct Call-IDs of those
// INVITEs, in the order they came: how many calls each number got, seen
// from the callee's side (retransmissions and re-INVITEs count once).
func (s *Sipp) Dialed() map[string][]string {
	out := map[string][]string{}
	for _, m := range parseMessages(s.Messages()) {
		if !m.received || !strings.HasPrefix(m.text, "INVITE ") {
			continue
		}
		user := requestUser(m.text)
		id, ok := header(m.text, "Call-ID")
		if !ok || user == "" {
			continue
		}
		if !slices.Contains(out[user], id) {
			out[user] = append(out[user], id)
		}
	}
	return out
}

// requestUser is the user part of a request's Request-URI, unescaped
// ("INVITE sip:+14155550100@127.0.0.1:5060 SIP/2.0" → "+14155550100").
func requestUser(msg string) string {
	line, _, _ := strings.Cut(msg, "\n")
	f := strings.Fields(line)
	if len(f) < 2 {
		return ""
	}
	uri := strings.TrimPrefix(strings.TrimPrefix(f[1], "sips:"), "sip:")
	user, _, ok := strings.Cut(uri, "@")
	if !ok {
		return ""
	}
	user, _, _ = strings.Cut(user, ";")
	if u, err := url.PathUnescape(user); err == nil {
		user = u
	}
	return user
}
