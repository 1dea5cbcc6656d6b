package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/sms/twilio/twiliotest"
	"github.com/parley-voice/parley/internal/store"
)

func keyed(k string) http.Header { return http.Header{"Idempotency-Key": {k}} }

// countCalls is the number of calls of acme's organization in the store.
func (e *env) countCalls() int {
	e.t.Helper()
	return len(e.must(http.StatusOK, "GET", "/v1/calls?pageSize=100", nil).List(e.t))
}

// Idempotency-Key on POST /calls, on both stores: a retry answers the
// first response byte for byte without a second call, another body is
// 409, another organization's key is its own, and twenty concurrent
// requests with one key place one call and all answer it.
func TestIdempotentCalls(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			e := newEnv(t, engine)
			a := e.createAgent(nil)
			body := callBody(a["id"], "+14155550101", nil)

			first := e.requestWith("POST", "/v1/calls", body, e.key, keyed("order-1"))
			if first.Status != http.StatusCreated {
				t.Fatalf("first: %d %s", first.Status, first.Body)
			}
			// The same body with its fields in another order and spaced
			// differently is the same request.
			reordered := `{ "fromNumber": "+14155550100", "toNumber": "+14155550101", "agentId": "` + a["id"].(string) + `" }`
			again := e.requestWith("POST", "/v1/calls", reordered, e.key, keyed("order-1"))
			if again.Status != http.StatusCreated || !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("retry: %d %q (replayed %q)\nfirst: %s", again.Status, again.Body, again.Header.Get("Idempotent-Replayed"), first.Body)
			}
			if n := e.countCalls(); n != 1 {
				t.Fatalf("%d calls after a retry, want 1", n)
			}

			other := e.requestWith("POST", "/v1/calls", callBody(a["id"], "+14155550102", nil), e.key, keyed("order-1"))
			if other.Status != http.StatusConflict || other.ErrorCode(t) != "conflict" {
				t.Fatalf("another body with the key: %d %s", other.Status, other.Body)
			}

			// Without the key, or with a new one, a call each.
			e.must(http.StatusCreated, "POST", "/v1/calls", body)
			if r := e.requestWith("POST", "/v1/calls", body, e.key, keyed("order-2")); r.Status != http.StatusCreated ||
				r.Data(t)["id"] == first.Data(t)["id"] {
				t.Fatalf("a new key: %d %s", r.Status, r.Body)
			}
			if n := e.countCalls(); n != 3 {
				t.Fatalf("%d calls, want 3", n)
			}

			// The other organization's "order-1" is its own key: its agent
			// is not acme's, so its body is different, and it is no conflict.
			otherAgent := e.request("POST", "/v1/agents", map[string]any{"name": "Globex", "promptTemplate": "Hi"}, e.otherKey).Data(t)
			if r := e.requestWith("POST", "/v1/calls", callBody(otherAgent["id"], "+14155550101", nil), e.otherKey, keyed("order-1")); r.Status != http.StatusCreated {
				t.Fatalf("globex with acme's key: %d %s", r.Status, r.Body)
			}

			// Twenty at once with one key: one call, twenty identical answers.
			const n = 20
			answers := make([]response, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { answers[i] = e.requestWith("POST", "/v1/calls", body, e.key, keyed("burst")) })
			}
			wg.Wait()
			for i, r := range answers {
				if r.Status != http.StatusCreated || !bytes.Equal(r.Body, answers[0].Body) {
					t.Errorf("concurrent request %d: %d %s\nfirst: %s", i, r.Status, r.Body, answers[0].Body)
				}
			}
			if got := e.countCalls(); got != 4 {
				t.Errorf("%d calls after 20 concurrent requests with one key, want 4 (one more)", got)
			}
		})
	}
}

// A bad key is refused and changes nothing; a request that fails stores
// no key, so it may be retried with the same one.
func TestIdempotencyKeyChecks(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(nil)
	body := callBody(a["id"], "+14155550101", nil)
	for _, k := range []string{strings.Repeat("k", 256), "caf\u00e9", "tab\there"} {
		r := e.requestWith("POST", "/v1/calls", body, e.key, keyed(k))
		if r.Status != http.StatusBadRequest || r.ErrorCode(t) != "validation_failed" || !sameSet(r.ErrorFields(t), []string{"Idempotency-Key"}) {
			t.Errorf("key %q: %d %s", k, r.Status, r.Body)
		}
	}
	r := e.requestWith("POST", "/v1/calls", body, e.key, http.Header{"Idempotency-Key": {"a", "b"}})
	if r.Status != http.StatusBadRequest {
		t.Errorf("two keys: %d %s", r.Status, r.Body)
	}
	if n := e.countCalls(); n != 0 {
		t.Fatalf("%d calls after refused keys", n)
	}
	// A key of 255 printable characters is fine.
	if r := e.requestWith("POST", "/v1/calls", body, e.key, keyed(strings.Repeat("~", 255))); r.Status != http.StatusCreated {
		t.Errorf("255-character key: %d %s", r.Status, r.Body)
	}

	bad := callBody(a["id"], "not a number", nil)
	if r := e.requestWith("POST", "/v1/calls", bad, e.key, keyed("retry-me")); r.Status != http.StatusBadRequest {
		t.Fatalf("invalid body: %d %s", r.Status, r.Body)
	}
	if r := e.requestWith("POST", "/v1/calls", body, e.key, keyed("retry-me")); r.Status != http.StatusCreated {
		t.Fatalf("fixed body with the key of a failed request: %d %s", r.Status, r.Body)
	}
}

// A key stored more than 24 hours ago is forgotten: the request places a
// new call.
func TestIdempotencyKeyExpires(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(nil)
	body := callBody(a["id"], "+14155550101", nil)
	first := e.requestWith("POST", "/v1/calls", body, e.key, keyed("fresh"))
	// The same request under a key a day and a minute old (a store cannot
	// age a row, so the test writes one as it was then).
	err := e.store.Update(t.Context(), func(tx store.Tx) error {
		org, err := tx.GetOrgByName(t.Context(), "acme")
		if err != nil {
			return err
		}
		then := model.Now().Add(-model.IdempotencyWindow - time.Minute)
		return tx.PutIdempotencyKey(t.Context(), &model.IdempotencyKey{OrgID: org.ID, Scope: "POST /v1/calls", Key: "old",
			RequestHash: requestHash(mustJSON(t, body)), ResourceID: first.Data(t)["id"].(string), StatusCode: http.StatusCreated,
			Response: first.Body, CreatedAt: then}, then.Add(-time.Second))
	})
	if err != nil {
		t.Fatal(err)
	}
	r := e.requestWith("POST", "/v1/calls", body, e.key, keyed("old"))
	if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" || r.Data(t)["id"] == first.Data(t)["id"] {
		t.Fatalf("an expired key: %d %s (replayed %q)", r.Status, r.Body, r.Header.Get("Idempotent-Replayed"))
	}
	// Used again now, it is remembered again.
	if again := e.requestWith("POST", "/v1/calls", body, e.key, keyed("old")); !bytes.Equal(again.Body, r.Body) {
		t.Fatalf("the renewed key: %d %s, want %s", again.Status, again.Body, r.Body)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Idempotency-Key on POST /messages, on both stores: a retry answers the
// first response (the message as delivered) without texting twice; ten
// at once send one text; another body is 409.
func TestIdempotentMessages(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			carrier := twiliotest.New(t, twiliotest.Options{})
			e := newEnv(t, engine)
			conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": carrier.AccountSID,
				"authToken": carrier.AuthToken, "fromNumber": "+14155550100", "baseUrl": carrier.URL})
			body := map[string]any{"to": "+14155550199", "messagingConnectionId": conn["id"], "body": "Your table is booked."}
			first := e.requestWith("POST", "/v1/messages", body, e.key, keyed("text-1"))
			if first.Status != http.StatusCreated || first.Data(t)["status"] != "sent" {
				t.Fatalf("first: %d %s", first.Status, first.Body)
			}
			again := e.requestWith("POST", "/v1/messages", body, e.key, keyed("text-1"))
			if again.Status != http.StatusCreated || !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("retry: %d %s\nfirst: %s", again.Status, again.Body, first.Body)
			}
			body["body"] = "Another text."
			if r := e.requestWith("POST", "/v1/messages", body, e.key, keyed("text-1")); r.Status != http.StatusConflict {
				t.Fatalf("another body with the key: %d %s", r.Status, r.Body)
			}
			const n = 10
			answers := make([]response, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { answers[i] = e.requestWith("POST", "/v1/messages", body, e.key, keyed("text-2")) })
			}
			wg.Wait()
			for i, r := range answers {
				if r.Status != http.StatusCreated || r.Data(t)["id"] != answers[0].Data(t)["id"] {
					t.Errorf("concurrent request %d: %d %s", i, r.Status, r.Body)
				}
			}
			if got := len(carrier.Messages()); got != 2 {
				t.Errorf("the carrier was asked %d times, want 2 (one per key)", got)
			}
			if got := len(e.must(http.StatusOK, "GET", "/v1/messages", nil).List(t)); got != 2 {
				t.Errorf("%d messages stored, want 2", got)
			}
		})
	}
}
