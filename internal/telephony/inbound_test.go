package telephony

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/siptest"
	"github.com/parley-voice/parley/internal/store"
)

// preCallServer answers pre-call webhooks with variables and keeps the
// bodies it got.
func preCallServer(t *testing.T, vars map[string]any) (*httptest.Server, chan map[string]any) {
	got := make(chan map[string]any, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		got <- body
		_ = json.NewEncoder(w).Encode(map[string]any{"variables": vars})
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestInboundToAnOwnedNumber(t *testing.T) {
	siptest.RequireSipp(t)
	e := newEnv(t)
	hook, bodies := preCallServer(t, map[string]any{"name": "Ada", "current_time": "teatime"})
	a := e.agent(func(a *model.Agent) { a.Config.PreCallWebhookURL = &hook.URL })
	e.number("+15551230000", &a.ID, nil)

	uac := siptest.UAC(t, "uac_call", e.ua.Addr(), siptest.Options{Service: "15551230000", Keys: map[string]string{"from": "+15559870000", "hold": "1500"}})
	if err := uac.Wait(); err != nil {
		t.Fatal(err)
	}
	body := <-bodies
	if body["event"] != "pre_call" || body["agentId"] != a.ID || body["fromNumber"] != "+15559870000" ||
		body["toNumber"] != "+15551230000" || body["dialedAgentId"] != nil {
		t.Errorf("pre-call body %v", body)
	}
	cs := e.calls()
	if len(cs) != 1 {
		t.Fatalf("%d calls recorded, want 1", len(cs))
	}
	c := e.waitFinal(cs[0].ID)
	wantEnd(t, c, model.CallCompleted, call.CauseUserEnded)
	if c.Direction != model.Inbound || c.FromNumber != "+15559870000" || c.ToNumber != "+15551230000" || c.DialedAgentID != nil {
		t.Errorf("record %s from %s to %s dialed %v", c.Direction, c.FromNumber, c.ToNumber, c.DialedAgentID)
	}
	if c.Variables["name"] != "Ada" || c.Variables["current_time"] != "teatime" || c.Variables["direction"] != "inbound" || c.Variables["user_number"] != "+15559870000" {
		t.Errorf("variables %v", c.Variables)
	}
	if c.Prompt != "Hello Ada" {
		t.Errorf("prompt %q, want rendered with the webhook's variables", c.Prompt)
	}
	if deref(c.PreCallWebhookStatus) != model.WebhookSent {
		t.Errorf("preCallWebhookStatus %s", deref(c.PreCallWebhookStatus))
	}
	if c.RecordingURL == nil {
		t.Error("no recordingUrl")
	}
}

func TestInboundToAnAgentDirectly(t *testing.T) {
	siptest.RequireSipp(t)
	e := newEnv(t)
	hook, bodies := preCallServer(t, map[string]any{"name": "Grace"})
	a := e.agent(func(a *model.Agent) { a.Config.PreCallWebhookURL = &hook.URL })
	uac := siptest.UAC(t, "uac_call", e.ua.Addr(), siptest.Options{Service: "agent-" + a.ID, Keys: map[string]string{"from": "+15559870000", "hold": "500"}})
	if err := uac.Wait(); err != nil {
		t.Fatal(err)
	}
	if body := <-bodies; body["dialedAgentId"] != a.ID {
		t.Errorf("pre-call dialedAgentId %v, want %s", body["dialedAgentId"], a.ID)
	}
	c := e.waitFinal(e.calls()[0].ID)
	wantEnd(t, c, model.CallCompleted, call.CauseUserEnded)
	if c.DialedAgentID == nil || *c.DialedAgentID != a.ID || c.Variables["name"] != "Grace" {
		t.Errorf("dialedAgentId %v variables %v", c.DialedAgentID, c.Variables)
	}
}

func TestInboundRefusals(t *testing.T) {
	siptest.RequireSipp(t)
	e := newEnv(t)
	disabled := e.agent(func(a *model.Agent) { a.Status = model.AgentDisabled })
	e.number("+15551230001", &disabled.ID, nil)
	e.number("+15551230002", nil, nil)
	allowList := e.trunk("192.0.2.1:5060", func(tr *model.SIPTrunk) { tr.InboundAllowedCIDRs = []string{"192.0.2.0/24"} })
	guarded := e.agent()
	e.number("+15551230003", &guarded.ID, &allowList.ID)

	for _, tc := range []struct {
		name, user, code string
		recorded         bool
	}{
		{"unknown number", "15550000000", "404", false},
		{"unknown agent", "agent-" + model.NewID(), "404", false},
		{"not a number", "sales", "404", false},
		{"disabled agent", "+15551230001", "480", true},
		{"unassigned number", "+15551230002", "480", false},
		{"source not allowed", "+15551230003", "403", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.calls())
			uac := siptest.UAC(t, "uac_reject", e.ua.Addr(), siptest.Options{Service: tc.user, Keys: map[string]string{"code": tc.code, "from": "+15559870000"}})
			if err := uac.Wait(); err != nil {
				t.Fatal(err)
			}
			cs := e.calls()
			if got := len(cs) - before; got != map[bool]int{true: 1, false: 0}[tc.recorded] {
				t.Fatalf("%d call records added", got)
			}
			if tc.recorded {
				wantEnd(t, cs[0], model.CallFailed, call.CauseAgentUnavailable)
			}
		})
	}
}

func TestInboundAtTheConcurrencyLimit(t *testing.T) {
	siptest.RequireSipp(t)
	e := newEnv(t)
	e.org.ConcurrencyLimit = 1
	e.write(func(tx store.Tx) error { return tx.UpdateOrg(e.ctx, &e.org) })
	a := e.agent()
	e.number("+15551230000", &a.ID, nil)
	first := siptest.UAC(t, "uac_call", e.ua.Addr(), siptest.Options{Service: "+15551230000", Keys: map[string]string{"from": "+15559870000", "hold": "3000"}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if cs := e.calls(); len(cs) == 1 && cs[0].Status == model.CallInProgress {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first call was not answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	second := siptest.UAC(t, "uac_reject", e.ua.Addr(), siptest.Options{Service: "+15551230000", Keys: map[string]string{"code": "486", "from": "+15559870001"}})
	if err := second.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err != nil {
		t.Fatal(err)
	}
	cs := e.calls()
	if len(cs) != 2 {
		t.Fatalf("%d calls, want 2", len(cs))
	}
	for _, c := range cs {
		c = e.waitFinal(c.ID)
		if c.FromNumber == "+15559870001" {
			wantEnd(t, c, model.CallFailed, call.CauseBusy)
		} else {
			wantEnd(t, c, model.CallCompleted, call.CauseUserEnded)
		}
	}
}

func TestInboundDigestAuthenticationOnTheTrunk(t *testing.T) {
	siptest.RequireSipp(t)
	e := newEnv(t)
	user := "carrier"
	tr := e.trunk("127.0.0.1:5060", func(tr *model.SIPTrunk) {
		tr.InboundUsername, tr.InboundPassword = &user, e.phone.Box.Seal("t0ps3cret")
	})
	a := e.agent()
	e.number("+15551230000", &a.ID, &tr.ID)

	ok := siptest.UAC(t, "uac_digest", e.ua.Addr(), siptest.Options{Service: "+15551230000",
		Keys: map[string]string{"user": "carrier", "pass": "t0ps3cret", "from": "+15559870000", "hold": "300"}})
	if err := ok.Wait(); err != nil {
		t.Fatalf("the right credentials were refused: %v", err)
	}
	wantEnd(t, e.waitFinal(e.calls()[0].ID), model.CallCompleted, call.CauseUserEnded)

	bad := siptest.UAC(t, "uac_digest", e.ua.Addr(), siptest.Options{Service: "+15551230000",
		Keys: map[string]string{"user": "carrier", "pass": "guess", "from": "+15559870000", "hold": "300"}})
	if err := bad.Wait(); err == nil {
		t.Fatal("a wrong password was let in")
	}
	if n := len(e.calls()); n != 1 {
		t.Errorf("%d call records; a refused caller must leave none", n)
	}
}

// A caller who keeps calling while the organization is at its limit gets
// 486 each time, but one FAILED / BUSY record (and webhook) per source
// and number in the refusal window, not one per INVITE.
func TestRefusalsAtTheLimitRecordedOnce(t *testing.T) {
	siptest.RequireSipp(t)
	e := newEnv(t)
	e.org.ConcurrencyLimit = 1
	e.write(func(tx store.Tx) error { return tx.UpdateOrg(e.ctx, &e.org) })
	a := e.agent()
	e.number("+15551230000", &a.ID, nil)
	e.number("+15551230001", &a.ID, nil)
	first := siptest.UAC(t, "uac_call", e.ua.Addr(), siptest.Options{Service: "+15551230000", Keys: map[string]string{"from": "+15559870000", "hold": "5000"}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if cs := e.calls(); len(cs) == 1 && cs[0].Status == model.CallInProgress {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first call was not answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i, number := range []string{"+15551230000", "+15551230000", "+15551230000", "+15551230001", "+15551230001"} {
		busy := siptest.UAC(t, "uac_reject", e.ua.Addr(), siptest.Options{Service: number, Keys: map[string]string{"code": "486", "from": "+15559870001"}})
		if err := busy.Wait(); err != nil {
			t.Fatalf("INVITE %d: %v", i+1, err)
		}
	}
	if err := first.Wait(); err != nil {
		t.Fatal(err)
	}
	busy := map[string]int{}
	for _, c := range e.calls() {
		if c = e.waitFinal(c.ID); c.HangupCause != nil && *c.HangupCause == call.CauseBusy {
			busy[c.ToNumber]++
		}
	}
	if busy["+15551230000"] != 1 || busy["+15551230001"] != 1 {
		t.Errorf("BUSY records per number %v, want one each", busy)
	}
}
