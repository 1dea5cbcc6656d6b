package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// dupKeyCase is a request whose body repeats a key where it says DUP: the
// refused body has repeat there, the good one nothing. The answer must
// name field, and what GET check answers must not change. The good body
// answers good (0: not tried), so the refusal is the repeat's doing alone.
type dupKeyCase struct {
	method, path, body, repeat string
	field, check               string
	good                       int
}

const dupMark = "DUP"

// A key given twice in one object, at any depth of any body, is 400
// invalid_json naming its path, on every store alike, and changes nothing:
// encoding/json would keep the last, where a proxy, a firewall or an audit
// log may read the first.
func TestDuplicateKeysAreRefusedOnEveryStore(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			b := newInboundBench(t, "Hi!", engine)
			e := b.env
			agent, folder, kb, tool := refusalTargets(e, b)
			suite := e.create("/v1/test-suites", map[string]any{"name": "S", "agentId": agent})["id"].(string)
			for _, c := range dupKeyCases(agent, folder, kb, tool, suite) {
				before := stored(t, e, c.check)
				r := e.do(c.method, c.path, strings.Replace(c.body, dupMark, c.repeat, 1))
				if r.Status != http.StatusBadRequest || r.ErrorCode(t) != codeInvalidJSON ||
					!slices.Equal(r.ErrorFields(t), []string{c.field}) || !dupMessage(t, r) {
					t.Errorf("%s %s %s: %d %s; want 400 invalid_json naming %s", c.method, c.path, c.field, r.Status, r.Body, c.field)
				}
				if after := stored(t, e, c.check); after != before {
					t.Errorf("%s %s %s: %s changed:\n%s\n%s", c.method, c.path, c.field, c.check, before, after)
				}
				if c.good != 0 {
					e.must(c.good, c.method, c.path, strings.Replace(c.body, dupMark, "", 1))
				}
			}
		})
	}
}

// dupMessage reports whether the one detail of r says the key is repeated.
func dupMessage(t *testing.T, r response) bool {
	details, _ := r.JSON(t)["error"].(map[string]any)["details"].([]any)
	return len(details) == 1 && strings.Contains(details[0].(map[string]any)["message"].(string), "duplicate key")
}

// dupKeyCases covers top-level keys, nested typed objects, arrays of them,
// free-form objects at depth (variables, runtime configuration, flows, a
// tool's schema), keys equal only once unescaped, on creates and updates
// of every resource.
func dupKeyCases(agent, folder, kb, tool, suite string) []dupKeyCase {
	const (
		agents = "/v1/agents"
		ok     = http.StatusOK
		made   = http.StatusCreated
	)
	newAgent := func(extra string) string { return `{"name":"A","promptTemplate":"P"` + extra + `}` }
	agentPath, toolPath := agents+"/"+agent, agents+"/"+agent+"/custom-tools/"+tool
	tools, sources := agentPath+"/custom-tools", "/v1/knowledge-bases/"+kb+"/sources"
	suitePath := "/v1/test-suites/" + suite
	call := func(extra string) string {
		return `{"agentId":"` + agent + `","toNumber":"+14155550199","fromNumber":"+14155550100"` + extra + `}`
	}
	return []dupKeyCase{
		// Agents: every kind of field.
		{"POST", agents, `{"name":"first"DUP,"promptTemplate":"P"}`, `,"name":"second"`, "name", agents, made},
		{"POST", agents, `{"name":"first",DUP"promptTemplate":"P"}`, `"n\u0061me":"second",`, "name", agents, made},
		{"POST", agents, newAgent(`,"messagingConfig":{"smsPrompt":"s"DUP}`), `,"smsPrompt":"t"`, "messagingConfig.smsPrompt", agents, made},
		{"POST", agents, newAgent(`,"warmTransferConfig":{"holdMessage":"a"DUP}`), `,"holdMessage":"b"`, "warmTransferConfig.holdMessage", agents, made},
		{"POST", agents, newAgent(`,"warmTransferConfig":{"holdMessage":"a"}DUP`), `,"warmTransferConfig":{}`, "warmTransferConfig", agents, made},
		{"POST", agents, newAgent(`,"transferRoutes":[{"to_number":"+14155550100","condition":"c"},{"to_number":"+14155550101"DUP,"condition":"d"}]`),
			`,"to_number":"+14155550102"`, "transferRoutes[1].to_number", agents, made},
		{"POST", agents, newAgent(`,"defaultVariables":{"k":"v"DUP}`), `,"k":"w"`, "defaultVariables.k", agents, made},
		{"POST", agents, newAgent(`,"defaultVariables":{"c":{"name":"a"DUP}}`), `,"name":"b"`, "defaultVariables.c.name", agents, made},
		{"POST", agents, newAgent(`,"runtimeConfig":{"a":[1,{"b":"x"DUP}]}`), `,"\u0062":"y"`, "runtimeConfig.a[1].b", agents, made},
		{"POST", agents, newAgent(`,"testVariables":{"t":1DUP}`), `,"t":2`, "testVariables.t", agents, made},
		{"POST", agents, newAgent(`,"flowDefinition":{"notes":"x"DUP}`), `,"notes":"y"`, "flowDefinition.notes", agents, 0},
		{"PATCH", agentPath, `{"firstMessage":"Hello"DUP}`, `,"firstMessage":"Bye"`, "firstMessage", agentPath, ok},
		{"PATCH", agentPath, `{"defaultVariables":{"nested":{"k":"v"DUP}}}`, `,"k":"w"`, "defaultVariables.nested.k", agentPath, ok},
		{"POST", agents + "/batch-get", `{"ids":["` + agent + `"]DUP}`, `,"ids":[]`, "ids", agents, ok},
		// Custom tools: schema and headers.
		{"POST", tools, `{"name":"u","webhookUrl":"https://example.com/u","schema":{"type":"object","properties":{"p":{"type":"string"DUP}}}}`,
			`,"type":"number"`, "schema.properties.p.type", tools, made},
		{"POST", tools, `{"name":"v","webhookUrl":"https://example.com/v","headers":[{"key":"X-A","value":"a"DUP}]}`,
			`,"value":"b"`, "headers[0].value", tools, made},
		{"PATCH", toolPath, `{"description":"d"DUP}`, `,"description":"e"`, "description", toolPath, ok},
		// Calls: where the call goes, and its variables.
		{"POST", "/v1/calls", call(`DUP`), `,"toNumber":"+14155550198"`, "toNumber", "/v1/calls", made},
		{"POST", "/v1/calls", call(`,"variables":{"customer":{"name":"a"DUP}}`), `,"name":"b"`, "variables.customer.name", "/v1/calls", made},
		// Messages.
		{"POST", "/v1/messages", `{"to":"+14155550199","agentId":"` + agent + `","body":"Hi"DUP}`, `,"body":"Bye"`, "body", "/v1/messages", made},
		// Knowledge.
		{"POST", "/v1/knowledge-bases", `{"name":"K"DUP}`, `,"name":"L"`, "name", "/v1/knowledge-bases", made},
		{"POST", sources, `{"sourceType":"text","displayName":"D","content":"C"DUP}`, `,"content":"E"`, "content", sources, made},
		// The plain resources.
		{"POST", "/v1/folders", `{"name":"F2"DUP}`, `,"name":"F3"`, "name", "/v1/folders", made},
		{"PATCH", "/v1/folders/" + folder, `{"name":"F"DUP}`, `,"name":"G"`, "name", "/v1/folders/" + folder, ok},
		{"POST", "/v1/sip-trunks", `{"friendlyName":"T","host":"pbx.example.com"DUP}`, `,"host":"evil.example.com"`, "host", "/v1/sip-trunks", made},
		{"PATCH", "/v1/organization", `{"name":"Acme"DUP}`, `,"name":"Evil"`, "name", "/v1/organization", ok},
		// Test suites and their cases.
		{"PATCH", suitePath, `{"name":"S"DUP}`, `,"name":"T"`, "name", suitePath, ok},
		{"POST", suitePath + "/test-cases", `{"name":"C","script":"s","scoringRubric":"r","variables":{"v":1DUP}}`, `,"v":2`,
			"variables.v", suitePath + "/test-cases", made},
	}
}

// A retry whose body repeats a key is refused as any such body is, not
// answered with the first response: it reads as the first request only
// to a reader that keeps the last of the keys.
func TestDuplicateKeysAreRefusedBeforeIdempotencyKeys(t *testing.T) {
	e := newEnv(t)
	agent := e.createAgent(nil)["id"].(string)
	body := `{"agentId":"` + agent + `","fromNumber":"+14155550100",DUP"toNumber":"+14155550101"}`
	if r := e.requestWith("POST", "/v1/calls", strings.Replace(body, dupMark, "", 1), e.key, keyed("k")); r.Status != http.StatusCreated {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	r := e.requestWith("POST", "/v1/calls", strings.Replace(body, dupMark, `"toNumber":"+14155550199",`, 1), e.key, keyed("k"))
	if r.Status != http.StatusBadRequest || r.ErrorCode(t) != codeInvalidJSON || !slices.Equal(r.ErrorFields(t), []string{"toNumber"}) ||
		r.Header.Get(replayedHeader) != "" {
		t.Errorf("a retry repeating toNumber: %d %s (replayed %q)", r.Status, r.Body, r.Header.Get(replayedHeader))
	}
	if n := e.countCalls(); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

// An inbound-message receiver that answers a key twice is not obeyed
// either way: its answer is not JSON Parley reads, and the agent answers
// on its own, as for any answer not of the shape.
func TestInboundWebhookAnswerWithDuplicateKeys(t *testing.T) {
	b := newInboundBench(t, "Let me check.")
	hook := newReceiver(t)
	b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"], "messagingConfig": map[string]any{
		"inboundWebhookUrl": hook.URL + "/sms", "fromNumber": "+14155550100"}})
	for i, answer := range []string{
		`{"autoReply": true, "autoReply": false}`,
		`{"reply": "Maria will call you back.", "r\u0065ply": "Call us."}`,
		`{"reply": "Maria will call you back.", "meta": {"a": 1, "a": 2}}`,
	} {
		hook.set(200, answer)
		b.text("+14155550199", "+14155550100", "Can she call me?")
		if out := b.messages("OUTBOUND"); len(out) != i+1 || out[i]["body"] != "Let me check." || out[i]["generatedByLlm"] != true {
			t.Errorf("%s: replies %v", answer, out)
		}
	}
}
