package api

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAgentPatchSemantics(t *testing.T) {
	e := newEnv(t)
	folder := e.create("/v1/folders", map[string]any{"name": "F"})
	a := e.createAgent(map[string]any{
		"firstMessage": "Hi", "llmTemperature": 0.5, "folderId": folder["id"], "interruptionThresholdMs": 900,
		"messagingConfig": map[string]any{"smsPrompt": "s"}, "mode": "conversation_flow",
	})
	id := a["id"].(string)
	time.Sleep(2 * time.Millisecond) // updatedAt has millisecond precision

	// Absent keys keep their value; present keys are set.
	p := e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"name": "Renamed"}).Data(t)
	if p["name"] != "Renamed" || p["firstMessage"] != "Hi" || p["llmTemperature"] != 0.5 || p["folderId"] != folder["id"] {
		t.Errorf("partial update lost values: %v", p)
	}
	if p["updatedAt"] == a["updatedAt"] || p["createdAt"] != a["createdAt"] {
		t.Errorf("timestamps: created %v→%v updated %v→%v", a["createdAt"], p["createdAt"], a["updatedAt"], p["updatedAt"])
	}
	// null clears nullable fields; interruptionThresholdMs returns to its default.
	p = e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{
		"firstMessage": nil, "folderId": nil, "llmTemperature": nil, "messagingConfig": nil, "interruptionThresholdMs": nil,
	}).Data(t)
	for _, k := range []string{"firstMessage", "folderId", "folder", "llmTemperature", "messagingConfig"} {
		if p[k] != nil {
			t.Errorf("%s = %v after null, want null", k, p[k])
		}
	}
	if p["interruptionThresholdMs"] != float64(500) {
		t.Errorf("interruptionThresholdMs = %v after null, want 500", p["interruptionThresholdMs"])
	}
	// Non-nullable fields refuse null; mode never changes, even to its own value.
	e.invalid("validation_failed", "PATCH", "/v1/agents/"+id, map[string]any{"name": nil, "promptTemplate": nil, "status": nil}, "name", "promptTemplate", "status")
	e.invalid("validation_failed", "PATCH", "/v1/agents/"+id, map[string]any{"mode": "single_prompt"}, "mode")
	e.invalid("validation_failed", "PATCH", "/v1/agents/"+id, map[string]any{"mode": "conversation_flow"}, "mode")
	e.invalid("validation_failed", "PATCH", "/v1/agents/"+id, map[string]any{"mode": nil}, "mode")
	got := e.must(http.StatusOK, "GET", "/v1/agents/"+id, nil).Data(t)
	if got["mode"] != "conversation_flow" || got["name"] != "Renamed" {
		t.Errorf("refused updates changed the agent: %v %v", got["mode"], got["name"])
	}
	// Nested typed objects are replaced whole.
	p = e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"warmTransferConfig": map[string]any{"holdMessage": "wait"}}).Data(t)
	p = e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"warmTransferConfig": map[string]any{"introMessage": "hi"}}).Data(t)
	if w := p["warmTransferConfig"].(map[string]any); w["introMessage"] != "hi" || w["holdMessage"] != nil {
		t.Errorf("warmTransferConfig = %v, want replaced", w)
	}
	// An empty patch changes nothing but is allowed.
	e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{})
	e.must(http.StatusNotFound, "PATCH", "/v1/agents/0190d4c3-0000-7000-8000-000000000000", map[string]any{"name": "x"})
	// knowledgeBaseIds replaces the assignment; [] and null clear it.
	kb1 := e.create("/v1/knowledge-bases", map[string]any{"name": "One"})
	kb2 := e.create("/v1/knowledge-bases", map[string]any{"name": "Two"})
	p = e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"knowledgeBaseIds": []any{kb1["id"], kb2["id"]}}).Data(t)
	if n := len(p["knowledgeBases"].([]any)); n != 2 {
		t.Errorf("knowledgeBases after assign = %d", n)
	}
	p = e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"knowledgeBaseIds": []any{kb2["id"]}}).Data(t)
	if kbs := p["knowledgeBaseIds"].([]any); len(kbs) != 1 || kbs[0] != kb2["id"] {
		t.Errorf("knowledgeBaseIds after replace = %v", kbs)
	}
	p = e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"knowledgeBaseIds": nil}).Data(t)
	if len(p["knowledgeBaseIds"].([]any)) != 0 {
		t.Errorf("knowledgeBaseIds after null = %v", p["knowledgeBaseIds"])
	}
}

func TestAgentDelete(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(nil)
	id := a["id"].(string)
	tool := e.create("/v1/agents/"+id+"/custom-tools", map[string]any{"name": "lookup", "webhookUrl": "https://example.com/t"})
	num := e.create("/v1/phone-numbers", map[string]any{"e164": "+14155550123", "agentId": id})
	kb := e.create("/v1/knowledge-bases", map[string]any{"name": "KB"})
	e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"knowledgeBaseIds": []any{kb["id"]}})

	r := e.must(http.StatusNoContent, "DELETE", "/v1/agents/"+id, nil)
	if len(r.Body) != 0 {
		t.Errorf("204 with a body: %q", r.Body)
	}
	e.must(http.StatusNotFound, "GET", "/v1/agents/"+id, nil)
	e.must(http.StatusNotFound, "DELETE", "/v1/agents/"+id, nil)
	e.must(http.StatusNotFound, "GET", "/v1/agents/"+id+"/custom-tools", nil)
	e.must(http.StatusNotFound, "GET", "/v1/agents/"+id+"/custom-tools/"+tool["id"].(string), nil)
	if n := e.must(http.StatusOK, "GET", "/v1/phone-numbers/"+num["id"].(string), nil).Data(t); n["agentId"] != nil {
		t.Errorf("phone number still assigned after delete: %v", n)
	}
	e.must(http.StatusOK, "GET", "/v1/knowledge-bases/"+kb["id"].(string), nil)
	if countAgents(e) != 0 {
		t.Error("deleted agent still listed")
	}
	// The released number can be assigned to another agent.
	b := e.createAgent(nil)
	e.must(http.StatusOK, "PATCH", "/v1/phone-numbers/"+num["id"].(string), map[string]any{"agentId": b["id"]})
}

func TestAgentDuplicate(t *testing.T) {
	e := newEnv(t)
	folder := e.create("/v1/folders", map[string]any{"name": "F"})
	kb := e.create("/v1/knowledge-bases", map[string]any{"name": "KB"})
	a := e.createAgent(map[string]any{
		"name": "Receptionist", "folderId": folder["id"], "knowledgeBaseIds": []any{kb["id"]}, "firstMessage": "Hello",
		"defaultVariables": map[string]any{"k": "v"}, "transferRoutes": []any{map[string]any{"to_number": "+14155550100", "condition": "c"}},
		"mode": "conversation_flow", "status": "disabled",
	})
	id := a["id"].(string)
	tool := e.create("/v1/agents/"+id+"/custom-tools", map[string]any{"name": "crm", "webhookUrl": "https://example.com/crm",
		"headers": []any{map[string]any{"key": "Authorization", "value": "Bearer x"}}})
	e.create("/v1/phone-numbers", map[string]any{"e164": "+14155550199", "agentId": id})

	d := e.must(http.StatusCreated, "POST", "/v1/agents/"+id+"/duplicate", nil).Data(t)
	if d["id"] == id || d["name"] != "Receptionist (Copy)" {
		t.Fatalf("duplicate id/name = %v %v", d["id"], d["name"])
	}
	for _, k := range []string{"promptTemplate", "firstMessage", "folderId", "mode", "status", "defaultVariables", "transferRoutes", "knowledgeBaseIds"} {
		if !jsonEqual(a[k], d[k]) {
			t.Errorf("%s: original %v, duplicate %v", k, a[k], d[k])
		}
	}
	if n := len(d["phoneNumbers"].([]any)); n != 0 {
		t.Errorf("duplicate took %d phone numbers", n)
	}
	tools := d["customTools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("duplicate has %d tools", len(tools))
	}
	dt := tools[0].(map[string]any)
	if dt["id"] == tool["id"] || dt["name"] != "crm" || dt["agentId"] != d["id"] || !jsonEqual(dt["headers"], tool["headers"]) {
		t.Errorf("duplicated tool = %v", dt)
	}
	// The original is untouched and keeps its number.
	o := e.must(http.StatusOK, "GET", "/v1/agents/"+id, nil).Data(t)
	if len(o["phoneNumbers"].([]any)) != 1 || len(o["customTools"].([]any)) != 1 {
		t.Errorf("original changed: %v", o)
	}
	// Changing the duplicate's tools leaves the original's alone.
	e.must(http.StatusNoContent, "DELETE", "/v1/agents/"+d["id"].(string)+"/custom-tools/"+dt["id"].(string), nil)
	if len(e.must(http.StatusOK, "GET", "/v1/agents/"+id+"/custom-tools", nil).List(t)) != 1 {
		t.Error("deleting the duplicate's tool removed the original's")
	}
	// A duplicate of a duplicate, and the 128-character limit.
	dd := e.must(http.StatusCreated, "POST", "/v1/agents/"+d["id"].(string)+"/duplicate", nil).Data(t)
	if dd["name"] != "Receptionist (Copy) (Copy)" {
		t.Errorf("second duplicate name = %v", dd["name"])
	}
	long := e.createAgent(map[string]any{"name": strings.Repeat("é", 128)})
	ld := e.must(http.StatusCreated, "POST", "/v1/agents/"+long["id"].(string)+"/duplicate", nil).Data(t)
	if want := strings.Repeat("é", 121) + " (Copy)"; ld["name"] != want {
		t.Errorf("long duplicate name = %q (%d chars), want %d chars", ld["name"], len([]rune(ld["name"].(string))), len([]rune(want)))
	}
	e.must(http.StatusNotFound, "POST", "/v1/agents/0190d4c3-0000-7000-8000-000000000000/duplicate", nil)
}

func TestAgentBatchGet(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(map[string]any{"name": "A"})
	b := e.createAgent(map[string]any{"name": "B"})
	const unknown = "0190d4c3-0000-7000-8000-000000000000"
	list := e.must(http.StatusOK, "POST", "/v1/agents/batch-get", map[string]any{"ids": []any{b["id"], unknown, a["id"], b["id"]}}).List(t)
	if len(list) != 2 || list[0]["id"] != b["id"] || list[1]["id"] != a["id"] {
		t.Fatalf("batch-get = %v, want [B A] in the order asked, unknown ids skipped, each once", names(list))
	}
	if _, ok := list[0]["promptTemplate"]; !ok {
		t.Error("full batch-get lacks promptTemplate")
	}
	min := e.must(http.StatusOK, "POST", "/v1/agents/batch-get", map[string]any{"ids": []any{a["id"]}, "minimal": true}).List(t)
	assertMinimal(t, min[0])
	ids := make([]any, 100)
	for i := range ids {
		ids[i] = unknown
	}
	if got := e.must(http.StatusOK, "POST", "/v1/agents/batch-get", map[string]any{"ids": ids}).List(t); len(got) != 0 {
		t.Errorf("100 unknown ids found %d", len(got))
	}
	e.invalid("validation_failed", "POST", "/v1/agents/batch-get", map[string]any{"ids": append(ids, unknown)}, "ids")
	e.invalid("validation_failed", "POST", "/v1/agents/batch-get", map[string]any{"ids": []any{}}, "ids")
	e.invalid("validation_failed", "POST", "/v1/agents/batch-get", map[string]any{}, "ids")
	e.invalid("validation_failed", "POST", "/v1/agents/batch-get", map[string]any{"ids": []any{"nope"}}, "ids[0]")
	e.invalid("invalid_json", "POST", "/v1/agents/batch-get", map[string]any{"ids": []any{1}}, "ids")
	e.invalid("invalid_json", "POST", "/v1/agents/batch-get", map[string]any{"ids": []any{unknown}, "minimal": "yes"}, "minimal")
	// Another organization's agents are not found.
	if got := e.request("POST", "/v1/agents/batch-get", map[string]any{"ids": []any{a["id"]}}, e.otherKey).List(t); len(got) != 0 {
		t.Errorf("batch-get across organizations found %v", got)
	}
}

// assertMinimal checks a minimal agent leaves out exactly what the spec says.
func assertMinimal(t *testing.T, a map[string]any) {
	t.Helper()
	for _, k := range []string{"promptTemplate", "flowDefinition", "defaultVariables", "testVariables", "runtimeConfig", "customTools", "knowledgeBases", "knowledgeBaseIds"} {
		if _, ok := a[k]; ok {
			t.Errorf("minimal agent has %s", k)
		}
	}
	for _, k := range []string{"id", "name", "status", "mode", "folder", "phoneNumbers", "firstMessage", "createdAt", "updatedAt"} {
		if _, ok := a[k]; !ok {
			t.Errorf("minimal agent lacks %s", k)
		}
	}
}

func names(list []map[string]any) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a["name"].(string)
	}
	return out
}
