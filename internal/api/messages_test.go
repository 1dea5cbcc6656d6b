package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/sms/twilio"
	"github.com/parley-voice/parley/internal/sms/twilio/twiliotest"
	"github.com/parley-voice/parley/internal/webhook"
)

// acceptAll is a carrier that accepts every message.
var acceptAll = func(model.MessagingConnection, string) (sms.Carrier, error) { return okCarrier{}, nil }

type okCarrier struct{}

func (okCarrier) Send(context.Context, twilio.Send) (twilio.Sent, error) {
	return twilio.Sent{SID: "SM" + strings.Repeat("0", 32), Status: "queued"}, nil
}

func TestSendMessages(t *testing.T) {
	carrier := twiliotest.New(t, twiliotest.Options{})
	e := newEnv(t)
	conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": carrier.AccountSID,
		"authToken": carrier.AuthToken, "fromNumber": "+14155550100", "baseUrl": carrier.URL})
	agentFrom := "+14155550111"
	a := e.createAgent(map[string]any{"messagingConnectionId": conn["id"], "messagingConfig": map[string]any{"fromNumber": agentFrom}})

	// Raw, through the agent: its number, its connection, the carrier asked.
	m := e.create("/v1/messages", map[string]any{"to": "+14155550199", "agentId": a["id"], "body": "Your table is booked."})
	if m["status"] != "sent" || m["fromNumber"] != agentFrom || m["toNumber"] != "+14155550199" || m["agentId"] != a["id"] ||
		m["agentName"] != a["name"] || m["messagingConnectionId"] != conn["id"] || m["channel"] != "sms" || m["generatedByLlm"] != false ||
		!strings.HasPrefix(m["providerMessageId"].(string), "SM") || !strings.HasPrefix(m["id"].(string), "msg_") || m["conversationId"] == "" {
		t.Errorf("message = %v", m)
	}
	sent := carrier.Messages()
	if len(sent) != 1 || sent[0].Form.Get("To") != "+14155550199" || sent[0].Form.Get("From") != agentFrom || sent[0].Form.Get("Body") != "Your table is booked." {
		t.Fatalf("carrier saw %+v", sent)
	}
	// The next message to the same number continues the thread.
	m2 := e.create("/v1/messages", map[string]any{"to": "+14155550199", "agentId": a["id"], "body": "See you at 8."})
	if m2["conversationId"] != m["conversationId"] {
		t.Errorf("a second message started a new thread")
	}
	// Without an agent: the connection's number; an explicit from wins.
	m3 := e.create("/v1/messages", map[string]any{"to": "+14155550198", "messagingConnectionId": conn["id"], "body": "hi"})
	m4 := e.create("/v1/messages", map[string]any{"to": "+14155550198", "from": "+14155550122", "messagingConnectionId": conn["id"], "body": "hi"})
	if m3["fromNumber"] != "+14155550100" || m4["fromNumber"] != "+14155550122" || m3["agentId"] != nil {
		t.Errorf("from defaults: %v / %v", m3["fromNumber"], m4["fromNumber"])
	}
	// A connection with a messaging service and no number: the carrier
	// picks the sender from the service, and the record has none.
	svc := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": carrier.AccountSID,
		"authToken": carrier.AuthToken, "messagingServiceSid": "MG" + strings.Repeat("a", 32), "baseUrl": carrier.URL})
	m5 := e.create("/v1/messages", map[string]any{"to": "+14155550198", "messagingConnectionId": svc["id"], "body": "hi"})
	sent = carrier.Messages()
	if last := sent[len(sent)-1]; m5["status"] != "sent" || m5["fromNumber"] != "" || last.Form.Get("MessagingServiceSid") != "MG"+strings.Repeat("a", 32) ||
		last.Form.Has("From") {
		t.Errorf("through the messaging service: %v; the carrier saw %v", m5, last.Form)
	}
	if got := e.must(http.StatusOK, "GET", "/v1/messages/"+m["id"].(string), nil).Data(t); got["body"] != "Your table is booked." {
		t.Errorf("get = %v", got)
	}

	// The carrier refuses: the record stays, failed, with the reason.
	refusing := twiliotest.New(t, twiliotest.Options{Reply: func(twiliotest.Message) twiliotest.Reply {
		return twiliotest.Reply{Status: 400, Code: 21211, Message: "Invalid 'To' Phone Number"}
	}})
	bad := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": refusing.AccountSID,
		"authToken": refusing.AuthToken, "fromNumber": "+14155550100", "baseUrl": refusing.URL})
	f := e.create("/v1/messages", map[string]any{"to": "+14155550197", "messagingConnectionId": bad["id"], "body": "hi"})
	if f["status"] != "failed" || !strings.Contains(fmt.Sprint(f["errorMessage"]), "21211") {
		t.Errorf("refused message = %v", f)
	}
	if got := e.must(http.StatusOK, "GET", "/v1/messages/"+f["id"].(string), nil).Data(t); got["status"] != "failed" {
		t.Errorf("the failed record was not kept: %v", got)
	}
	// Generation without a model: failed, naming the setting.
	g := e.create("/v1/messages", map[string]any{"to": "+14155550196", "agentId": a["id"], "generate": true, "smsPrompt": "Remind them of the booking."})
	if g["status"] != "failed" || g["generatedByLlm"] != true || !strings.Contains(fmt.Sprint(g["errorMessage"]), "--llm-base-url") {
		t.Errorf("generation without a model = %v", g)
	}

	// Validation, both sides of each limit; nothing is stored or sent.
	before := len(carrier.Messages())
	e.create("/v1/messages", map[string]any{"to": "+14155550195", "agentId": a["id"], "body": strings.Repeat("é", 1600)})
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"agentId": a["id"], "body": "x"}, "to"},
		{map[string]any{"to": "4155550195", "agentId": a["id"], "body": "x"}, "to"},
		{map[string]any{"to": "+14155550195", "from": "0800", "agentId": a["id"], "body": "x"}, "from"},
		{map[string]any{"to": "+14155550195", "agentId": a["id"], "body": strings.Repeat("é", 1601)}, "body"},
		{map[string]any{"to": "+14155550195", "agentId": a["id"], "body": ""}, "body"},
		{map[string]any{"to": "+14155550195", "agentId": a["id"]}, "body"},
		{map[string]any{"to": "+14155550195", "agentId": a["id"], "body": "x", "generate": true}, "body"},
		{map[string]any{"to": "+14155550195", "body": "x"}, "messagingConnectionId"},
		{map[string]any{"to": "+14155550195", "messagingConnectionId": "mc_nope", "body": "x"}, "messagingConnectionId"},
		{map[string]any{"to": "+14155550195", "agentId": model.NewID(), "body": "x"}, "agentId"},
		{map[string]any{"to": "+14155550195", "agentId": a["id"], "generate": true, "messages": []any{map[string]any{"role": "system", "content": "x"}}}, "messages[0].role"},
		{map[string]any{"to": "+14155550195", "agentId": a["id"], "generate": true, "smsPrompt": strings.Repeat("p", 4001)}, "smsPrompt"},
	} {
		e.invalid("validation_failed", "POST", "/v1/messages", tc.body, tc.field)
	}
	if n := len(carrier.Messages()); n != before+1 {
		t.Errorf("invalid requests reached the carrier: %d", n-before-1)
	}

	// Listing: filters and pages.
	all := e.must(http.StatusOK, "GET", "/v1/messages?pageSize=100", nil).JSON(t)
	if all["total"] != float64(8) {
		t.Errorf("total %v", all["total"])
	}
	byAgent := e.must(http.StatusOK, "GET", "/v1/messages?agentId="+a["id"].(string), nil).JSON(t)
	if byAgent["total"] != float64(4) {
		t.Errorf("agent's messages: %v", byAgent["total"])
	}
	// folderId: the messages of the folder's agents; none: of agents in no
	// folder (messages without an agent never match).
	folder := e.create("/v1/folders", map[string]any{"name": "Bookings"})
	other := e.createAgent(map[string]any{"messagingConnectionId": conn["id"]})
	e.create("/v1/messages", map[string]any{"to": "+14155550190", "agentId": other["id"], "body": "hi"})
	e.must(http.StatusOK, "PATCH", "/v1/agents/"+a["id"].(string), map[string]any{"folderId": folder["id"]})
	if inFolder := e.must(http.StatusOK, "GET", "/v1/messages?folderId="+folder["id"].(string), nil).JSON(t); inFolder["total"] != float64(4) {
		t.Errorf("folder's messages: %v", inFolder["total"])
	}
	if none := e.must(http.StatusOK, "GET", "/v1/messages?folderId=none", nil).List(t); len(none) != 1 || none[0]["agentId"] != other["id"] {
		t.Errorf("folderId=none: %v", none)
	}
	if failed := e.must(http.StatusOK, "GET", "/v1/messages?status=failed", nil).JSON(t); failed["total"] != float64(2) {
		t.Errorf("failed: %v", failed["total"])
	}
	if out := e.must(http.StatusOK, "GET", "/v1/messages?direction=OUTBOUND&pageSize=2&page=2", nil).JSON(t); out["total"] != float64(9) ||
		len(out["data"].([]any)) != 2 || out["hasNextPage"] != true {
		t.Errorf("page 2: %v", out)
	}
	if none := e.must(http.StatusOK, "GET", "/v1/messages?direction=INBOUND", nil).JSON(t); none["total"] != float64(0) {
		t.Errorf("inbound: %v", none["total"])
	}
	for _, q := range []string{"direction=sideways", "status=lost", "agentId=x", "folderId=x", "callId=x", "pageSize=101"} {
		e.invalid("validation_failed", "GET", "/v1/messages?"+q, nil, strings.Split(q, "=")[0])
	}
	e.must(http.StatusNotFound, "GET", "/v1/messages/msg_000000000000000000000000", nil)
	e.must(http.StatusNotFound, "GET", "/v1/messages/not-a-message", nil)
}

// A connection's base URL is the customer's: without the operator's
// --allow-private-webhooks it may not reach private addresses.
func TestMessagesRefuseAPrivateCarrier(t *testing.T) {
	carrier := twiliotest.New(t, twiliotest.Options{})
	e := newEnv(t)
	e.server.Messages.HTTPClient = webhook.GuardedClient(false, 5*time.Second)
	conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": carrier.AccountSID,
		"authToken": carrier.AuthToken, "fromNumber": "+14155550100", "baseUrl": carrier.URL})
	m := e.create("/v1/messages", map[string]any{"to": "+14155550199", "messagingConnectionId": conn["id"], "body": "hi"})
	if m["status"] != "failed" || !strings.Contains(fmt.Sprint(m["errorMessage"]), "private") || len(carrier.Messages()) != 0 {
		t.Errorf("message = %v; the carrier saw %d", m, len(carrier.Messages()))
	}
}

// generate: the model writes the text from the agent's SMS prompt and the
// caller's inline history, and the carrier sends what it wrote.
func TestGeneratedMessage(t *testing.T) {
	carrier := twiliotest.New(t, twiliotest.Options{})
	model := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{"\"Hi Ada, ", "your table for two is booked for 8 pm.\""}}
	})
	e := newEnv(t)
	e.server.Messages.LLM = openai.New(openai.Config{BaseURL: model.URL, APIKey: "k", Model: "m"})
	conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": carrier.AccountSID,
		"authToken": carrier.AuthToken, "fromNumber": "+14155550100", "baseUrl": carrier.URL})
	a := e.createAgent(map[string]any{"messagingConnectionId": conn["id"], "messagingConfig": map[string]any{"smsPrompt": "You confirm bookings for Luigi's."}})
	m := e.create("/v1/messages", map[string]any{"to": "+14155550199", "agentId": a["id"], "generate": true,
		"messages": []any{map[string]any{"role": "user", "content": "Is my table confirmed?"}}})
	if m["status"] != "sent" || m["generatedByLlm"] != true || m["body"] != "Hi Ada, your table for two is booked for 8 pm." {
		t.Errorf("generated message = %v", m)
	}
	if sent := carrier.Messages(); len(sent) != 1 || sent[0].Form.Get("Body") != m["body"] {
		t.Errorf("carrier saw %+v", sent)
	}
	reqs := model.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 3 || !strings.HasPrefix(reqs[0].Messages[0]["content"].(string), "You confirm bookings for Luigi's.") ||
		reqs[0].Messages[1]["role"] != "user" || reqs[0].Messages[1]["content"] != "Is my table confirmed?" {
		t.Errorf("model request %+v", reqs)
	}
	// smsPrompt in the request wins over the agent's.
	e.create("/v1/messages", map[string]any{"to": "+14155550199", "agentId": a["id"], "generate": true, "smsPrompt": "Say thanks."})
	if reqs := model.Requests(); !strings.HasPrefix(reqs[1].Messages[0]["content"].(string), "Say thanks.") {
		t.Errorf("smsPrompt override: %v", reqs[1].Messages[0])
	}
}

// The carrier's status callbacks, signed with the connection's token,
// move a sent message to delivered or undelivered; unsigned or wrongly
// signed ones change nothing.
func TestMessageStatusCallbacks(t *testing.T) {
	carrier := twiliotest.New(t, twiliotest.Options{})
	e := newEnv(t)
	e.server.Messages.PublicURL = e.srv.URL
	conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": carrier.AccountSID,
		"authToken": carrier.AuthToken, "fromNumber": "+14155550100", "baseUrl": carrier.URL})
	m := e.create("/v1/messages", map[string]any{"to": "+14155550199", "messagingConnectionId": conn["id"], "body": "hi"})
	sent := carrier.Messages()
	callback := sent[0].Form.Get("StatusCallback")
	if !strings.HasPrefix(callback, e.srv.URL+"/v1/messaging-connections/"+conn["id"].(string)+"/status?org=") {
		t.Fatalf("StatusCallback %q", callback)
	}
	status := func() map[string]any {
		return e.must(http.StatusOK, "GET", "/v1/messages/"+m["id"].(string), nil).Data(t)
	}
	ctx := context.Background()

	// Forged: signed with another token.
	forger := twiliotest.New(t, twiliotest.Options{AccountSID: carrier.AccountSID, AuthToken: "not-the-token"})
	if err := forger.StatusCallback(ctx, callback, m["providerMessageId"].(string), "undelivered", 30003); err == nil {
		t.Error("a forged callback was accepted")
	}
	if got := status(); got["status"] != "sent" {
		t.Fatalf("after a forged callback: %v", got["status"])
	}
	// Unsigned.
	resp, err := http.PostForm(callback, map[string][]string{"MessageSid": {m["providerMessageId"].(string)}, "MessageStatus": {"failed"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || status()["status"] != "sent" {
		t.Errorf("unsigned callback: %d, status %v", resp.StatusCode, status()["status"])
	}
	// Genuine: delivered; a late "sent" does not undo it.
	if err := carrier.StatusCallback(ctx, callback, m["providerMessageId"].(string), "delivered", 0); err != nil {
		t.Fatal(err)
	}
	if got := status(); got["status"] != "delivered" || got["errorMessage"] != nil {
		t.Errorf("after delivered: %v %v", got["status"], got["errorMessage"])
	}
	if err := carrier.StatusCallback(ctx, callback, m["providerMessageId"].(string), "sent", 0); err != nil {
		t.Fatal(err)
	}
	if got := status(); got["status"] != "delivered" {
		t.Errorf("a late sent undid delivered: %v", got["status"])
	}
	// Undelivered with the carrier's error code.
	m2 := e.create("/v1/messages", map[string]any{"to": "+14155550198", "messagingConnectionId": conn["id"], "body": "hi"})
	if err := carrier.StatusCallback(ctx, callback, m2["providerMessageId"].(string), "undelivered", 30003); err != nil {
		t.Fatal(err)
	}
	got := e.must(http.StatusOK, "GET", "/v1/messages/"+m2["id"].(string), nil).Data(t)
	if got["status"] != "undelivered" || got["errorMessage"] != "carrier error 30003" {
		t.Errorf("undelivered: %v %v", got["status"], got["errorMessage"])
	}
	// Another organization's id in the URL: not found.
	other := strings.Replace(callback, "org=", "org=0"+model.NewID()[1:]+"&x=", 1)
	resp, err = http.PostForm(other, nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("unknown org: %d", resp.StatusCode)
		}
	}
}

// The per-recipient hourly cap and the organization's per-minute limit
// answer 429 rate_limited; nothing is stored or sent over them.
func TestMessageRateLimits(t *testing.T) {
	e := newEnv(t)
	e.server.Messages.Carrier = acceptAll
	e.server.Messages.OrgPerMinute, e.server.Messages.RecipientPerHour = 4, 2
	conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": "AC", "authToken": "t", "fromNumber": "+14155550100"})
	send := func(to string) response {
		return e.do("POST", "/v1/messages", map[string]any{"to": to, "messagingConnectionId": conn["id"], "body": "hi"})
	}
	for range 2 {
		if r := send("+14155550101"); r.Status != http.StatusCreated {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
	}
	r := send("+14155550101")
	if r.Status != http.StatusTooManyRequests || r.ErrorCode(t) != "rate_limited" || !strings.Contains(string(r.Body), "2 messages an hour") {
		t.Errorf("third to one number: %d %s", r.Status, r.Body)
	}
	for _, to := range []string{"+14155550102", "+14155550103"} {
		if r := send(to); r.Status != http.StatusCreated {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
	}
	r = send("+14155550104")
	if r.Status != http.StatusTooManyRequests || !strings.Contains(string(r.Body), "4 messages a minute") {
		t.Errorf("fifth in a minute: %d %s", r.Status, r.Body)
	}
	if total := e.must(http.StatusOK, "GET", "/v1/messages", nil).JSON(t)["total"]; total != float64(4) {
		t.Errorf("%v messages stored", total)
	}
}

// A carrier that fails (5xx) or never answers leaves the record, failed,
// with the reason; the message is not lost.
func TestMessageCarrierFailures(t *testing.T) {
	e := newEnv(t)
	e.server.Messages.CarrierTimeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name  string
		reply twiliotest.Reply
		want  string
	}{
		{"5xx", twiliotest.Reply{Status: 503, Code: 20503, Message: "Service Unavailable"}, "503"},
		{"timeout", twiliotest.Reply{Hang: true}, "no answer within 300ms"},
		{"4xx", twiliotest.Reply{Status: 401, Code: 20003, Message: "Authenticate"}, "20003"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			carrier := twiliotest.New(t, twiliotest.Options{Reply: func(twiliotest.Message) twiliotest.Reply { return tc.reply }})
			conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": carrier.AccountSID,
				"authToken": carrier.AuthToken, "fromNumber": "+14155550100", "baseUrl": carrier.URL})
			m := e.create("/v1/messages", map[string]any{"to": "+14155550199", "messagingConnectionId": conn["id"], "body": "hi"})
			if m["status"] != "failed" || !strings.Contains(fmt.Sprint(m["errorMessage"]), tc.want) || m["providerMessageId"] != nil {
				t.Errorf("message = %v", m)
			}
			if got := e.must(http.StatusOK, "GET", "/v1/messages/"+m["id"].(string), nil).Data(t); got["status"] != "failed" || got["body"] != "hi" {
				t.Errorf("stored = %v", got)
			}
			if n := len(carrier.Messages()); n != 1 {
				t.Errorf("the carrier was asked %d times", n)
			}
		})
	}
}

// Every rule of POST /messages, on both sides of its limit: the valid side
// is sent, the invalid one is 400 naming the field and changes nothing.
func TestMessageValidationLimits(t *testing.T) {
	e := newEnv(t)
	e.server.Messages.Carrier = acceptAll
	e.server.Messages.LLM = openai.New(openai.Config{BaseURL: llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{"Hello."}}
	}).URL, APIKey: "k", Model: "m"})
	conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": "AC", "authToken": "t", "fromNumber": "+14155550100"})
	a := e.createAgent(map[string]any{"messagingConnectionId": conn["id"], "messagingConfig": map[string]any{"smsPrompt": "Be brief."}})
	noConn := e.createAgent(nil)
	history := func(n int, content string) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"role": []string{"user", "assistant"}[i%2], "content": content}
		}
		return out
	}
	with := func(kv ...any) map[string]any {
		b := map[string]any{"to": "+14155550199", "agentId": a["id"]}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(b, kv[i].(string))
				continue
			}
			b[kv[i].(string)] = kv[i+1]
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		ok    map[string]any
		bad   map[string]any
		field string
	}{
		{"to E.164", with("body", "x", "to", "+442071838750"), with("body", "x", "to", "+0442071838750"), "to"},
		{"to required", with("body", "x"), with("body", "x", "to", nil), "to"},
		{"from E.164", with("body", "x", "from", "+14155550122"), with("body", "x", "from", "14155550122"), "from"},
		{"body 1..1600", with("body", strings.Repeat("a", 1600)), with("body", strings.Repeat("a", 1601)), "body"},
		{"body not empty", with("body", "a"), with("body", " "), "body"},
		{"body or generate", with("generate", true), with("body", "x", "generate", true), "body"},
		{"one of them", with("body", "x", "generate", false), with("generate", false), "body"},
		{"history only with generate", with("generate", true, "messages", history(1, "hi")), with("body", "x", "messages", history(1, "hi")), "messages"},
		{"history at most 50", with("generate", true, "messages", history(50, "hi")), with("generate", true, "messages", history(51, "hi")), "messages"},
		{"history content 1..1600", with("generate", true, "messages", history(2, strings.Repeat("é", 1600))),
			with("generate", true, "messages", history(1, strings.Repeat("é", 1601))), "messages[0].content"},
		{"history content not empty", with("generate", true, "messages", history(1, "x")), with("generate", true, "messages", history(1, "")), "messages[0].content"},
		{"history role", with("generate", true, "messages", []any{map[string]any{"role": "assistant", "content": "x"}}),
			with("generate", true, "messages", []any{map[string]any{"role": "tool", "content": "x"}}), "messages[0].role"},
		{"smsPrompt 1..4000", with("generate", true, "smsPrompt", strings.Repeat("p", 4000)), with("generate", true, "smsPrompt", strings.Repeat("p", 4001)), "smsPrompt"},
		{"smsPrompt not empty", with("generate", true, "smsPrompt", "p"), with("generate", true, "smsPrompt", ""), "smsPrompt"},
		{"agent exists", with("body", "x"), with("body", "x", "agentId", model.NewID()), "agentId"},
		{"connection of the agent or given", with("body", "x", "agentId", noConn["id"], "messagingConnectionId", conn["id"]),
			with("body", "x", "agentId", noConn["id"]), "messagingConnectionId"},
		{"connection exists", with("body", "x", "agentId", nil, "messagingConnectionId", conn["id"]),
			with("body", "x", "agentId", nil, "messagingConnectionId", "mc_unknown"), "messagingConnectionId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.must(http.StatusOK, "GET", "/v1/messages", nil).JSON(t)["total"]
			e.invalid("validation_failed", "POST", "/v1/messages", tc.bad, tc.field)
			if after := e.must(http.StatusOK, "GET", "/v1/messages", nil).JSON(t)["total"]; after != before {
				t.Errorf("an invalid request stored a message")
			}
			if m := e.create("/v1/messages", tc.ok); m["status"] != "sent" {
				t.Errorf("valid side: %v", m)
			}
		})
	}
	for _, q := range []string{"page=0", "pageSize=0", "pageSize=101"} {
		e.invalid("validation_failed", "GET", "/v1/messages?"+q, nil, strings.Split(q, "=")[0])
	}
	for _, q := range []string{"page=1", "pageSize=1", "pageSize=100", "folderId=none", "direction=INBOUND", "status=received", "callId=" + model.NewID()} {
		e.must(http.StatusOK, "GET", "/v1/messages?"+q, nil)
	}
}
