package api

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/sms/twilio"
)

// badTexts are the kinds of text no store may hold: as written inside a
// JSON string (json), as an answer shows it when it is in a key (shown),
// and percent-encoded in a query ("" for the kinds only JSON can carry).
var badTexts = []struct{ name, json, shown, query string }{
	{"escaped NUL", `\u0000`, `\u0000`, "%00"},
	{"lone high surrogate", `\ud800`, `\ud800`, ""},
	{"lone low surrogate", `\uDC00`, `\udc00`, ""},
	{"invalid byte", "\xff", `\xff`, "%FF"},
	{"overlong NUL", "\xc0\x80", `\xc0\x80`, "%C0%80"},
	{"overlong slash", "\xe0\x80\xaf", `\xe0\x80\xaf`, "%E0%80%AF"},
	{"encoded surrogate", "\xed\xa0\x80", `\xed\xa0\x80`, "%ED%A0%80"},
	{"truncated sequence", "\xe2\x82", `\xe2\x82`, "%E2%82"},
}

// badTextCase is a request whose body (or query) carries bad text where
// it says BAD; the answer must name field (BAD there stands for how a bad
// key is shown), and what GET check answers must not change. With BAD
// replaced by "ok" the request is valid and answers good (0: not tried),
// so the refusal is the text's doing alone.
type badTextCase struct {
	method, path, body string
	field, check       string
	good               int
}

const badMark = "BAD"

// Bad text anywhere in a body, a key or a query is 400 validation_failed
// naming it, on every store alike, and changes nothing.
func TestBadTextIsRefusedOnEveryStore(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			b := newInboundBench(t, "Hi!", engine)
			e := b.env
			agent, folder, kb, tool := refusalTargets(e, b)
			cases := badTextCases(agent, folder, kb, tool)
			for _, c := range cases {
				// What check answers right after one refusal is what it
				// answers right before the next: one look between requests.
				before := stored(t, e, c.check)
				for _, k := range badTexts {
					path, body := strings.ReplaceAll(c.path, badMark, k.query), strings.ReplaceAll(c.body, badMark, k.json)
					if strings.Contains(c.path, badMark) && k.query == "" {
						continue
					}
					r := e.do(c.method, path, bodyOrNil(body))
					field := strings.ReplaceAll(c.field, badMark, k.shown)
					if r.Status != http.StatusBadRequest || r.ErrorCode(t) != codeValidationFailed ||
						!slices.Equal(r.ErrorFields(t), []string{field}) || !textMessage(t, r) {
						t.Errorf("%s %s, %s: %d %s; want 400 validation_failed naming %s", c.method, c.path, k.name, r.Status, r.Body, field)
					}
					after := stored(t, e, c.check)
					if after != before {
						t.Errorf("%s %s, %s: %s changed:\n%s\n%s", c.method, c.path, k.name, c.check, before, after)
					}
					before = after
				}
				if c.good != 0 {
					e.must(c.good, c.method, strings.ReplaceAll(c.path, badMark, "ok"), bodyOrNil(strings.ReplaceAll(c.body, badMark, "ok")))
				}
			}
			inboundForm(t, b)
		})
	}
}

// refusalTargets makes one resource of each kind the refusal tests write
// to: an agent (on b's messaging connection) in a folder, a knowledge base
// and one of the agent's tools.
func refusalTargets(e *env, b *inboundBench) (agent, folder, kb, tool string) {
	folder = e.create("/v1/folders", map[string]any{"name": "F"})["id"].(string)
	agent = e.createAgent(map[string]any{"messagingConnectionId": b.conn["id"], "folderId": folder})["id"].(string)
	kb = e.create("/v1/knowledge-bases", map[string]any{"name": "KB"})["id"].(string)
	tool = e.create("/v1/agents/"+agent+"/custom-tools", map[string]any{"name": "t", "webhookUrl": "https://example.com/t"})["id"].(string)
	return agent, folder, kb, tool
}

// stored is what GET path answers, as far as a refused request must not
// change it: a resource whole, a list by its ids (calls and messages
// created earlier move on in the background).
func stored(t *testing.T, e *env, path string) string {
	r := e.must(http.StatusOK, "GET", path, nil)
	list, ok := r.JSON(t)["data"].([]any)
	if !ok {
		return string(r.Body)
	}
	ids := make([]string, len(list))
	for i, item := range list {
		ids[i], _ = item.(map[string]any)["id"].(string)
	}
	return strings.Join(ids, ",")
}

func bodyOrNil(body string) any {
	if body == "" {
		return nil
	}
	return body
}

// textMessage reports whether the one detail of r says what is wrong with the text.
func textMessage(t *testing.T, r response) bool {
	details, _ := r.JSON(t)["error"].(map[string]any)["details"].([]any)
	if len(details) != 1 {
		return false
	}
	msg := details[0].(map[string]any)["message"].(string)
	msg = strings.TrimPrefix(msg, "key ")
	return msg == invalid.TextNUL || msg == invalid.TextUTF8 || msg == invalid.TextSurrogate
}

// badTextCases covers every kind of text field: top-level strings, nested
// typed objects, arrays of them, free-form objects at depth, object keys,
// array elements, knowledge content, messages, a tool's schema and
// headers, and query values and names, on creates and updates.
func badTextCases(agent, folder, kb, tool string) []badTextCase {
	const (
		agents = "/v1/agents"
		ok     = http.StatusOK
		made   = http.StatusCreated
	)
	newAgent := func(extra string) string { return `{"name":"A","promptTemplate":"P"` + extra + `}` }
	agentPath, toolPath := agents+"/"+agent, agents+"/"+agent+"/custom-tools/"+tool
	tools, sources := agentPath+"/custom-tools", "/v1/knowledge-bases/"+kb+"/sources"
	call := func(extra string) string {
		return `{"agentId":"` + agent + `","toNumber":"+14155550199","fromNumber":"+14155550100"` + extra + `}`
	}
	return []badTextCase{
		// Agents: every kind of field.
		{"POST", agents, `{"name":"A BAD","promptTemplate":"P"}`, "name", agents, made},
		{"POST", agents, `{"name":"A","promptTemplate":"P BAD"}`, "promptTemplate", agents, made},
		{"POST", agents, newAgent(`,"messagingConfig":{"smsPrompt":"s BAD"}`), "messagingConfig.smsPrompt", agents, made},
		{"POST", agents, newAgent(`,"warmTransferConfig":{"holdMessage":"BAD"}`), "warmTransferConfig.holdMessage", agents, made},
		{"POST", agents, newAgent(`,"transferRoutes":[{"to_number":"+14155550100","condition":"c"},{"to_number":"+14155550101","condition":"BAD"}]`),
			"transferRoutes[1].condition", agents, made},
		{"POST", agents, newAgent(`,"defaultVariables":{"k":"v BAD"}`), "defaultVariables.k", agents, made},
		{"POST", agents, newAgent(`,"defaultVariables":{"kBAD":"v"}`), "defaultVariables.kBAD", agents, made},
		{"POST", agents, newAgent(`,"runtimeConfig":{"a":[1,{"b":["x","BAD"]}]}`), "runtimeConfig.a[1].b[1]", agents, made},
		{"POST", agents, newAgent(`,"runtimeConfig":{"a":{"BAD":true}}`), "runtimeConfig.a.BAD", agents, made},
		{"POST", agents, newAgent(`,"testVariables":{"t":"BAD"}`), "testVariables.t", agents, made},
		{"POST", agents, newAgent(`,"flowDefinition":{"notes":"BAD"}`), "flowDefinition.notes", agents, 0},
		{"POST", agents, newAgent(`,"knowledgeBaseIds":["BAD"]`), "knowledgeBaseIds[0]", agents, 0},
		{"POST", agents, newAgent(`,"xBAD":1`), "xBAD", agents, 0},
		{"PATCH", agentPath, `{"firstMessage":"Hello BAD"}`, "firstMessage", agentPath, ok},
		{"PATCH", agentPath, `{"defaultVariables":{"nested":{"BAD":"v"}}}`, "defaultVariables.nested.BAD", agentPath, ok},
		{"POST", agents + "/batch-get", `{"ids":["BAD"]}`, "ids[0]", agents, 0},
		// Custom tools: schema and headers.
		{"POST", tools, `{"name":"u","webhookUrl":"https://example.com/u","schema":{"type":"object","properties":{"pBAD":{"type":"string"}}}}`,
			"schema.properties.pBAD", tools, made},
		{"POST", tools, `{"name":"v","webhookUrl":"https://example.com/v","headers":[{"key":"X-A","value":"BAD"}]}`, "headers[0].value", tools, made},
		{"PATCH", toolPath, `{"description":"BAD"}`, "description", toolPath, ok},
		// Calls: variables and the caller id.
		{"POST", "/v1/calls", call(`,"variables":{"customer":{"name":"BAD"}}`), "variables.customer.name", "/v1/calls", made},
		{"POST", "/v1/calls", call(`,"variables":{"BAD":"x"}`), "variables.BAD", "/v1/calls", made},
		{"POST", "/v1/calls", call(`,"callerIdName":"Acme BAD"`), "callerIdName", "/v1/calls", made},
		// Messages.
		{"POST", "/v1/messages", `{"to":"+14155550199","agentId":"` + agent + `","body":"Hi BAD"}`, "body", "/v1/messages", made},
		{"POST", "/v1/messages", `{"to":"+14155550199","agentId":"` + agent + `","generate":true,"messages":[{"role":"user","content":"BAD"}]}`,
			"messages[0].content", "/v1/messages", 0},
		// Knowledge: bases, sources (content too), queries.
		{"POST", "/v1/knowledge-bases", `{"name":"K","description":"BAD"}`, "description", "/v1/knowledge-bases", made},
		{"POST", sources, `{"sourceType":"text","displayName":"D","content":"Opening hours BAD"}`, "content", sources, made},
		{"POST", sources, `{"sourceType":"text","displayName":"BAD","content":"C"}`, "displayName", sources, made},
		{"POST", "/v1/knowledge-bases/" + kb + "/query", `{"query":"hours BAD"}`, "query", sources, 0},
		// The plain resources.
		{"POST", "/v1/folders", `{"name":"BAD"}`, "name", "/v1/folders", made},
		{"PATCH", "/v1/folders/" + folder, `{"color":"BAD"}`, "color", "/v1/folders/" + folder, 0},
		{"POST", "/v1/sip-trunks", `{"friendlyName":"T","host":"pbx.example.com","password":"pw BAD"}`, "password", "/v1/sip-trunks", made},
		{"POST", "/v1/phone-numbers", `{"e164":"+1415555BAD"}`, "e164", "/v1/phone-numbers", 0},
		{"POST", "/v1/messaging-connections", `{"provider":"twilio","accountSid":"ACBAD","authToken":"t","fromNumber":"+14155550100"}`,
			"accountSid", "/v1/messaging-connections", 0},
		{"PATCH", "/v1/organization", `{"name":"Acme BAD"}`, "name", "/v1/organization", ok},
		// Query values and names, filters included, and routes that read none.
		{"GET", agents + "?q=hello" + badMark, "", "q", agents, ok},
		{"GET", agents + "?status=active&folderId=" + badMark, "", "folderId", agents, 0},
		{"GET", agents + "?q" + badMark + "=x", "", "qBAD", agents, 0},
		{"GET", "/v1/calls?q=" + badMark, "", "q", "/v1/calls", ok},
		{"GET", "/v1/calls?fromNumber=%2B1" + badMark, "", "fromNumber", "/v1/calls", 0},
		{"GET", "/v1/calls?status=" + badMark + "&q=x", "", "status", "/v1/calls", 0},
		{"GET", "/v1/messages?agentId=" + badMark, "", "agentId", "/v1/messages", 0},
		{"GET", "/v1/folders?page=1" + badMark, "", "page", "/v1/folders", 0},
		{"GET", "/v1/organization?x=" + badMark, "", "x", "/v1/organization", 0},
	}
}

// inboundForm: a carrier's signed form is text too; a bad value is 400
// naming the form field, and no message is recorded.
func inboundForm(t *testing.T, b *inboundBench) {
	for _, k := range badTexts {
		if k.query == "" {
			continue
		}
		body := "MessageSid=SM1&From=%2B14155550199&To=%2B14155550100&Body=hi" + k.query
		status, answer := b.postInbound(t, body)
		if status != http.StatusBadRequest || !strings.Contains(answer, `"field":"Body"`) {
			t.Errorf("inbound form, %s: %d %s", k.name, status, answer)
		}
	}
	if n := len(b.messages("INBOUND")); n != 0 {
		t.Errorf("%d inbound messages recorded", n)
	}
}

// postInbound posts a form to the bench's inbound webhook, signed as the
// carrier would sign it.
func (b *inboundBench) postInbound(t testing.TB, body string) (int, string) {
	t.Helper()
	form, err := url.ParseQuery(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", b.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(twilio.SignatureHeader, twilio.Sign(b.carrier.AuthToken, b.url, form))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// A reply the inbound-message receiver writes in text no store can keep is
// not sent; the agent answers on its own, on every store.
func TestInboundWebhookReplyWithBadText(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			b := newInboundBench(t, "Let me check.", engine)
			hook := newReceiver(t)
			b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"], "messagingConfig": map[string]any{
				"inboundWebhookUrl": hook.URL + "/sms", "fromNumber": "+14155550100"}})
			hook.set(200, `{"reply": "Maria will call you\u0000back."}`)
			b.text("+14155550199", "+14155550100", "Can she call me?")
			if out := b.messages("OUTBOUND"); len(out) != 1 || out[0]["body"] != "Let me check." || out[0]["status"] != "sent" {
				t.Errorf("replies: %v", out)
			}
		})
	}
}
