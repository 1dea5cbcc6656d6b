package apierr

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// The refusal of webhook's SSRF guard, which a messaging connection with
// the auth token "t" showed as "opera[redacted]or can allow ...".
const refusal = "webhook refused: the address is private (loopback, private, link-local or otherwise not public); " +
	"the operator can allow such addresses with --allow-private-webhooks"

const longToken = "f00dfacef00dfacef00dfacef00dface"

func TestRedactLongSecret(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Authenticate " + longToken, "Authenticate [redacted]"},
		{longToken + " is not valid", "[redacted] is not valid"},
		{longToken, "[redacted]"},
		// Every occurrence, whole, wherever punctuation bounds it.
		{"token=" + longToken + "&again=" + longToken + ".", "token=[redacted]&again=[redacted]."},
		{`"` + longToken + `" 'x' (` + longToken + `)`, `"[redacted]" 'x' ([redacted])`},
		{"https://x/?t=" + longToken, "https://x/?t=[redacted]"},
		{"key_" + longToken + "_end", "key_[redacted]_end"},
		// Not there: the text as it is, folded to one line.
		{"Invalid 'To' Phone Number:\n\t+1", "Invalid 'To' Phone Number: +1"},
		// Keys of other shapes go too.
		{"Incorrect API key provided: sk-proj-ab***yz.", "Incorrect API key provided: [redacted]"},
	} {
		got, ok := Redact(tc.text, longToken)
		if !ok || got != tc.want {
			t.Errorf("Redact(%q) = %q, %v; want %q", tc.text, got, ok, tc.want)
		}
	}
	// A secret with white space in it is found however the text spaces it.
	if got, ok := Redact("pass: my  secret\nvalue!", "my secret\tvalue"); !ok || got != "pass: [redacted]!" {
		t.Errorf("spaced secret: %q, %v", got, ok)
	}
	// Exactly MinSecretLen characters (runes, not bytes) is long enough.
	for _, secret := range []string{"abcd1234", "éééééééé"} {
		if got, ok := Redact("got "+secret+" here", secret); !ok || got != "got [redacted] here" {
			t.Errorf("%q: %q, %v", secret, got, ok)
		}
	}
}

func TestRedactShortSecret(t *testing.T) {
	// The reported case: "t" would have been cut out of every word it is
	// in. Nothing is shown, whether the text has the secret or not (shown
	// untouched, it says which letters the secret is not).
	for _, secret := range []string{"t", "abc1234", "ééééééé", " t ", "        ", "\xff\xff\xff\xff\xff\xff\xff\xffab"} {
		for _, text := range []string{refusal, "no such number", ""} {
			if got, ok := Redact(text, secret); ok || got != "" {
				t.Errorf("Redact(%q, %q) = %q, %v; want nothing", text, secret, got, ok)
			}
		}
	}
}

func TestRedactEmptySecret(t *testing.T) {
	// No secret was sent: nothing to hide, nothing garbled.
	if got, ok := Redact(refusal, ""); !ok || got != refusal {
		t.Errorf("%q, %v", got, ok)
	}
	if got, ok := Redact("bad voice\n 'alloy' for sk-abc", ""); !ok || got != "bad voice 'alloy' for [redacted]" {
		t.Errorf("%q, %v", got, ok)
	}
}

func TestRedactSecretInsideWords(t *testing.T) {
	// Cut out of a longer word, the mark would show where the secret's
	// letters were ("extra[redacted]"): the text cannot be shown.
	for _, tc := range []struct{ text, secret string }{
		{"the password is wrong; passwords expire", "password"},
		{"extraordinary", "ordinary"},
		{"x" + longToken, longToken},
		{longToken + "0", longToken},
		{"ok " + longToken + " but not é" + longToken, longToken},
		// Overlapping itself: replacing one would leave part of the other.
		{"aaaaaaaaa", "aaaaaaaa"},
		{"ab-ab-ab-ab", "ab-ab-ab"},
	} {
		if got, ok := Redact(tc.text, tc.secret); ok || got != "" {
			t.Errorf("Redact(%q, %q) = %q, %v; want nothing", tc.text, tc.secret, got, ok)
		}
	}
	// A whole word is fine, the same secret in a longer one elsewhere not.
	if got, ok := Redact("the password is wrong", "password"); !ok || got != "the [redacted] is wrong" {
		t.Errorf("%q, %v", got, ok)
	}
}

// glued finds a mark with a letter or digit right before or after it.
var glued = regexp.MustCompile(`[\p{L}\p{N}]\[redacted\]|\[redacted\][\p{L}\p{N}]`)

func TestRedactLongText(t *testing.T) {
	// The secret straddles the 200-byte cut: shortened first, its first
	// half would have stayed where no match finds it.
	text := strings.Repeat("word ", 39) + "tok " + longToken + " and more words after it"
	got, ok := Redact(text, longToken)
	if !ok || len(got) > 203 || strings.Contains(got, longToken[:4]) || !strings.HasSuffix(got, "tok ...") {
		t.Errorf("%q, %v", got, ok)
	}
	// A mark is never cut in two.
	for n := 190; n <= 200; n++ {
		got, _ := Redact(strings.Repeat("x", n)+" "+longToken+" y", longToken)
		if strings.Contains(got, "[r") && !strings.Contains(got, redacted) || glued.MatchString(got) {
			t.Errorf("%d: %q", n, got)
		}
	}
}

// FuzzRedact: whatever the text and secret, the secret never shows, a
// short one shows nothing, and the text is one bounded line.
func FuzzRedact(f *testing.F) {
	for _, s := range [][2]string{
		{refusal, "t"}, {refusal, longToken}, {"x " + longToken + " y", longToken}, {"[redacted]", "[redacted]"},
		{"aaaaaaaaaaaaaaaaa", "aaaaaaaa"}, {"a] [redacted] [b", "] [redacted] ["}, {"sk-sk-sk-sk-sk", "sk-sk-sk"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, secret string) {
		got, ok := Redact(text, secret)
		if !ok {
			if got != "" {
				t.Fatalf("not ok but %q", got)
			}
			return
		}
		s := fold(secret)
		if secret != "" && utf8.RuneCountInString(s) < MinSecretLen {
			t.Fatalf("short secret %q: %q", secret, got)
		}
		if secret != "" && strings.Contains(got, s) {
			t.Fatalf("secret %q in %q", secret, got)
		}
		if len(got) > 203 || !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\t") {
			t.Fatalf("%q", got)
		}
	})
}

func TestUnanswered(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "https://api.example/v1?t=x", Err: errors.New("dial tcp 10.0.0.1:443: " + refusal)}
	// Not sent: whole, whatever the key (the URL left out).
	for _, key := range []string{"", "t", longToken} {
		if got, ok := Unanswered(refused, key, false); !ok || !strings.HasPrefix(got, "dial tcp 10.0.0.1:443: webhook refused") || glued.MatchString(got) {
			t.Errorf("key %q: %q, %v", key, got, ok)
		}
	}
	// Sent: the far end may be quoted, so Redact's rule.
	broken := &url.Error{Op: "Post", URL: "https://x", Err: errors.New(`malformed HTTP response "` + longToken + `"`)}
	if got, ok := Unanswered(broken, longToken, true); !ok || got != `malformed HTTP response "[redacted]"` {
		t.Errorf("%q, %v", got, ok)
	}
	if got, ok := Unanswered(broken, "t", true); ok || got != "" {
		t.Errorf("short key: %q, %v", got, ok)
	}
}

func TestTrace(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	client := srv.Client()

	ctx, sent := Trace(t.Context())
	if sent() {
		t.Fatal("sent before a request")
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !sent() {
		t.Error("a request answered, not sent")
	}

	// A port nothing listens on: the headers never went out.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, sent = Trace(t.Context())
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr, nil)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("an answer from a closed port")
	}
	if sent() {
		t.Error("a refused connection counted as sent")
	}
}
