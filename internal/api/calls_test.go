package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
)

func callBody(agentID any, to string, extra map[string]any) map[string]any {
	b := map[string]any{"agentId": agentID, "toNumber": to, "fromNumber": "+14155550100"}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func TestCreateCall(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(map[string]any{
		"name": "Dentist", "promptTemplate": "You call {{customer}} about {{topic}} at {{current_time}}.",
		"firstMessage": "Hi {{customer}}, this is {{clinic}}.", "timezone": "Europe/Paris", "language": "fr",
		"defaultVariables": map[string]any{"clinic": "Smile", "topic": "a checkup", "customer": "there"},
	})
	c := e.must(http.StatusCreated, "POST", "/v1/calls", callBody(a["id"], "+33612345678", map[string]any{
		"variables": map[string]any{"customer": "Ada", "visits": 3}, "callerIdName": "Smile Clinic",
	})).Data(t)
	if c["status"] != "INITIATED" || c["direction"] != "OUTBOUND" || c["agentName"] != "Dentist" || c["agentCallerIdName"] != "Smile Clinic" {
		t.Errorf("call = %v", c)
	}
	vars := c["variables"].(map[string]any)
	want := map[string]any{"customer": "Ada", "visits": float64(3), "clinic": "Smile", "topic": "a checkup", "direction": "outbound",
		"user_number": "+33612345678", "agent_number": "+14155550100", "timezone": "Europe/Paris", "language": "fr"}
	for k, v := range want {
		if vars[k] != v {
			t.Errorf("variables[%s] = %v, want %v", k, vars[k], v)
		}
	}
	if _, err := time.Parse(call.CurrentTimeLayout, vars["current_time"].(string)); err != nil {
		t.Errorf("current_time %q: %v", vars["current_time"], err)
	}
	for _, k := range []string{"recordingUrl", "hangupCause", "startedAt", "endedAt", "durationSeconds", "summary", "preCallWebhookStatus", "postCallWebhookStatus"} {
		if c[k] != nil {
			t.Errorf("%s = %v, want null", k, c[k])
		}
	}
	if c["initiatedAt"] == nil || len(c["transcript"].([]any)) != 0 {
		t.Errorf("initiatedAt %v transcript %v", c["initiatedAt"], c["transcript"])
	}
	got := e.must(http.StatusOK, "GET", "/v1/calls/"+c["id"].(string), nil).Data(t)
	if got["id"] != c["id"] || (got["status"] != "INITIATED" && got["status"] != "RINGING") {
		t.Errorf("GET = %v", got)
	}
}

func TestCreateCallValidation(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(nil)
	disabled := e.createAgent(map[string]any{"status": "disabled"})
	foreign := e.request("POST", "/v1/agents", map[string]any{"name": "x", "promptTemplate": "p"}, e.otherKey).Data(t)
	e.invalid("validation_failed", "POST", "/v1/calls", map[string]any{}, "agentId", "toNumber", "fromNumber")
	for _, bad := range []any{"0190d4c3-0000-7000-8000-000000000000", disabled["id"], foreign["id"], "nope"} {
		e.invalid("validation_failed", "POST", "/v1/calls", callBody(bad, "+14155550101", nil), "agentId")
	}
	for _, n := range []string{"14155550101", "+0155", "+1", "+1234567890123456", ""} {
		e.invalid("validation_failed", "POST", "/v1/calls", callBody(a["id"], n, map[string]any{"fromNumber": n}), "toNumber", "fromNumber")
	}
	e.invalid("validation_failed", "POST", "/v1/calls", callBody(a["id"], "+14155550101", map[string]any{"callerIdName": ""}), "callerIdName")
	e.invalid("validation_failed", "POST", "/v1/calls", callBody(a["id"], "+14155550101", map[string]any{"callerIdName": strings.Repeat("n", 16)}), "callerIdName")
	e.must(http.StatusCreated, "POST", "/v1/calls", callBody(a["id"], "+14155550101", map[string]any{"callerIdName": strings.Repeat("ñ", 15)}))
	e.must(http.StatusCreated, "POST", "/v1/calls", callBody(a["id"], "+123456789012345", map[string]any{"callerIdName": "A"}))
	e.invalid("invalid_json", "POST", "/v1/calls", callBody(a["id"], "+14155550101", map[string]any{"variables": []any{1}}), "variables")
	e.invalid("invalid_json", "POST", "/v1/calls", callBody(a["id"], "+14155550101", map[string]any{"skipQueue": "yes"}), "skipQueue")
	e.invalid("invalid_json", "POST", "/v1/calls", callBody(a["id"], "+14155550101", map[string]any{"status": "COMPLETED"}), "status")
	if n := len(e.must(http.StatusOK, "GET", "/v1/calls", nil).List(t)); n != 2 {
		t.Errorf("%d calls stored, want the 2 valid ones", n)
	}
}

func TestConcurrencyLimitAndQueue(t *testing.T) {
	e := newEnv(t)
	e.must(http.StatusOK, "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 2})
	a := e.createAgent(nil)
	for i := range 2 {
		if c := e.create("/v1/calls", callBody(a["id"], fmt.Sprintf("+1415555010%d", i), map[string]any{"skipQueue": true})); c["status"] != "INITIATED" {
			t.Fatalf("call %d = %v", i, c["status"])
		}
	}
	r := e.do("POST", "/v1/calls", callBody(a["id"], "+14155550109", map[string]any{"skipQueue": true}))
	if r.Status != http.StatusTooManyRequests || r.ErrorCode(t) != "concurrency_limit_reached" {
		t.Fatalf("skipQueue at the limit = %d %s", r.Status, r.Body)
	}
	queued := e.create("/v1/calls", callBody(a["id"], "+14155550110", nil))
	if queued["status"] != "QUEUED" || queued["initiatedAt"] != nil {
		t.Fatalf("call at the limit = %v", queued["status"])
	}
	if total := e.must(http.StatusOK, "GET", "/v1/calls", nil).JSON(t)["total"]; total != float64(3) {
		t.Errorf("total = %v: the 429 stored something", total)
	}
	// Freeing a line dispatches the queued call.
	first := e.must(http.StatusOK, "GET", "/v1/calls?sortDir=asc&pageSize=1", nil).List(t)[0]
	e.must(http.StatusOK, "POST", "/v1/calls/"+first["id"].(string)+"/cancel", nil)
	waitCall(t, e, queued["id"].(string), "RINGING") // dispatched and dialing
}

func TestCancelCall(t *testing.T) {
	e := newEnv(t)
	e.must(http.StatusOK, "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 1})
	a := e.createAgent(map[string]any{"postCallWebhookUrl": "https://hooks.example.com/post"})
	live := e.create("/v1/calls", callBody(a["id"], "+14155550101", nil))
	queued := e.create("/v1/calls", callBody(a["id"], "+14155550102", nil))
	c := e.must(http.StatusOK, "POST", "/v1/calls/"+queued["id"].(string)+"/cancel", nil).Data(t)
	if c["status"] != "CANCELED" || c["hangupCause"] != "API_ENDED" || c["endedAt"] == nil || c["durationSeconds"] != nil {
		t.Errorf("canceled queued call = %v", c)
	}
	c = e.must(http.StatusOK, "POST", "/v1/calls/"+live["id"].(string)+"/cancel", nil).Data(t)
	if c["status"] != "CANCELED" {
		t.Errorf("canceled ringing call = %v", c["status"])
	}
	if r := e.do("POST", "/v1/calls/"+live["id"].(string)+"/cancel", nil); r.Status != http.StatusConflict || r.ErrorCode(t) != "conflict" {
		t.Errorf("cancel twice = %d %s", r.Status, r.Body)
	}
	e.must(http.StatusNotFound, "POST", "/v1/calls/0190d4c3-0000-7000-8000-000000000000/cancel", nil)
	// Each end delivers the post-call webhook with the call record.
	for range 2 {
		select {
		case body := <-e.posted:
			var rec map[string]any
			json.Unmarshal(body, &rec)
			if rec["status"] != "CANCELED" || rec["transcript"] == nil || rec["postCallWebhookStatus"] != nil {
				t.Errorf("post-call body = %s", body)
			}
			if _, has := rec["postCallWebhookStatus"]; has {
				t.Error("post-call body carries its own webhook status")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no post-call delivery")
		}
	}
	if got := waitCall(t, e, live["id"].(string), "CANCELED"); got["postCallWebhookStatus"] == nil {
		// delivery status is recorded right after delivery
		deadline := time.Now().Add(10 * time.Second)
		for got["postCallWebhookStatus"] == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
			got = e.must(http.StatusOK, "GET", "/v1/calls/"+live["id"].(string), nil).Data(t)
		}
		if got["postCallWebhookStatus"] != "sent" {
			t.Errorf("postCallWebhookStatus = %v", got["postCallWebhookStatus"])
		}
	}
}

func TestAnsweredCallEnds(t *testing.T) {
	d := &calltest.Dialer{}
	e := newEnv(t, withDialer(d))
	a := e.createAgent(nil)
	c := e.create("/v1/calls", callBody(a["id"], "+14155550101", nil))
	dialed := <-d.Dialed()
	if dialed.Req.ToNumber != "+14155550101" || dialed.Req.FromNumber != "+14155550100" {
		t.Errorf("dialed %+v", dialed.Req)
	}
	dialed.Ring()
	waitCall(t, e, c["id"].(string), "RINGING")
	line := dialed.Answer()
	waitCall(t, e, c["id"].(string), "IN_PROGRESS")
	line.RemoteHangup()
	got := waitCall(t, e, c["id"].(string), "COMPLETED")
	if got["hangupCause"] != "USER_ENDED" || got["startedAt"] == nil || got["durationSeconds"] == nil || got["postCallWebhookStatus"] == nil && false {
		t.Errorf("ended call = %v", got)
	}
	if got["postCallWebhookStatus"] != "skipped" && got["postCallWebhookStatus"] != nil {
		t.Errorf("agent without URL: postCallWebhookStatus = %v", got["postCallWebhookStatus"])
	}
}

func waitCall(t *testing.T, e *env, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := e.must(http.StatusOK, "GET", "/v1/calls/"+id, nil).Data(t)
		if c["status"] == status {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s is %v, want %s", id, c["status"], status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestListCalls(t *testing.T) {
	d := &calltest.Dialer{Script: func(req call.DialRequest) calltest.Script {
		if req.ToNumber == "+14155550999" {
			return calltest.Script{Fail: &call.DialError{Cause: call.CauseBusy, Message: "486"}}
		}
		return calltest.Script{}
	}}
	e := newEnv(t, withDialer(d))
	folder := e.create("/v1/folders", map[string]any{"name": "F"})
	trunk := e.create("/v1/sip-trunks", map[string]any{"friendlyName": "T", "host": "sip.example.com"})
	inFolder := e.createAgent(map[string]any{"name": "Sales Bot", "folderId": folder["id"], "sipTrunkId": trunk["id"]})
	noFolder := e.createAgent(map[string]any{"name": "Support Bot"})
	gone := e.createAgent(map[string]any{"name": "Temp Bot"})
	mk := func(agent map[string]any, to string) map[string]any {
		time.Sleep(2 * time.Millisecond)
		return e.create("/v1/calls", callBody(agent["id"], to, nil))
	}
	c1 := mk(inFolder, "+14155550001")
	c2 := mk(noFolder, "+14155550002")
	c3 := mk(gone, "+14155550003")
	c4 := mk(noFolder, "+14155550999") // fails busy
	waitCall(t, e, c4["id"].(string), "FAILED")
	e.must(http.StatusNoContent, "DELETE", "/v1/agents/"+gone["id"].(string), nil)
	e.must(http.StatusOK, "POST", "/v1/calls/"+c2["id"].(string)+"/cancel", nil)
	from := c1["createdAt"].(string)

	ids := func(q string) []string {
		t.Helper()
		var out []string
		for _, c := range e.must(http.StatusOK, "GET", "/v1/calls?"+q, nil).List(t) {
			out = append(out, c["id"].(string))
		}
		return out
	}
	id := func(c map[string]any) string { return c["id"].(string) }
	cases := []struct {
		q    string
		want []string
	}{
		{"", []string{id(c4), id(c3), id(c2), id(c1)}},
		{"sortDir=asc", []string{id(c1), id(c2), id(c3), id(c4)}},
		{"status=FAILED", []string{id(c4)}},
		{"status=CANCELED,FAILED&sortDir=asc", []string{id(c2), id(c4)}},
		{"direction=OUTBOUND&agentId=" + id(noFolder) + "&sortDir=asc", []string{id(c2), id(c4)}},
		{"direction=INBOUND", nil},
		{"folderId=" + id(folder), []string{id(c1)}},
		{"folderId=none&sortDir=asc", []string{id(c2), id(c4)}}, // the deleted agent's call is not returned
		{"sipTrunkId=" + id(trunk), []string{id(c1)}},
		{"toNumber=%2B14155550003", []string{id(c3)}},
		{"toNumber=+14155550003", []string{id(c3)}}, // an unencoded + arrives as a space
		{"fromNumber=%2B14155550100&pageSize=1", []string{id(c4)}},
		{"q=temp+bot", []string{id(c3)}}, // agent name, kept after the agent is deleted
		{"q=0999", []string{id(c4)}},     // a number
		{"createdFrom=" + url.QueryEscape(from) + "&createdTo=" + url.QueryEscape(from), []string{id(c1)}},
		{"createdFrom=2100-01-01T00:00:00Z", nil},
		{"sortBy=status&sortDir=asc", []string{id(c2), id(c4), id(c1), id(c3)}}, // CANCELED < FAILED < INITIATED
	}
	for _, c := range cases {
		if got := ids(c.q); !slices.Equal(got, c.want) {
			t.Errorf("GET /v1/calls?%s = %v, want %v", c.q, got, c.want)
		}
	}
	// Nulls sort last both ways: only c2's and c4's ended.
	for _, dir := range []string{"asc", "desc"} {
		got := ids("sortBy=endedAt&sortDir=" + dir)
		if !slices.Contains(got[:2], id(c2)) || !slices.Contains(got[:2], id(c4)) {
			t.Errorf("sortBy=endedAt&sortDir=%s = %v: nulls not last", dir, got)
		}
	}
	m := e.must(http.StatusOK, "GET", "/v1/calls?pageSize=3&page=2", nil).JSON(t)
	if m["total"] != float64(4) || m["hasNextPage"] != false || len(m["data"].([]any)) != 1 {
		t.Errorf("page 2 = %v", m)
	}
	for _, q := range []string{"status=DONE", "status=FAILED,", "direction=out", "agentId=x", "sipTrunkId=1", "folderId=x",
		"fromNumber=555", "createdFrom=yesterday", "createdTo=2026-01-01", "q=" + strings.Repeat("q", 65), "sortBy=agentName",
		"minimal=true", "createdFrom=2026-02-01T00:00:00Z&createdTo=2026-01-01T00:00:00Z"} {
		r := e.do("GET", "/v1/calls?"+q, nil)
		if r.Status != http.StatusBadRequest || r.ErrorCode(t) != "validation_failed" {
			t.Errorf("GET /v1/calls?%s = %d", q, r.Status)
		}
	}
	e.must(http.StatusOK, "GET", "/v1/calls?q="+strings.Repeat("q", 64), nil)

	// batch-get: order asked, each once, minimal omits the heavy fields.
	list := e.must(http.StatusOK, "POST", "/v1/calls/batch-get", map[string]any{"ids": []any{id(c3), id(c1), id(c3), "0190d4c3-0000-7000-8000-000000000000"}}).List(t)
	if len(list) != 2 || list[0]["id"] != id(c3) || list[1]["id"] != id(c1) || list[0]["transcript"] == nil {
		t.Errorf("batch-get = %v", list)
	}
	min := e.must(http.StatusOK, "POST", "/v1/calls/batch-get", map[string]any{"ids": []any{id(c1)}, "minimal": true}).List(t)[0]
	for _, k := range []string{"transcript", "summary", "metrics", "variables"} {
		if _, ok := min[k]; ok {
			t.Errorf("minimal call has %s", k)
		}
	}
	if min["status"] == nil || min["agentName"] != "Sales Bot" {
		t.Errorf("minimal call = %v", min)
	}
	e.invalid("validation_failed", "POST", "/v1/calls/batch-get", map[string]any{"ids": []any{}}, "ids")
}
