package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far a signature's timestamp may be from the
// receiver's clock, either way, when Verify is given no tolerance.
const DefaultTolerance = 5 * time.Minute

// Errors of Verify. Every one wraps ErrSignature.
var (
	ErrSignature          = errors.New("webhook signature invalid")
	ErrNoSecret           = fmt.Errorf("%w: no signing secret to verify with", ErrSignature)
	ErrNoSignature        = fmt.Errorf("%w: no X-Parley-Signature header", ErrSignature)
	ErrMalformedSignature = fmt.Errorf("%w: malformed X-Parley-Signature header", ErrSignature)
	ErrStaleSignature     = fmt.Errorf("%w: timestamp outside the tolerance", ErrSignature)
	ErrSignatureMismatch  = fmt.Errorf("%w: no v1 signature matches", ErrSignature)
)

// Sign returns the X-Parley-Signature value for body sent at time t with
// secret: "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">".
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// maxTimestampDigits bounds t so it always fits an int64.
const maxTimestampDigits = 18

// Verify checks an X-Parley-Signature header value against body as
// received: header must hold exactly one t (decimal Unix seconds) and at
// least one v1; one v1 must equal the HMAC-SHA256 of "<t>.<body>" keyed
// with secret (compared in constant time); and t must be within tolerance
// of now (tolerance <= 0 means DefaultTolerance). Unknown keys are ignored.
// The header is untrusted input: any string is safe to pass.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if secret == "" {
		return ErrNoSecret
	}
	if strings.TrimSpace(header) == "" {
		return ErrNoSignature
	}
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformedSignature
		}
		switch k {
		case "t":
			if ts != "" || !decimal(v) {
				return ErrMalformedSignature
			}
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				return ErrMalformedSignature
			}
			sigs = append(sigs, sig)
		}
	}
	if ts == "" || len(sigs) == 0 {
		return ErrMalformedSignature
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	secs, _ := strconv.ParseInt(ts, 10, 64) // decimal checked it fits
	if age := now.Sub(time.Unix(secs, 0)); age > tolerance || age < -tolerance {
		return ErrStaleSignature
	}
	want := mac(secret, ts, body)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return ErrSignatureMismatch
}

// decimal reports whether s is 1 to maxTimestampDigits ASCII digits.
func decimal(s string) bool {
	if s == "" || len(s) > maxTimestampDigits {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
