package api

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/sms/twilio/twiliotest"
	"github.com/parley-voice/parley/internal/webhook"
)

// A mark with a letter or digit right before or after it: a secret cut
// out of a word, which shows where its letters were.
var markInWord = regexp.MustCompile(`[\p{L}\p{N}]\[redacted\]|\[redacted\][\p{L}\p{N}]`)

// A messaging connection's auth token never shows in its messages'
// errorMessage: a long one is replaced whole; with a short one ("t", which
// was cut out of every word: "opera[redacted]or can allow ...") the
// carrier's text is not shown at all, only the status and code, while the
// text of a refusal that came before anything was sent shows whole.
func TestMessageErrorsHideTheToken(t *testing.T) {
	const long = "f00dfacef00dfacef00dfacef00dface"
	if len("t") >= apierr.MinSecretLen || len(long) < apierr.MinSecretLen {
		t.Fatal("the tokens are not on both sides of the minimum")
	}
	e := newEnv(t)
	// errorMessage sends a message through a connection with token to a
	// carrier answering reply, as both POST and GET show it.
	errorMessage := func(t *testing.T, token string, reply *twiliotest.Reply, private bool) string {
		t.Helper()
		carrier := twiliotest.New(t, twiliotest.Options{AuthToken: token, Reply: func(twiliotest.Message) twiliotest.Reply {
			if reply == nil {
				return twiliotest.Reply{}
			}
			return *reply
		}})
		conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": carrier.AccountSID,
			"authToken": token, "fromNumber": "+14155550100", "baseUrl": carrier.URL})
		e.server.Messages.HTTPClient = nil
		if private {
			e.server.Messages.HTTPClient = webhook.GuardedClient(false, 5*time.Second)
		}
		m := e.create("/v1/messages", map[string]any{"to": "+14155550199", "messagingConnectionId": conn["id"], "body": "hi"})
		got := e.must(http.StatusOK, "GET", "/v1/messages/"+m["id"].(string), nil).Data(t)
		if m["status"] != "failed" || got["status"] != "failed" || got["errorMessage"] != m["errorMessage"] {
			t.Fatalf("sent %v; stored %v", m, got)
		}
		msg := fmt.Sprint(m["errorMessage"])
		if markInWord.MatchString(msg) || strings.Contains(msg, long) {
			t.Errorf("errorMessage %q", msg)
		}
		return msg
	}
	quoting := &twiliotest.Reply{Status: 400, Code: 21211, Message: "To number not valid for the account's auth token " + long + " or t"}

	t.Run("short token, carrier's text", func(t *testing.T) {
		quoting := *quoting
		quoting.Message = "To number not valid for the account's auth token t"
		if got, want := errorMessage(t, "t", &quoting, false), "twilio: message rejected: 400 Bad Request: error 21211"; got != want {
			t.Errorf("errorMessage %q, want %q", got, want)
		}
	})
	t.Run("short token, refused", func(t *testing.T) {
		refused := &twiliotest.Reply{Status: 401, Code: 20003, Message: "Authenticate: the token t is not valid"}
		if got, want := errorMessage(t, "t", refused, false), "twilio: unavailable: 401 Unauthorized: credentials refused: error 20003"; got != want {
			t.Errorf("errorMessage %q, want %q", got, want)
		}
	})
	t.Run("long token, carrier's text", func(t *testing.T) {
		want := "twilio: message rejected: 400 Bad Request: error 21211: To number not valid for the account's auth token [redacted] or t"
		if got := errorMessage(t, long, quoting, false); got != want {
			t.Errorf("errorMessage %q, want %q", got, want)
		}
	})
	// The reported case: the carrier's address is private. Nothing was
	// sent, so the refusal cannot quote the token and shows whole.
	for _, token := range []string{"t", long} {
		t.Run("private address, token "+token[:1], func(t *testing.T) {
			got := errorMessage(t, token, nil, true)
			if !strings.Contains(got, "the operator can allow such addresses with --allow-private-webhooks") || strings.Contains(got, "[redacted]") {
				t.Errorf("errorMessage %q", got)
			}
		})
	}
}
