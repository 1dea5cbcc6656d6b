package deepgram

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// What the server says is shown with a long key replaced whole, and not at
// all with a key too short to be told from its words; a dial that never
// sent the key shows its error whole.
func TestErrorsKeepTheKeyOut(t *testing.T) {
	const long = "0123456789abcdef0123456789abcdef01234567"
	refused := func(msg string) *http.Response {
		return &http.Response{StatusCode: 401, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"err_msg":"` + msg + `"}`))}
	}
	for _, tc := range []struct {
		key, msg, want string
	}{
		{long, "Invalid credentials: " + long, "stt: engine unavailable: deepgram refused the API key: 401 Unauthorized: Invalid credentials: [redacted]"},
		{"k", "Invalid credentials: k", "stt: engine unavailable: deepgram refused the API key: 401 Unauthorized"},
	} {
		if err := handshakeError(refused(tc.msg), errors.New("bad handshake"), "en", "nova-3", tc.key, true); err.Error() != tc.want {
			t.Errorf("handshake, key %q: %q, want %q", tc.key, err, tc.want)
		}
	}

	dial := &url.Error{Op: "GET", URL: "wss://x", Err: errors.New("dial tcp: lookup x: no such host")}
	if err := handshakeError(nil, dial, "en", "nova-3", "k", false); !strings.HasSuffix(err.Error(), "deepgram: dial tcp: lookup x: no such host") {
		t.Errorf("dial, short key: %v", err)
	}

	closed := websocket.CloseError{Code: websocket.StatusPolicyViolation, Reason: "DATA-0000 key k refused"}
	if err := endError(closed, "Unknown key k", "r1", "k"); err.Error() != "stt: engine unavailable: deepgram closed the stream with 1008 StatusPolicyViolation (request r1)" {
		t.Errorf("close, short key: %v", err)
	}
	closed.Reason = "DATA-0000 key " + long + " refused"
	if err := endError(closed, "Unknown key "+long, "r1", long); err.Error() !=
		"stt: engine unavailable: deepgram closed the stream with 1008 DATA-0000 key [redacted] refused: Unknown key [redacted] (request r1)" {
		t.Errorf("close, long key: %v", err)
	}
}
