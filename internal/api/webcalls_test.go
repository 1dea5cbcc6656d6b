package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// fakeWebCalls answers offers as telephony.Phone does at the boundary: a
// web call record of the agent and an answer, or err.
type fakeWebCalls struct {
	st     store.Store
	err    error
	offers []string
}

func (f *fakeWebCalls) WebCall(ctx context.Context, orgID, agentID, offer string) (model.Call, string, error) {
	f.offers = append(f.offers, offer)
	if f.err != nil {
		return model.Call{}, "", f.err
	}
	a, err := store.Read(ctx, f.st, func(tx store.Tx) (model.Agent, error) { return tx.GetAgent(ctx, orgID, agentID) })
	if err != nil {
		return model.Call{}, "", err
	}
	c := call.NewWebCall(a)
	c.Status, c.CreatedAt, c.UpdatedAt = model.CallInitiated, model.Now(), model.Now()
	return c, "v=0\r\nanswer", nil
}

func withWebCalls(f *fakeWebCalls) envOption {
	return func(c *envConfig) { c.WebCalls = f }
}

func TestWebCallAnswersTheOffer(t *testing.T) {
	f := &fakeWebCalls{}
	e := newEnv(t, withWebCalls(f))
	f.st = e.store
	a := e.createAgent(map[string]any{"testVariables": map[string]any{"customer_name": "Tess"}})
	path := "/v1/agents/" + a["id"].(string) + "/web-calls"
	got := e.must(http.StatusCreated, "POST", path, map[string]any{"sdp": "v=0\r\noffer"}).Data(t)
	c, _ := got["call"].(map[string]any)
	if got["sdp"] != "v=0\r\nanswer" || c["fromNumber"] != "web" || c["direction"] != "INBOUND" || c["status"] != "INITIATED" {
		t.Errorf("answer %v", got)
	}
	if vars, _ := c["variables"].(map[string]any); vars["customer_name"] != "Tess" {
		t.Errorf("variables %v, want the test variables", c["variables"])
	}
	if len(f.offers) != 1 || f.offers[0] != "v=0\r\noffer" {
		t.Errorf("offers handed on: %q", f.offers)
	}

	e.invalid("validation_failed", "POST", path, map[string]any{"sdp": " "}, "sdp")
	e.invalid("validation_failed", "POST", path, map[string]any{}, "sdp")
	e.invalid("invalid_json", "POST", path, map[string]any{"sdp": "v=0", "codec": "G722"})
	if r := e.do("POST", path, map[string]any{"sdp": strings.Repeat("a", maxWebCallBody)}); r.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized offer: %d %s", r.Status, r.Body)
	}
	if r := e.do("POST", "/v1/agents/not-an-id/web-calls", map[string]any{"sdp": "v=0"}); r.Status != http.StatusNotFound {
		t.Errorf("malformed agent id: %d", r.Status)
	}
	if r := e.do("POST", "/v1/agents/"+model.NewID()+"/web-calls", map[string]any{"sdp": "v=0"}); r.Status != http.StatusNotFound {
		t.Errorf("unknown agent: %d", r.Status)
	}
	if len(f.offers) != 1 {
		t.Errorf("%d offers reached the service, want the valid one alone", len(f.offers))
	}
}

func TestWebCallRefusalsMapToTheHouseErrors(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{callqueue.ErrConcurrencyLimit, http.StatusTooManyRequests, "concurrency_limit_reached"},
		{invalid.One("sdp", "bad WebRTC offer: the offer has no audio"), http.StatusBadRequest, "validation_failed"},
		{&invalid.Conflict{Message: "the agent is disabled"}, http.StatusConflict, "conflict"},
	} {
		e := newEnv(t, withWebCalls(&fakeWebCalls{err: tc.err}))
		a := e.createAgent(nil)
		r := e.do("POST", "/v1/agents/"+a["id"].(string)+"/web-calls", map[string]any{"sdp": "v=0"})
		if r.Status != tc.status || r.ErrorCode(t) != tc.code {
			t.Errorf("%v: %d %s, want %d %s", tc.err, r.Status, r.Body, tc.status, tc.code)
		}
	}
	// A server without a telephone serves no web calls.
	e := newEnv(t)
	a := e.createAgent(nil)
	r := e.do("POST", "/v1/agents/"+a["id"].(string)+"/web-calls", map[string]any{"sdp": "v=0"})
	if r.Status != http.StatusServiceUnavailable || r.ErrorCode(t) != "unavailable" {
		t.Errorf("no web calls: %d %s", r.Status, r.Body)
	}
}
