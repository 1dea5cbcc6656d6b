package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/webhook"
)

// fullCall has every optional field of a call set.
func fullCall() model.Call {
	t0 := time.Date(2025, 1, 31, 12, 0, 0, 0, time.UTC)
	t1, t2, t3 := t0.Add(time.Second), t0.Add(3*time.Second), t0.Add(63*time.Second)
	s := func(v string) *string { return &v }
	d := 60
	trunk, campaign := model.NewID(), model.NewID()
	return model.Call{
		ID: model.NewID(), OrgID: model.NewID(), AgentID: model.NewID(), AgentName: "Support",
		AgentCallerIDName: s("Acme"), SIPTrunkID: &trunk, Direction: model.Inbound, Status: model.CallCompleted,
		FromNumber: "+14155550100", ToNumber: "+14155550101", CampaignID: &campaign,
		Variables:    map[string]any{"direction": "inbound", "customer": map[string]any{"name": "Ada"}},
		RecordingURL: s("https://parley.example.com/v1/calls/x/recording"), HangupCause: s(call.CauseUserEnded),
		ErrorMessage: s("none"),
		Transcript: []map[string]any{
			{"type": "message", "at": 0.5, "seq": 1, "role": "assistant", "text": "Hi", "turnId": "t1", "isFinal": true},
			{"type": "tool_call", "at": 2.0, "seq": 2, "role": "tool", "turnId": "t2",
				"tool": map[string]any{"name": "end_call", "args": "{}"}, "result": map[string]any{"output": "ok"}},
		},
		Summary:     s("The caller asked about hours."),
		Metrics:     map[string]any{"llm_prompt_tokens": 120, "stt_audio_duration": 12.5},
		InitiatedAt: &t1, StartedAt: &t2, EndedAt: &t3, DurationSeconds: &d,
		PreCallWebhookStatus: s(model.WebhookSent), PostCallWebhookStatus: s(model.WebhookFailed),
		CreatedAt: t0, UpdatedAt: t3,
	}
}

// bareCall is a call just queued.
func bareCall() model.Call {
	t0 := time.Date(2025, 1, 31, 12, 0, 0, 0, time.UTC)
	return model.Call{
		ID: model.NewID(), OrgID: model.NewID(), AgentID: model.NewID(), AgentName: "Support",
		Direction: model.Outbound, Status: model.CallQueued, FromNumber: "+14155550100", ToNumber: "+14155550101",
		Variables: map[string]any{"direction": "outbound"}, CreatedAt: t0, UpdatedAt: t0,
	}
}

func problemBody(code string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": "m"}}
}

func TestContractCallShapes(t *testing.T) {
	c := loadContract(t)
	full, bare := fullCall(), bareCall()
	path := "/v1/calls/" + full.ID
	rec := func(m model.Call, minimal bool) map[string]any {
		b, err := json.Marshal(call.NewRecord(m, minimal))
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	edited := func(edit func(m map[string]any)) map[string]any {
		m := rec(full, false)
		edit(m)
		return map[string]any{"data": m}
	}
	page := func(data ...any) map[string]any {
		return map[string]any{"data": append([]any{}, data...), "page": 1, "pageSize": 25, "total": len(data), "hasNextPage": false}
	}
	create := map[string]any{"agentId": full.AgentID, "toNumber": "+14155550101", "fromNumber": "+14155550100"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range create {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	accepted := map[string]exchange{
		"full call":   {method: "GET", target: path, status: 200, respBody: single{rec(full, false)}},
		"queued call": {method: "GET", target: path, status: 200, respBody: single{rec(bare, false)}},
		"created": {method: "POST", target: "/v1/calls", status: 201, respBody: single{rec(bare, false)},
			reqBody: with(map[string]any{"variables": map[string]any{"n": 1}, "callerIdName": "Acme", "skipQueue": true})},
		"created with nulls": {method: "POST", target: "/v1/calls", status: 201, respBody: single{rec(bare, false)},
			reqBody: with(map[string]any{"variables": nil, "callerIdName": nil})},
		"list": {method: "GET", status: 200, respBody: page(rec(full, false), rec(bare, false)),
			target: "/v1/calls?status=CANCELED,FAILED&sortBy=endedAt&toNumber=+14155550101&folderId=none&createdFrom=2025-01-31T12:00:00.000Z&q=ada"},
		"batch": {method: "POST", target: "/v1/calls/batch-get", status: 200,
			reqBody: map[string]any{"ids": []string{full.ID, bare.ID}}, respBody: single{[]any{rec(full, false), rec(bare, false)}}},
		"minimal batch": {method: "POST", target: "/v1/calls/batch-get", status: 200,
			reqBody: map[string]any{"ids": []string{full.ID}, "minimal": true}, respBody: single{[]any{rec(full, true), rec(bare, true)}}},
		"canceled":     {method: "POST", target: path + "/cancel", status: 200, respBody: single{rec(full, false)}},
		"cancel ended": {method: "POST", target: path + "/cancel", status: 409, respBody: problemBody("conflict")},
		"at the limit": {method: "POST", target: "/v1/calls", reqBody: create, status: 429,
			respBody: problemBody("concurrency_limit_reached")},
		"rate limited": {method: "POST", target: "/v1/calls", reqBody: create, status: 429,
			respBody: problemBody("rate_limited"), header: http.Header{"Retry-After": {"2"}}},
	}
	for name, e := range accepted {
		t.Run("accepts "+name, func(t *testing.T) {
			t.Parallel()
			for _, msg := range e.run(t, c) {
				t.Error(msg)
			}
		})
	}

	drifted := map[string]exchange{
		"call without transcript": {method: "GET", target: path, status: 200,
			respBody: edited(func(m map[string]any) { delete(m, "transcript") })},
		"minimal call where a full one is due": {method: "GET", target: path, status: 200,
			respBody: single{rec(full, true)}},
		"half-minimal call in a batch": {method: "POST", target: "/v1/calls/batch-get", status: 200,
			reqBody:  map[string]any{"ids": []string{full.ID}},
			respBody: map[string]any{"data": []any{edited(func(m map[string]any) { delete(m, "summary") })["data"]}}},
		"unset field omitted instead of null": {method: "GET", target: path, status: 200,
			respBody: edited(func(m map[string]any) { delete(m, "recordingUrl") })},
		"webhook status omitted": {method: "GET", target: path, status: 200,
			respBody: edited(func(m map[string]any) { delete(m, "postCallWebhookStatus") })},
		"call with an extra key": {method: "GET", target: path, status: 200,
			respBody: edited(func(m map[string]any) { m["prompt"] = "secret" })},
		"out-of-enum status": {method: "GET", target: path, status: 200,
			respBody: edited(func(m map[string]any) { m["status"] = "ENDED" })},
		"lower-case direction": {method: "GET", target: path, status: 200,
			respBody: edited(func(m map[string]any) { m["direction"] = "inbound" })},
		"out-of-enum webhook status": {method: "GET", target: path, status: 200,
			respBody: edited(func(m map[string]any) { m["preCallWebhookStatus"] = "ok" })},
		"null transcript": {method: "GET", target: path, status: 200,
			respBody: edited(func(m map[string]any) { m["transcript"] = nil })},
		"duration as a string": {method: "GET", target: path, status: 200,
			respBody: edited(func(m map[string]any) { m["durationSeconds"] = "60" })},
		"unpaged list": {method: "GET", target: "/v1/calls", status: 200,
			respBody: single{[]any{rec(full, false)}}},
		"minimal call in a list": {method: "GET", target: "/v1/calls", status: 200,
			respBody: page(rec(full, true))},
		"cancel answering 201": {method: "POST", target: path + "/cancel", status: 201,
			respBody: single{rec(full, false)}},
		"wrong 429 code": {method: "POST", target: "/v1/calls", reqBody: create, status: 429,
			respBody: problemBody("conflict")},
		"accepted call to a non-E.164 number": {method: "POST", target: "/v1/calls", status: 201,
			reqBody: with(map[string]any{"toNumber": "14155550101"}), respBody: single{rec(bare, false)}},
		"accepted call with an unknown key": {method: "POST", target: "/v1/calls", status: 201,
			reqBody: with(map[string]any{"status": "QUEUED"}), respBody: single{rec(bare, false)}},
		"accepted long callerIdName": {method: "POST", target: "/v1/calls", status: 201,
			reqBody: with(map[string]any{"callerIdName": strings.Repeat("n", 16)}), respBody: single{rec(bare, false)}},
		"accepted unknown status filter": {method: "GET", target: "/v1/calls?status=QUEUED,DONE", status: 200,
			respBody: page()},
		"accepted long q": {method: "GET", target: "/v1/calls?q=" + strings.Repeat("q", 65), status: 200,
			respBody: page()},
	}
	for name, e := range drifted {
		t.Run("catches "+name, func(t *testing.T) {
			t.Parallel()
			errs := e.run(t, c)
			if len(errs) == 0 {
				t.Errorf("check reported nothing for %s", name)
			}
			t.Log(strings.Join(errs, "\n"))
		})
	}
}

// TestContractWebhookBodies checks the webhook bodies Parley sends against
// the document's webhooks.
func TestContractWebhookBodies(t *testing.T) {
	c := loadContract(t)
	visit := func(schema string, body []byte) error {
		t.Helper()
		ref := c.doc.Components.Schemas[schema]
		if ref == nil || ref.Value == nil {
			t.Fatalf("openapi.yaml has no components/schemas/%s", schema)
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		return ref.Value.VisitJSON(v, append(formatOptions(), openapi3.EnableJSONSchema2020(), openapi3.MultiErrors())...)
	}
	for _, name := range []string{"preCall", "postCall", "inboundMessage"} {
		if item := c.doc.Webhooks[name]; item == nil || item.Post == nil {
			t.Errorf("openapi.yaml has no webhooks/%s post operation", name)
		}
	}
	for name, m := range map[string]model.Call{"full": fullCall(), "bare": bareCall()} {
		body, err := call.PostCallBody(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := visit("PostCallPayload", body); err != nil {
			t.Errorf("%s post-call body does not match PostCallPayload: %v\nbody: %s", name, err, body)
		}
	}
	withStatuses, _ := json.Marshal(call.NewRecord(fullCall(), false))
	if visit("PostCallPayload", withStatuses) == nil {
		t.Error("PostCallPayload accepts a record carrying its own webhook statuses")
	}
	inbound := model.Message{ID: model.NewMessageID(), OrgID: model.NewID(), ConversationID: "conv_1", Channel: model.ChannelSMS,
		Direction: model.Inbound, FromNumber: "+14155550199", ToNumber: "+14155550100", Body: "hi", Status: model.MessageReceived,
		CreatedAt: time.Now()}
	agentID, agentName, sid, connID, callID, failure := model.NewID(), "Desk", "SM1", "mc_1", model.NewID(), "carrier error 30003"
	inbound.AgentID, inbound.AgentName, inbound.ProviderMessageID, inbound.MessagingConnectionID = &agentID, &agentName, &sid, &connID
	reply := inbound
	reply.ID, reply.Direction, reply.Status, reply.CallID, reply.ErrorMessage, reply.GeneratedByLLM =
		model.NewMessageID(), model.Outbound, model.MessageUndelivered, &callID, &failure, true
	body, err := json.Marshal(sms.InboundPayload{Event: webhook.EventInboundMessage, AgentID: agentID, ConversationID: "conv_1",
		Message: sms.NewRecord(inbound), Conversation: []sms.Record{sms.NewRecord(reply), sms.NewRecord(inbound)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := visit("InboundMessagePayload", body); err != nil {
		t.Errorf("inbound_message body does not match InboundMessagePayload: %v\nbody: %s", err, body)
	}
	for _, dialed := range []string{"", model.NewID()} {
		body, err := json.Marshal(webhook.PreCallPayload{AgentID: model.NewID(), FromNumber: "+14155550100", ToNumber: "+14155550101", DialedAgentID: dialed})
		if err != nil {
			t.Fatal(err)
		}
		if err := visit("PreCallRequest", body); err != nil {
			t.Errorf("pre-call body does not match PreCallRequest: %v\nbody: %s", err, body)
		}
	}
}
