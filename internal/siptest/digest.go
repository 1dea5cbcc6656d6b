package siptest

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// traced is one SIP message from sipp's -trace_msg log.
type traced struct {
	received bool
	text     string
}

// parseMessages splits sipp's message log into messages. Each starts with a
// line of dashes and a timestamp, then "UDP message received [n] bytes :" or
// "UDP message sent (n bytes):", a blank line and the message.
func parseMessages(log string) []traced {
	var out []traced
	var cur *traced
	var body []string
	flush := func() {
		if cur != nil {
			cur.text = strings.TrimLeft(strings.Join(body, "\n"), "\r\n")
			out = append(out, *cur)
		}
		cur, body = nil, nil
	}
	lines := strings.Split(log, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "-----------------------------------------------") && i+1 < len(lines) &&
			strings.Contains(lines[i+1], " message ") {
			flush()
			i++
			cur = &traced{received: strings.Contains(lines[i], "message received")}
			continue
		}
		if cur != nil {
			body = append(body, lines[i])
		}
	}
	flush()
	return out
}

// header returns the first value of a header (case-insensitive name).
func header(msg, name string) (string, bool) {
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			break // end of headers
		}
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// digestParams parses `Digest k=v, k="v", ...`.
func digestParams(v string) (map[string]string, error) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
	if !strings.EqualFold(scheme, "Digest") {
		return nil, fmt.Errorf("scheme %q is not Digest", scheme)
	}
	params := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; {
		k, after, ok := strings.Cut(rest, "=")
		if !ok {
			return nil, fmt.Errorf("malformed digest parameters %q", rest)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		after = strings.TrimSpace(after)
		var val string
		if strings.HasPrefix(after, `"`) {
			end := strings.Index(after[1:], `"`)
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in %q", after)
			}
			val, after = after[1:1+end], after[2+end:]
		} else {
			val, after, _ = strings.Cut(after, ",")
			after = "," + after
		}
		params[k] = strings.TrimSpace(val)
		after = strings.TrimSpace(after)
		after = strings.TrimPrefix(after, ",")
		rest = strings.TrimSpace(after)
	}
	return params, nil
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// digestResponse is RFC 2617's request-digest for MD5, with or without qop.
func digestResponse(p map[string]string, method, password string) string {
	ha1 := md5hex(p["username"] + ":" + p["realm"] + ":" + password)
	ha2 := md5hex(method + ":" + p["uri"])
	if qop := p["qop"]; qop != "" {
		return md5hex(ha1 + ":" + p["nonce"] + ":" + p["nc"] + ":" + p["cnonce"] + ":" + qop + ":" + ha2)
	}
	return md5hex(ha1 + ":" + p["nonce"] + ":" + ha2)
}

// checkProxyDigests verifies, for uas_auth, every Proxy-Authorization sipp
// received against Keys user and pass and the nonce it challenged with:
// SIPp 3.6.1's verifyauth reads only Authorization headers.
func checkProxyDigests(s *Sipp) error {
	msgs := parseMessages(s.Messages())
	nonces := map[string]string{} // Call-ID -> nonce of the 407 sipp sent
	for _, m := range msgs {
		if m.received || !strings.HasPrefix(m.text, "SIP/2.0 407") {
			continue
		}
		callID, _ := header(m.text, "Call-ID")
		if ch, ok := header(m.text, "Proxy-Authenticate"); ok {
			if p, err := digestParams(ch); err == nil {
				nonces[callID] = p["nonce"]
			}
		}
	}
	var errs []error
	checked := 0
	for _, m := range msgs {
		if !m.received || !strings.HasPrefix(m.text, "INVITE ") {
			continue
		}
		auth, ok := header(m.text, "Proxy-Authorization")
		if !ok {
			continue
		}
		checked++
		callID, _ := header(m.text, "Call-ID")
		p, err := digestParams(auth)
		if err != nil {
			errs = append(errs, fmt.Errorf("call %s: Proxy-Authorization: %v", callID, err))
			continue
		}
		switch {
		case p["username"] != s.keys["user"]:
			errs = append(errs, fmt.Errorf("call %s: digest username %q, want %q", callID, p["username"], s.keys["user"]))
		case p["realm"] != "parley.test":
			errs = append(errs, fmt.Errorf("call %s: digest realm %q, want parley.test", callID, p["realm"]))
		case p["nonce"] != nonces[callID]:
			errs = append(errs, fmt.Errorf("call %s: digest nonce %q, want the challenge's %q", callID, p["nonce"], nonces[callID]))
		case p["algorithm"] != "" && !strings.EqualFold(p["algorithm"], "MD5"):
			errs = append(errs, fmt.Errorf("call %s: digest algorithm %q, want MD5", callID, p["algorithm"]))
		case !strings.EqualFold(p["response"], digestResponse(p, "INVITE", s.keys["pass"])):
			errs = append(errs, fmt.Errorf("call %s: digest response %s does not verify with user %q and password %q (uri %q)",
				callID, p["response"], s.keys["user"], s.keys["pass"], p["uri"]))
		}
	}
	if checked == 0 && len(errs) == 0 {
		return errors.New("no INVITE with Proxy-Authorization in the message log")
	}
	return errors.Join(errs...)
}
