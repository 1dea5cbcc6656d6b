package twilio_test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/sms/twilio"
)

// A failure before the request went out cannot quote the token and is
// shown whole, whatever the token; after it, the network's text may quote
// the far end, and with a token too short to cut out it is not shown.
func TestSendShortTokenNetwork(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	// A server that answers with a malformed status line quoting what it got.
	malformed := newRaw(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 xyz token t not valid\r\n\r\n")
		_ = buf.Flush()
	})
	for _, tc := range []struct {
		base, token, want string
	}{
		{closed, "t", "connect: connection refused"},
		{closed, token, "connect: connection refused"},
		{malformed, "t", "twilio: unavailable: the answer broke off or could not be read"},
		{malformed, token, `malformed HTTP status code "xyz"`},
	} {
		c, err := twilio.New(twilio.Config{BaseURL: tc.base, AccountSID: sid, AuthToken: tc.token, HTTPClient: testHTTPClient(t), Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = send(t, c, twilio.Send{To: to, From: from, Body: "hi"})
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) || strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("%s, token %q: %v, want it to end %q", tc.base, tc.token, err, tc.want)
		}
	}
}
