package call

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStateMachine(t *testing.T) {
	all := []string{model.CallQueued, model.CallInitiated, model.CallRinging, model.CallInProgress,
		model.CallCompleted, model.CallTransferred, model.CallFailed, model.CallCanceled}
	legal := map[[2]string]bool{}
	for from, tos := range transitions {
		for _, to := range tos {
			legal[[2]string{from, to}] = true
		}
	}
	for _, from := range all {
		for _, to := range all {
			c := model.Call{ID: "c", Status: from}
			err := Apply(&c, Change{To: to, HangupCause: CauseUserEnded}, time.Now())
			var illegal *IllegalTransition
			if legal[[2]string{from, to}] {
				if err != nil || c.Status != to {
					t.Errorf("%s → %s refused: %v", from, to, err)
				}
			} else if !errors.As(err, &illegal) || c.Status != from {
				t.Errorf("%s → %s allowed (status now %s)", from, to, c.Status)
			}
		}
	}
	// Final statuses go nowhere; answered calls never go back to ringing.
	for _, final := range []string{model.CallCompleted, model.CallTransferred, model.CallFailed, model.CallCanceled} {
		if len(transitions[final]) != 0 || !IsFinal(final) || IsLive(final) {
			t.Errorf("%s is not final", final)
		}
	}
}

func TestLifecycleTimes(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	c := model.Call{ID: "c", Status: model.CallQueued, CreatedAt: t0}
	steps := []struct {
		to string
		at time.Duration
	}{{model.CallInitiated, time.Second}, {model.CallRinging, 2 * time.Second}, {model.CallInProgress, 5 * time.Second}, {model.CallCompleted, 67500 * time.Millisecond}}
	for _, s := range steps {
		if err := Apply(&c, Change{To: s.to, HangupCause: CauseUserEnded}, t0.Add(s.at)); err != nil {
			t.Fatal(err)
		}
	}
	if !c.InitiatedAt.Equal(t0.Add(time.Second)) || !c.StartedAt.Equal(t0.Add(5*time.Second)) || !c.EndedAt.Equal(t0.Add(67500*time.Millisecond)) {
		t.Errorf("times %v %v %v", c.InitiatedAt, c.StartedAt, c.EndedAt)
	}
	if *c.DurationSeconds != 62 || *c.HangupCause != CauseUserEnded {
		t.Errorf("duration %d cause %s", *c.DurationSeconds, *c.HangupCause)
	}
	never := model.Call{ID: "n", Status: model.CallRinging}
	Apply(&never, Change{To: model.CallFailed, HangupCause: CauseNoAnswer, ErrorMessage: "no answer"}, t0)
	if never.DurationSeconds != nil || never.StartedAt != nil || *never.ErrorMessage != "no answer" {
		t.Errorf("unanswered: %+v", never)
	}
}

func TestVariablesPrecedence(t *testing.T) {
	tz, lang := "America/New_York", "es-MX"
	a := model.Agent{Config: model.AgentConfig{Timezone: &tz, Language: &lang,
		DefaultVariables: map[string]any{"greeting": "hola", "timezone": "ignored", "plan": "basic"}}}
	now := time.Date(2026, 11, 23, 15, 4, 0, 0, time.UTC)
	sys := SystemVariables(a, model.Outbound, "+14155550100", "+14155550199", now)
	vars := Merge(a.Config.DefaultVariables, sys, map[string]any{"plan": "gold", "current_time": "override"})
	want := map[string]any{
		"greeting": "hola", "plan": "gold", "timezone": "America/New_York", "language": "es-MX",
		"direction": "outbound", "user_number": "+14155550199", "agent_number": "+14155550100", "current_time": "override",
	}
	for k, v := range want {
		if vars[k] != v {
			t.Errorf("%s = %v, want %v", k, vars[k], v)
		}
	}
	if sys["current_time"] != "Monday, November 23, 2026 10:04 AM EST" {
		t.Errorf("current_time = %v", sys["current_time"])
	}
	in := SystemVariables(model.Agent{}, model.Inbound, "+14155550199", "+14155550100", now)
	if in["user_number"] != "+14155550199" || in["agent_number"] != "+14155550100" || in["direction"] != "inbound" || in["timezone"] != "UTC" || in["language"] != "en" {
		t.Errorf("inbound system variables %v", in)
	}
}

func TestRender(t *testing.T) {
	vars := map[string]any{"name": "Ada", "Name": "ADA", "n": 3.5, "ok": true, "obj": map[string]any{"a": 1}, "nil": nil}
	cases := map[string]string{
		"Hi {{name}}":                   "Hi Ada",
		"Hi {{Name}}, {{ name }}":       "Hi ADA, Ada",
		"{{n}} {{ok}} {{obj}}":          `3.5 true {"a":1}`,
		"missing: [{{nope}}] [{{nil}}]": "missing: [] []",
		"{{ not closed":                 "{{ not closed",
		"{name} {{{name}}}":             "{name} {Ada}",
	}
	for tmpl, want := range cases {
		if got := Render(tmpl, vars); got != want {
			t.Errorf("Render(%q) = %q, want %q", tmpl, got, want)
		}
	}
}

func TestRecordShape(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	c := model.Call{ID: "c", OrgID: "o", AgentID: "a", AgentName: "A", Direction: model.Outbound, Status: model.CallQueued,
		FromNumber: "+1", ToNumber: "+2", CreatedAt: now, UpdatedAt: now, Summary: nil}
	full := decode(t, NewRecord(c, false))
	for _, k := range []string{"id", "organizationId", "agentId", "agentName", "sipTrunkId", "direction", "status", "fromNumber", "toNumber",
		"agentCallerIdName", "recordingUrl", "hangupCause", "errorMessage", "variables", "transcript", "summary", "metrics",
		"initiatedAt", "startedAt", "endedAt", "durationSeconds", "createdAt", "updatedAt", "preCallWebhookStatus", "postCallWebhookStatus",
		"campaignId"} {
		if _, ok := full[k]; !ok {
			t.Errorf("record lacks %s", k)
		}
	}
	if len(full) != 26 || full["createdAt"] != "2026-11-23T10:00:00.000Z" {
		t.Errorf("record = %v", full)
	}
	min := decode(t, NewRecord(c, true))
	for _, k := range []string{"transcript", "summary", "metrics", "variables"} {
		if _, ok := min[k]; ok {
			t.Errorf("minimal record has %s", k)
		}
	}
	body, _ := PostCallBody(c)
	if strings.Contains(string(body), "WebhookStatus") || !strings.Contains(string(body), `"summary":null`) {
		t.Errorf("post-call body %s", body)
	}
}

func decode(t *testing.T, r Record) map[string]any {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}
