package twilio_test

import (
	"net/url"
	"testing"

	"github.com/parley-voice/parley/internal/sms/twilio"
)

// Twilio's documented example (TwilioDevEd/api-snippets,
// security/signature_validation, as used on the "Webhooks security" page).
const (
	exampleToken     = "12345"
	exampleURL       = "https://mycompany.com/myapp.php?foo=1&bar=2"
	exampleSignature = "GvWf1cFY/Q7PnoempGyD5oXAezc="
)

func exampleForm() url.Values {
	return url.Values{
		"CallSid": {"CA1234567890ABCDE"},
		"Caller":  {"+14158675310"},
		"Digits":  {"1234"},
		"From":    {"+14158675310"},
		"To":      {"+18005551212"},
	}
}

func TestSignTwilioExample(t *testing.T) {
	if got := twilio.Sign(exampleToken, exampleURL, exampleForm()); got != exampleSignature {
		t.Errorf("Sign = %q, want %q", got, exampleSignature)
	}
	if !twilio.ValidSignature(exampleToken, exampleURL, exampleForm(), exampleSignature) {
		t.Error("the documented example does not validate")
	}
}

func TestValidSignatureRefuses(t *testing.T) {
	tampered := exampleForm()
	tampered.Set("Digits", "1235")
	extra := exampleForm()
	extra.Set("Body", "")
	for name, tc := range map[string]struct {
		token, url string
		form       url.Values
		header     string
	}{
		"tampered param": {exampleToken, exampleURL, tampered, exampleSignature},
		"extra param":    {exampleToken, exampleURL, extra, exampleSignature},
		"missing param":  {exampleToken, exampleURL, url.Values{"CallSid": {"CA1234567890ABCDE"}}, exampleSignature},
		"other URL":      {exampleToken, "https://mycompany.com/myapp.php?foo=1&bar=3", exampleForm(), exampleSignature},
		"http URL":       {exampleToken, "http://mycompany.com/myapp.php?foo=1&bar=2", exampleForm(), exampleSignature},
		"other token":    {"12346", exampleURL, exampleForm(), exampleSignature},
		"empty token":    {"", exampleURL, exampleForm(), twilio.Sign("", exampleURL, exampleForm())},
		"empty header":   {exampleToken, exampleURL, exampleForm(), ""},
		"truncated":      {exampleToken, exampleURL, exampleForm(), exampleSignature[:len(exampleSignature)-1]},
		"raw base64 off": {exampleToken, exampleURL, exampleForm(), "GvWf1cFY/Q7PnoempGyD5oXAezd="},
	} {
		if twilio.ValidSignature(tc.token, tc.url, tc.form, tc.header) {
			t.Errorf("%s: valid", name)
		}
	}
}

func TestValidSignatureDefaultPort(t *testing.T) {
	f := url.Values{"MessageSid": {"SM1"}}
	for _, tc := range []struct{ signed, checked string }{
		{"https://example.com/sms", "https://example.com:443/sms"},
		{"https://example.com:443/sms", "https://example.com/sms"},
		{"http://example.com/sms?x=1", "http://example.com:80/sms?x=1"},
	} {
		if !twilio.ValidSignature("tok", tc.checked, f, twilio.Sign("tok", tc.signed, f)) {
			t.Errorf("signed for %s, checked at %s: invalid", tc.signed, tc.checked)
		}
	}
	if twilio.ValidSignature("tok", "https://example.com:8443/sms", f, twilio.Sign("tok", "https://example.com/sms", f)) {
		t.Error("another port validates")
	}
}

func TestSignOrder(t *testing.T) {
	// Parameters are concatenated in name order whatever order they came
	// in; the values of a repeated name in value order.
	a := url.Values{"b": {"2"}, "a": {"1"}, "m": {"y", "x"}}
	b := url.Values{"a": {"1"}, "m": {"x", "y"}, "b": {"2"}}
	if twilio.Sign("t", "u", a) != twilio.Sign("t", "u", b) {
		t.Error("order changes the signature")
	}
	// Name and value boundaries are not marked: a=bc and ab=c sign alike
	// (as Twilio's scheme has it), but a different value does not.
	if twilio.Sign("t", "u", url.Values{"a": {"bc"}}) != twilio.Sign("t", "u", url.Values{"ab": {"c"}}) {
		t.Error("the concatenation is not plain")
	}
}
