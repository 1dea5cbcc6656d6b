package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	signedAt = time.Unix(1_700_000_000, 0)
	testBody = []byte(`{"event":"post_call","id":"3f6c"}`)
)

// independentSignature computes a v1 value the way a customer would,
// from the documented algorithm.
func independentSignature(secret, t string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(t + "." + string(body)))
	return hex.EncodeToString(m.Sum(nil))
}

func TestSign(t *testing.T) {
	got := Sign("whsec_1", signedAt, testBody)
	if want := "t=1700000000,v1=" + independentSignature("whsec_1", "1700000000", testBody); got != want {
		t.Fatalf("Sign: %q, want %q", got, want)
	}
	if !regexp.MustCompile(`^t=[0-9]+,v1=[0-9a-f]{64}$`).MatchString(got) {
		t.Errorf("Sign: %q is not t=<digits>,v1=<64 hex>", got)
	}
}

func TestVerifyAccepts(t *testing.T) {
	sig := independentSignature("whsec_1", "1700000000", testBody)
	other := independentSignature("whsec_old", "1700000000", testBody)
	for _, header := range []string{
		Sign("whsec_1", signedAt, testBody),
		"t=1700000000,v1=" + sig,
		"v1=" + sig + ",t=1700000000",
		"t=1700000000, v1=" + sig,                      // space after the comma
		"t=1700000000,v1=" + other + ",v1=" + sig,      // one of several (rotation)
		"t=1700000000,v0=whatever,v1=" + sig + ",v2=x", // unknown keys ignored
	} {
		for _, now := range []time.Time{signedAt, signedAt.Add(5 * time.Minute), signedAt.Add(-5 * time.Minute)} {
			if err := Verify("whsec_1", header, testBody, now, 5*time.Minute); err != nil {
				t.Errorf("%q at %v: %v", header, now.Sub(signedAt), err)
			}
		}
	}
	// No tolerance given: DefaultTolerance.
	if err := Verify("whsec_1", Sign("whsec_1", signedAt, testBody), testBody, signedAt.Add(DefaultTolerance), 0); err != nil {
		t.Errorf("default tolerance: %v", err)
	}
}

func TestVerifyRejects(t *testing.T) {
	good := Sign("whsec_1", signedAt, testBody)
	sig := independentSignature("whsec_1", "1700000000", testBody)
	for _, tc := range []struct {
		name, secret, header string
		body                 []byte
		now                  time.Time
		want                 error
	}{
		{"tampered body", "whsec_1", good, []byte(`{"event":"post_call","id":"3f6d"}`), signedAt, ErrSignatureMismatch},
		{"wrong secret", "whsec_2", good, testBody, signedAt, ErrSignatureMismatch},
		{"other timestamp", "whsec_1", "t=1700000001,v1=" + sig, testBody, signedAt, ErrSignatureMismatch},
		{"stale", "whsec_1", good, testBody, signedAt.Add(5*time.Minute + time.Second), ErrStaleSignature},
		{"from the future", "whsec_1", good, testBody, signedAt.Add(-6 * time.Minute), ErrStaleSignature},
		{"far past", "whsec_1", "t=0,v1=" + independentSignature("whsec_1", "0", testBody), testBody, signedAt, ErrStaleSignature},
		{"no secret", "", good, testBody, signedAt, ErrNoSecret},
		{"no header", "whsec_1", "", testBody, signedAt, ErrNoSignature},
		{"blank header", "whsec_1", "  ", testBody, signedAt, ErrNoSignature},
		{"garbage", "whsec_1", "garbage", testBody, signedAt, ErrMalformedSignature},
		{"no t", "whsec_1", "v1=" + sig, testBody, signedAt, ErrMalformedSignature},
		{"no v1", "whsec_1", "t=1700000000", testBody, signedAt, ErrMalformedSignature},
		{"only other versions", "whsec_1", "t=1700000000,v0=" + sig, testBody, signedAt, ErrMalformedSignature},
		{"two t", "whsec_1", "t=1700000000,t=1700000000,v1=" + sig, testBody, signedAt, ErrMalformedSignature},
		{"empty t", "whsec_1", "t=,v1=" + sig, testBody, signedAt, ErrMalformedSignature},
		{"negative t", "whsec_1", "t=-1,v1=" + sig, testBody, signedAt, ErrMalformedSignature},
		{"signed t", "whsec_1", "t=+1700000000,v1=" + sig, testBody, signedAt, ErrMalformedSignature},
		{"huge t", "whsec_1", "t=99999999999999999999,v1=" + sig, testBody, signedAt, ErrMalformedSignature},
		{"fractional t", "whsec_1", "t=1700000000.5,v1=" + sig, testBody, signedAt, ErrMalformedSignature},
		{"not hex", "whsec_1", "t=1700000000,v1=" + strings.Repeat("z", 64), testBody, signedAt, ErrMalformedSignature},
		{"short v1", "whsec_1", "t=1700000000,v1=" + sig[:62], testBody, signedAt, ErrMalformedSignature},
		{"long v1", "whsec_1", "t=1700000000,v1=" + sig + "00", testBody, signedAt, ErrMalformedSignature},
		{"uppercase key", "whsec_1", "T=1700000000,V1=" + sig, testBody, signedAt, ErrMalformedSignature},
		{"empty part", "whsec_1", "t=1700000000,,v1=" + sig, testBody, signedAt, ErrMalformedSignature},
	} {
		err := Verify(tc.secret, tc.header, tc.body, tc.now, 5*time.Minute)
		if !errors.Is(err, tc.want) || !errors.Is(err, ErrSignature) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func FuzzVerify(f *testing.F) {
	const secret = "whsec_fuzz"
	f.Add(Sign(secret, signedAt, testBody), testBody)
	f.Add("t=1700000000,v1="+independentSignature(secret, "1700000000", nil), []byte(nil))
	f.Add("t=1700000000,v1=00,v1=", []byte("x"))
	f.Add(",,,=,t=,v1==", []byte("{}"))
	f.Add("t=1700000000\x00,v1=ab", []byte("{}"))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		err := Verify(secret, header, body, signedAt, time.Minute)
		if err != nil {
			if !errors.Is(err, ErrSignature) {
				t.Fatalf("error %v does not wrap ErrSignature", err)
			}
		} else {
			// Accepted: the header must carry a t near signedAt and a v1
			// that the documented algorithm produces for it.
			var ts string
			var v1 []string
			for part := range strings.SplitSeq(header, ",") {
				k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
				switch k {
				case "t":
					ts = v
				case "v1":
					v1 = append(v1, strings.ToLower(v))
				}
			}
			secs, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || secs < signedAt.Unix()-60 || secs > signedAt.Unix()+60 {
				t.Fatalf("accepted t %q", ts)
			}
			want := independentSignature(secret, ts, body)
			found := false
			for _, v := range v1 {
				found = found || v == want
			}
			if !found {
				t.Fatalf("accepted %q without a matching v1", header)
			}
		}
		// Whatever the body, a fresh signature verifies.
		if err := Verify(secret, Sign(secret, signedAt, body), body, signedAt, time.Minute); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}
