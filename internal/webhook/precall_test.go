package webhook

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

var inbound = PreCallPayload{AgentID: "a-1", FromNumber: "+15550100", ToNumber: "+15550199"}

func TestPreCallVariables(t *testing.T) {
	rc := newReceiver(t, status(http.StatusOK,
		`{"variables":{"name":"Ada","big":12345678901234567890,"ratio":0.5,"vip":true,"none":null,"tags":["a",1],"current_time":"noon"},"other":1}`))
	s := loopbackSender(t)
	vars, status := s.PreCall(t.Context(), rc.URL, "", inbound)
	if status != model.WebhookSent {
		t.Fatalf("status %q, want sent", status)
	}
	want := map[string]any{
		"name": "Ada", "big": json.Number("12345678901234567890"), "ratio": json.Number("0.5"),
		"vip": true, "none": nil, "tags": []any{"a", json.Number("1")}, "current_time": "noon",
	}
	if !reflect.DeepEqual(vars, want) {
		t.Errorf("variables %#v, want %#v", vars, want)
	}
	req := rc.only(t)
	if got := req.header.Get(HeaderEvent); got != EventPreCall {
		t.Errorf("X-Parley-Event %q", got)
	}
	if want := `{"event":"pre_call","agentId":"a-1","fromNumber":"+15550100","toNumber":"+15550199","dialedAgentId":null}`; string(req.body) != want {
		t.Errorf("payload %s, want %s", req.body, want)
	}
	if req.header.Get(HeaderSignature) != "" {
		t.Error("signed without a secret")
	}
}

func TestPreCallPayloadDialedAgent(t *testing.T) {
	rc := newReceiver(t, status(http.StatusOK, `{}`))
	s := loopbackSender(t)
	p := inbound
	p.DialedAgentID = "a-1"
	if _, status := s.PreCall(t.Context(), rc.URL, "whsec_1", p); status != model.WebhookSent {
		t.Fatalf("status %q", status)
	}
	req := rc.only(t)
	if want := `{"event":"pre_call","agentId":"a-1","fromNumber":"+15550100","toNumber":"+15550199","dialedAgentId":"a-1"}`; string(req.body) != want {
		t.Errorf("payload %s, want %s", req.body, want)
	}
	if err := Verify("whsec_1", req.header.Get(HeaderSignature), req.body, time.Now(), 0); err != nil {
		t.Errorf("signature: %v", err)
	}
}

func TestPreCallWithoutVariables(t *testing.T) {
	for body, want := range map[string]map[string]any{
		`{}`:                      nil,
		`{"variables":null}`:      nil,
		`{"ok":true}`:             nil,
		`{"variables":{}}`:        {},
		` {"variables":{"a":1}} `: {"a": json.Number("1")},
	} {
		rc := newReceiver(t, status(http.StatusOK, body))
		s := loopbackSender(t)
		vars, status := s.PreCall(t.Context(), rc.URL, "", inbound)
		if status != model.WebhookSent || !reflect.DeepEqual(vars, want) || (vars == nil) != (want == nil) {
			t.Errorf("%s: %#v, %q; want %#v, sent", body, vars, status, want)
		}
	}
}

func TestPreCallFailures(t *testing.T) {
	for name, a := range map[string]answer{
		"invalid JSON":      status(http.StatusOK, `{"variables":`),
		"empty body":        status(http.StatusOK, ``),
		"not JSON":          status(http.StatusOK, `hello`),
		"trailing data":     status(http.StatusOK, `{} {}`),
		"array":             status(http.StatusOK, `[{"variables":{}}]`),
		"null":              status(http.StatusOK, `null`),
		"string":            status(http.StatusOK, `"variables"`),
		"variables array":   status(http.StatusOK, `{"variables":[1]}`),
		"variables string":  status(http.StatusOK, `{"variables":"a=1"}`),
		"variables number":  status(http.StatusOK, `{"variables":1}`),
		"NUL in a variable": status(http.StatusOK, `{"variables":{"name":"A\u0000"}}`),
		"NUL in a key":      status(http.StatusOK, `{"variables":{"n\u0000":"A"}}`),
		"lone surrogate":    status(http.StatusOK, `{"variables":{"a":["\ud800"]}}`),
		"invalid UTF-8":     status(http.StatusOK, "{\"variables\":{\"a\":\"\xff\"}}"),
		"variables twice":   status(http.StatusOK, `{"variables":{"a":1},"variables":{"a":2}}`),
		"a variable twice":  status(http.StatusOK, `{"variables":{"a":1,"b":2,"\u0061":3}}`),
		"a key twice deep":  status(http.StatusOK, `{"variables":{"a":[{"b":1,"b":2}]}}`),
		"a key twice aside": status(http.StatusOK, `{"other":{"b":1,"b":2},"variables":{"a":1}}`),
		"server error":      status(http.StatusInternalServerError, `{"variables":{"a":1}}`),
		"not found":         status(http.StatusNotFound, `{"variables":{"a":1}}`),
		"redirect":          status(http.StatusFound, `{"variables":{"a":1}}`),
		"larger than 1 MiB": status(http.StatusOK, `{"variables":{"a":"`+strings.Repeat("x", 1<<20)+`"}}`),
		"timeout":           hang,
		"timeout after 200 (body)": func(rc *receiver, w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"variables":`))
			w.(http.Flusher).Flush()
			hang(rc, w, r)
		},
	} {
		t.Run(name, func(t *testing.T) {
			rc := newReceiver(t, a)
			s := loopbackSender(t)
			s.preCallTimeout = 200 * time.Millisecond
			vars, status := s.PreCall(t.Context(), rc.URL, "", inbound)
			if status != model.WebhookFailed || vars != nil {
				t.Errorf("%#v, %q; want no variables, failed", vars, status)
			}
			rc.only(t)
		})
	}
}

func TestPreCallSkipped(t *testing.T) {
	s := newSender(t, Options{})
	if vars, status := s.PreCall(t.Context(), "", "whsec_1", inbound); status != model.WebhookSkipped || vars != nil {
		t.Errorf("%#v, %q; want skipped", vars, status)
	}
}

// An answer that gives a key twice is malformed, and the error names the
// key: the receiver's own reading may keep the first.
func TestPreCallDuplicateKeyNamed(t *testing.T) {
	_, err := preCallVariables(Result{Sent: true, Body: []byte(`{"variables":{"tier":"gold","tier":"basic"}}`)})
	if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "variables.tier: duplicate key") {
		t.Errorf("err = %v, want ErrResponse naming variables.tier", err)
	}
}
