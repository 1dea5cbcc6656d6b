package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/model"
)

func TestOpenAPIDocumentIsValid(t *testing.T) {
	c := loadContract(t) // loads and validates
	if !strings.HasPrefix(c.doc.OpenAPI, "3.1.") {
		t.Errorf("openapi is %q, want 3.1.x", c.doc.OpenAPI)
	}
	if !c.doc.IsOpenAPI31OrLater() {
		t.Error("kin-openapi does not treat the document as OpenAPI 3.1")
	}
	if got := c.server.String(); got != "http://127.0.0.1:8080" {
		t.Errorf("server is %q, want http://127.0.0.1:8080", got)
	}
	ids := map[string]string{}
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
			} else if prev, dup := ids[op.OperationID]; dup {
				t.Errorf("operationId %s is used by %s and %s %s", op.OperationID, prev, method, path)
			}
			ids[op.OperationID] = method + " " + path
		}
	}
}

// documentedOperations is every "METHOD /path" of the document.
func documentedOperations(doc *openapi3.T) map[string]*openapi3.Operation {
	ops := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+path] = op
		}
	}
	return ops
}

func routeTable(t *testing.T) []route {
	t.Helper()
	// Handlers are built from method values and never invoked here.
	return New(Config{}).routes()
}

func TestEveryRouteIsDocumented(t *testing.T) {
	c := loadContract(t)
	ops := documentedOperations(c.doc)
	served := map[string]bool{}
	for _, rt := range routeTable(t) {
		served[rt.pattern] = true
		op, ok := ops[rt.pattern]
		if !ok {
			t.Errorf("route %q is not documented in openapi.yaml", rt.pattern)
			continue
		}
		// Public: reachable without a key (no security, or an anonymous
		// alternative such as the recording's signed link).
		public := op.Security != nil && (len(*op.Security) == 0 || slices.ContainsFunc(*op.Security,
			func(r openapi3.SecurityRequirement) bool { return len(r) == 0 }))
		if public != rt.public {
			t.Errorf("%s: public is %v in the route table but the document says security %v", rt.pattern, rt.public, op.Security)
		}
	}
	for key := range ops {
		if !served[key] {
			t.Errorf("openapi.yaml documents %q, which the server does not route", key)
		}
	}
}

// TestEveryOperationDocumentsItsErrors checks that each operation lists the
// answers the middleware and handlers can give.
func TestEveryOperationDocumentsItsErrors(t *testing.T) {
	c := loadContract(t)
	ops := documentedOperations(c.doc)
	for _, rt := range routeTable(t) {
		op, ok := ops[rt.pattern]
		if !ok {
			continue // reported by TestEveryRouteIsDocumented
		}
		method, path, _ := strings.Cut(rt.pattern, " ")
		want := []string{"500"}
		// Every route but the metrics can answer 503: the database is
		// unavailable, or the server drains (the probes: their own 503).
		if rt.pattern != "GET /metrics" {
			want = append(want, "503")
		}
		if !rt.public {
			want = append(want, "400", "401", "429")
		}
		if strings.Contains(path, "{") {
			want = append(want, "404")
		}
		if op.RequestBody != nil {
			want = append(want, "413")
		}
		var success []string
		for code := range op.Responses.Map() {
			if strings.HasPrefix(code, "2") {
				success = append(success, code)
			}
		}
		// POST creates (201), except reads (batch-get, a knowledge-base
		// query), actions on a resource that change its state (cancel,
		// a campaign's start, pause and resume) and test generation
		// (nothing is saved), which answer 200, and a carrier's webhooks:
		// a status callback (204) and an inbound message (200, TwiML). A
		// suppression answers 201 when new, 200 when the number had one.
		wantSuccess := []string{"200"}
		switch {
		case method == http.MethodDelete || strings.HasSuffix(path, "/status"):
			wantSuccess = []string{"204"}
		case rt.pattern == "POST /v1/suppressions":
			wantSuccess = []string{"200", "201"}
		case method == http.MethodPost && !slices.ContainsFunc([]string{"/batch-get", "/cancel", "/query", "/inbound", "/generate-tests", "/start", "/pause", "/resume"},
			func(suffix string) bool { return strings.HasSuffix(path, suffix) }):
			wantSuccess = []string{"201"}
		}
		slices.Sort(success)
		if !slices.Equal(success, wantSuccess) {
			t.Errorf("%s: success responses %v, want %v", rt.pattern, success, wantSuccess)
		}
		for _, code := range want {
			if op.Responses.Value(code) == nil {
				t.Errorf("%s: response %s is not documented", rt.pattern, code)
			}
		}
	}
}

// recordingTB captures what check reports instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.errors = append(r.errors, "FATAL: "+fmt.Sprintf(format, args...))
}

// fullAgentView has every optional field set.
func fullAgentView() agent.View {
	now := time.Date(2025, 1, 31, 12, 0, 0, 0, time.UTC)
	s := func(v string) *string { return &v }
	i := func(v int) *int { return &v }
	f := func(v float64) *float64 { return &v }
	b := func(v bool) *bool { return &v }
	folderID, trunkID, kbID := model.NewID(), model.NewID(), model.NewID()
	a := model.Agent{
		ID: model.NewID(), Name: "Support", Status: model.AgentActive, Mode: model.ModeSinglePrompt,
		FolderID: &folderID, SIPTrunkID: &trunkID, MessagingConnectionID: s(model.NewPrefixedID("mc")),
		CreatedAt: now, UpdatedAt: now,
		Config: model.AgentConfig{
			PromptTemplate: "You help {{name}}.",
			MessagingConfig: &model.MessagingConfig{
				SMSPrompt: s("Be brief."), InboundWebhookURL: s("https://example.com/in"), FromNumber: s("+14155550100"),
				SendMessageEnabled: b(true), SendMessageDescriptionOverride: s("texts"), ConversationIdleResetDays: i(3),
			},
			DefaultVariables: map[string]any{"name": "Ada", "n": 1.5}, FirstMessage: s("Hi"), FirstMessageMode: s("static"),
			TurnTimeoutSeconds: i(-1), SilenceEndCallTimeoutSeconds: i(30), MaxConversationDurationSeconds: i(600),
			LLMTemperature: f(0.7), Timezone: s("Europe/Paris"), Language: s("en-US"),
			PreCallWebhookURL: s("https://example.com/pre"), PostCallWebhookURL: s("https://example.com/post"),
			EndCallEnabled: b(true), EndCallRulesOverride: s("end politely"), TransferEnabled: b(true),
			TransferRoutes:              []model.TransferRoute{{ToNumber: "+14155550101", Condition: "billing"}},
			TransferDescriptionOverride: s("transfer"), VoicemailEnabled: b(true), VoicemailAction: s("leave_message"),
			VoicemailMessage: s("Call back {{name}}"), VoiceID: s("v1"), VoiceTemperature: f(1), VoiceSpeed: f(1.2),
			RuntimeConfig: map[string]any{"x": []any{1, "y"}}, FlowDefinition: map[string]any{"nodes": []any{}},
			TestVariables: map[string]any{}, LLMReasoningEffort: s("high"), DisableInterruptions: b(false),
			InterruptionThresholdMs: 700, TransferMode: s("warm"),
			WarmTransferConfig: &model.WarmTransferConfig{
				HoldMessage: s("hold on"), HoldMusicEnabled: b(true), SummaryPrompt: s("summarize"),
				IntroMessage: s("meet"), ContinueRecordingAfterTransfer: b(false),
			},
			PlayKeypadTouchToneEnabled: b(true), PlayKeypadTouchToneDescriptionOverride: s("press"),
			KnowledgeBaseRetrievalMode: s("query_tool"), KnowledgeBaseChunks: i(5), KnowledgeBaseSimilarityThreshold: f(0.4),
		},
	}
	return agent.View{
		Agent:    a,
		Folder:   &model.Folder{ID: folderID, Name: "Sales", Color: s("#3b82f6")},
		SIPTrunk: &model.SIPTrunk{ID: trunkID, FriendlyName: "carrier"},
		PhoneNumbers: []model.PhoneNumber{
			{ID: model.NewID(), E164: "+14155550102", AgentID: &a.ID, CreatedAt: now, UpdatedAt: now},
		},
		CustomTools: []model.CustomTool{{
			ID: model.NewID(), AgentID: a.ID, Name: "lookup", Description: s("finds orders"),
			WebhookURL: "https://example.com/tool", Enabled: true,
			Schema:  map[string]any{"type": "object", "properties": map[string]any{}},
			Headers: []model.KeyValue{{Key: "X-Token", Value: "t"}}, QueryParams: []model.KeyValue{},
			TimeoutSeconds: i(10), CreatedAt: now, UpdatedAt: now,
		}},
		KnowledgeBases: []model.KnowledgeBaseRef{{ID: kbID, Name: "FAQ"}},
	}
}

// bareAgentView has only what a new agent always has.
func bareAgentView() agent.View {
	now := time.Date(2025, 1, 31, 12, 0, 0, 0, time.UTC)
	return agent.View{Agent: model.Agent{
		ID: model.NewID(), Name: "Bare", Status: model.AgentDisabled, Mode: model.ModeConversationFlow,
		Config:    model.AgentConfig{PromptTemplate: "p", InterruptionThresholdMs: model.DefaultInterruptionThresholdMs},
		CreatedAt: now, UpdatedAt: now,
	}}
}

// asMap is v as generic JSON, for editing into drifted shapes.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// exchange is a hand-made request and response.
type exchange struct {
	method, target string
	reqBody        any // nil for none
	status         int
	respBody       any // nil for none
	header         http.Header
}

func (e exchange) run(t *testing.T, c *contract) []string {
	t.Helper()
	var reqBody, respBody []byte
	if e.reqBody != nil {
		reqBody, _ = json.Marshal(e.reqBody)
	}
	if e.respBody != nil {
		respBody, _ = json.Marshal(e.respBody)
	}
	req := httptest.NewRequest(e.method, e.target, strings.NewReader(string(reqBody)))
	req.Header.Set("x-api-key", "pk_live_test")
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	header := http.Header{"X-Request-Id": {"req_test"}}
	if respBody != nil {
		header.Set("Content-Type", "application/json")
	}
	for k, v := range e.header {
		if v == nil {
			header.Del(k)
		} else {
			header[k] = v
		}
	}
	resp := &http.Response{StatusCode: e.status, Header: header, Request: req}
	rec := &recordingTB{TB: t}
	c.check(rec, req, reqBody, resp, respBody)
	return rec.errors
}

func TestContractAcceptsServerShapes(t *testing.T) {
	c := loadContract(t)
	full, bare := fullAgentView(), bareAgentView()
	agentPath := "/v1/agents/" + full.ID
	page := func(data any) map[string]any {
		return map[string]any{"data": data, "page": 1, "pageSize": 25, "total": 2, "hasNextPage": false}
	}
	problem := func(code string, details ...map[string]any) map[string]any {
		e := map[string]any{"code": code, "message": "m"}
		if len(details) > 0 {
			e["details"] = details
		}
		return map[string]any{"error": e}
	}
	cases := map[string]exchange{
		"full agent": {method: "GET", target: agentPath, status: 200, respBody: single{presentAgent(full, false)}},
		"bare agent": {method: "GET", target: agentPath, status: 200, respBody: single{presentAgent(bare, false)}},
		"created": {method: "POST", target: "/v1/agents", status: 201,
			reqBody: map[string]any{"name": "a", "promptTemplate": "p", "folderId": nil, "mode": "conversation_flow",
				"flowDefinition": validFlow(), "customTools": lookupTool()},
			respBody: single{presentAgent(bare, false)}},
		"updated": {method: "PATCH", target: agentPath, status: 200,
			reqBody:  map[string]any{"firstMessage": nil, "transferRoutes": []any{map[string]any{"to_number": "+14155550100", "condition": "x"}}},
			respBody: single{presentAgent(full, false)}},
		"list": {method: "GET", target: "/v1/agents?page=1&pageSize=25&folderId=none&sortBy=name", status: 200,
			respBody: page(presentAgents([]agent.View{full, bare}, false))},
		"minimal list": {method: "GET", target: "/v1/agents?minimal=true", status: 200,
			respBody: page(presentAgents([]agent.View{full, bare}, true))},
		"minimal batch": {method: "POST", target: "/v1/agents/batch-get", status: 200,
			reqBody:  map[string]any{"ids": []string{full.ID}, "minimal": true},
			respBody: single{presentAgents([]agent.View{full}, true)}},
		"deleted": {method: "DELETE", target: agentPath, status: 204},
		"validation failed": {method: "POST", target: "/v1/agents", reqBody: map[string]any{"name": 5}, status: 400,
			respBody: problem("invalid_json", map[string]any{"field": "name", "message": "must be a string"})},
		"unknown agent":   {method: "GET", target: agentPath, status: 404, respBody: problem("not_found")},
		"malformed id":    {method: "GET", target: "/v1/agents/nope", status: 404, respBody: problem("not_found")},
		"unknown route":   {method: "GET", target: "/v1/nothing", status: 404, respBody: problem("not_found")},
		"wrong method":    {method: "PUT", target: agentPath, status: 405, respBody: problem("method_not_allowed"), header: http.Header{"Allow": {"GET, PATCH, DELETE"}}},
		"unauthorized":    {method: "GET", target: "/v1/agents", status: 401, respBody: problem("unauthorized")},
		"rate limited":    {method: "GET", target: "/v1/agents", status: 429, respBody: problem("rate_limited"), header: http.Header{"Retry-After": {"1"}}},
		"tool name taken": {method: "POST", target: agentPath + "/custom-tools", reqBody: map[string]any{"name": "x"}, status: 409, respBody: problem("conflict")},
		"unclean path":    {method: "GET", target: "/v1//agents", status: 404, respBody: problem("not_found")},
		"health":          {method: "GET", target: "/healthz", status: 200, respBody: map[string]any{"status": "ok"}},
		"unavailable":     {method: "GET", target: agentPath, status: 503, respBody: problem("unavailable"), header: http.Header{"Retry-After": {"5"}}},
		"ready":           {method: "GET", target: "/readyz", status: 200, respBody: map[string]any{"status": "ready"}},
		"draining":        {method: "GET", target: "/readyz", status: 503, respBody: map[string]any{"status": "draining"}},
	}
	for name, e := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // the harness is shared by parallel tests
			for _, msg := range e.run(t, c) {
				t.Error(msg)
			}
		})
	}
}

func TestContractCatchesDrift(t *testing.T) {
	c := loadContract(t)
	full := fullAgentView()
	agentPath := "/v1/agents/" + full.ID
	edited := func(edit func(m map[string]any)) map[string]any {
		m := asMap(t, presentAgent(full, false))
		edit(m)
		return map[string]any{"data": m}
	}
	cases := map[string]exchange{
		"agent missing name": {method: "GET", target: agentPath, status: 200,
			respBody: edited(func(m map[string]any) { delete(m, "name") })},
		"agent with an extra key": {method: "GET", target: agentPath, status: 200,
			respBody: edited(func(m map[string]any) { m["bogus"] = true })},
		"agent name of the wrong type": {method: "GET", target: agentPath, status: 200,
			respBody: edited(func(m map[string]any) { m["name"] = 5 })},
		"unset field omitted instead of null": {method: "GET", target: agentPath, status: 200,
			respBody: edited(func(m map[string]any) { delete(m, "voiceId") })},
		"minimal agent where a full one is due": {method: "GET", target: agentPath, status: 200,
			respBody: single{presentAgent(full, true)}},
		"half-minimal agent in a list": {method: "POST", target: "/v1/agents/batch-get", status: 200,
			reqBody:  map[string]any{"ids": []string{full.ID}},
			respBody: map[string]any{"data": []any{edited(func(m map[string]any) { delete(m, "runtimeConfig") })["data"]}}},
		"extra key in messagingConfig": {method: "GET", target: agentPath, status: 200,
			respBody: edited(func(m map[string]any) { m["messagingConfig"].(map[string]any)["bogus"] = 1 })},
		"id that is not a UUID": {method: "GET", target: agentPath, status: 200,
			respBody: edited(func(m map[string]any) { m["id"] = "agent-1" })},
		"timestamp that is not a date-time": {method: "GET", target: agentPath, status: 200,
			respBody: edited(func(m map[string]any) { m["createdAt"] = "yesterday" })},
		"webhook URL that is not absolute": {method: "GET", target: agentPath, status: 200,
			respBody: edited(func(m map[string]any) { m["preCallWebhookUrl"] = "/relative" })},
		"redirect without Location": {method: "GET", target: "/v1//agents", status: 301},
		"out-of-enum status": {method: "GET", target: agentPath, status: 200,
			respBody: edited(func(m map[string]any) { m["status"] = "paused" })},
		"unwrapped resource": {method: "GET", target: agentPath, status: 200,
			respBody: presentAgent(full, false)},
		"page without hasNextPage": {method: "GET", target: "/v1/agents", status: 200,
			respBody: map[string]any{"data": []any{}, "page": 1, "pageSize": 25, "total": 0}},
		"undocumented status": {method: "GET", target: agentPath, status: http.StatusTeapot,
			respBody: map[string]any{"error": map[string]any{"code": "not_found", "message": "m"}}},
		"wrong error code for the status": {method: "GET", target: agentPath, status: 404,
			respBody: map[string]any{"error": map[string]any{"code": "conflict", "message": "m"}}},
		"error without message": {method: "GET", target: "/v1/agents", status: 401,
			respBody: map[string]any{"error": map[string]any{"code": "unauthorized"}}},
		"400 without details": {method: "POST", target: "/v1/agents", reqBody: map[string]any{}, status: 400,
			respBody: map[string]any{"error": map[string]any{"code": "validation_failed", "message": "m"}}},
		"429 without Retry-After": {method: "GET", target: "/v1/agents", status: 429,
			respBody: map[string]any{"error": map[string]any{"code": "rate_limited", "message": "m"}}},
		"503 without Retry-After": {method: "GET", target: "/v1/agents", status: 503,
			respBody: map[string]any{"error": map[string]any{"code": "unavailable", "message": "m"}}},
		"readiness in the error shape": {method: "GET", target: "/readyz", status: 503,
			respBody: map[string]any{"error": map[string]any{"code": "unavailable", "message": "m"}}},
		"missing X-Request-Id": {method: "GET", target: agentPath, status: 200,
			respBody: single{presentAgent(full, false)}, header: http.Header{"X-Request-Id": nil}},
		"accepted request that breaks the document": {method: "POST", target: "/v1/agents", status: 201,
			reqBody:  map[string]any{"name": "a"}, // no promptTemplate
			respBody: single{presentAgent(full, false)}},
		"custom tools accepted on update": {method: "PATCH", target: agentPath, status: 200,
			reqBody:  map[string]any{"customTools": lookupTool()},
			respBody: single{presentAgent(full, false)}},
		"undocumented route answered": {method: "GET", target: "/v1/undocumented", status: 200,
			respBody: map[string]any{"data": []any{}}},
		"unknown route not in the house shape": {method: "GET", target: "/v1/nothing", status: 404,
			respBody: map[string]any{"message": "404 page not found"}},
		"delete answering a body": {method: "DELETE", target: agentPath, status: 200,
			respBody: map[string]any{"data": nil}},
	}
	for name, e := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // the harness is shared by parallel tests
			errs := e.run(t, c)
			if len(errs) == 0 {
				t.Errorf("check reported nothing for %s", name)
			}
			for _, msg := range errs {
				if !strings.Contains(msg, e.method+" ") || !strings.Contains(msg, fmt.Sprint(e.status)) {
					t.Errorf("report does not name method and status: %s", msg)
				}
			}
			t.Log(strings.Join(errs, "\n"))
		})
	}
	// The agent minimal form drops exactly these keys; the document's
	// dependentRequired must list the same ones.
	got := slices.Sorted(maps.Keys(minimalOmits))
	schema := c.doc.Components.Schemas["AgentMaybeMinimal"].Value
	want := append([]string{"promptTemplate"}, schema.DependentRequired["promptTemplate"]...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("minimal agents omit %v, the document's AgentMaybeMinimal says %v", got, want)
	}
}
