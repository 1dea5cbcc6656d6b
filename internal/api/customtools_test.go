package api

import (
	"net/http"
	"strings"
	"testing"
)

func TestCustomTools(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(nil)
	base := "/v1/agents/" + a["id"].(string) + "/custom-tools"
	if got := e.must(http.StatusOK, "GET", base, nil).List(t); len(got) != 0 {
		t.Fatalf("new agent has tools: %v", got)
	}
	tool := e.create(base, map[string]any{
		"name": "lookup_order", "description": "Find an order", "webhookUrl": "https://example.com/orders",
		"schema":      map[string]any{"type": "object", "properties": map[string]any{"orderId": map[string]any{"type": "string"}}, "required": []any{"orderId"}},
		"headers":     []any{map[string]any{"key": "Authorization", "value": "Bearer abc"}},
		"queryParams": []any{map[string]any{"key": "source", "value": "parley"}},
	})
	if tool["enabled"] != true || tool["sendRawRequestBody"] != false || tool["agentId"] != a["id"] {
		t.Errorf("defaults: %v", tool)
	}
	bare := e.create(base, map[string]any{"name": "ping", "webhookUrl": "http://example.com/ping"})
	if s := bare["schema"].(map[string]any); s["type"] != "object" || len(bare["headers"].([]any)) != 0 {
		t.Errorf("default schema/headers: %v", bare)
	}
	list := e.must(http.StatusOK, "GET", base, nil).List(t)
	if len(list) != 2 || list[0]["name"] != "lookup_order" || list[1]["name"] != "ping" {
		t.Errorf("list = %v, want creation order", list)
	}
	if got := e.must(http.StatusOK, "GET", "/v1/agents/"+a["id"].(string), nil).Data(t)["customTools"].([]any); len(got) != 2 {
		t.Errorf("agent embeds %d tools", len(got))
	}
	tid := base + "/" + tool["id"].(string)
	p := e.must(http.StatusOK, "PATCH", tid, map[string]any{"enabled": false, "description": nil, "sendRawRequestBody": true}).Data(t)
	if p["enabled"] != false || p["description"] != nil || p["sendRawRequestBody"] != true || p["webhookUrl"] != "https://example.com/orders" {
		t.Errorf("patched tool = %v", p)
	}
	// Names: pattern, 64 characters, unique per agent, not a system tool's.
	e.create(base, map[string]any{"name": strings.Repeat("a", 64), "webhookUrl": "https://example.com"})
	for _, bad := range []string{strings.Repeat("a", 65), "", "has space", "dots.not.ok", "end_call", "transfer_to_number"} {
		e.invalid("validation_failed", "POST", base, map[string]any{"name": bad, "webhookUrl": "https://example.com"}, "name")
	}
	if r := e.do("POST", base, map[string]any{"name": "ping", "webhookUrl": "https://example.com"}); r.Status != http.StatusConflict || r.ErrorCode(t) != "conflict" {
		t.Errorf("duplicate name = %d %s", r.Status, r.Body)
	}
	if r := e.do("PATCH", tid, map[string]any{"name": "ping"}); r.Status != http.StatusConflict {
		t.Errorf("rename onto a taken name = %d %s", r.Status, r.Body)
	}
	// Another agent may use the same name.
	b := e.createAgent(nil)
	e.create("/v1/agents/"+b["id"].(string)+"/custom-tools", map[string]any{"name": "ping", "webhookUrl": "https://example.com"})
	e.invalid("validation_failed", "POST", base, map[string]any{}, "name", "webhookUrl")
	e.invalid("validation_failed", "POST", base, map[string]any{"name": "x", "webhookUrl": "example.com", "timeoutSeconds": 0}, "webhookUrl", "timeoutSeconds")
	e.invalid("validation_failed", "POST", base, map[string]any{"name": "x", "webhookUrl": "https://e.com", "schema": map[string]any{"type": "string"}}, "schema.type")
	e.invalid("validation_failed", "POST", base, map[string]any{"name": "x", "webhookUrl": "https://e.com",
		"headers": []any{map[string]any{"key": "Bad Header", "value": "v"}, map[string]any{"key": "X-Ok", "value": "a\r\nb"}}}, "headers[0].key", "headers[1].value")
	e.invalid("invalid_json", "POST", base, map[string]any{"name": "x", "webhookUrl": "https://e.com", "headers": []any{map[string]any{"key": "a", "value": "b", "extra": 1}}}, "headers[0].extra")
	e.invalid("validation_failed", "PATCH", tid, map[string]any{"name": nil, "enabled": nil}, "name", "enabled")
	// Tools of one agent are not reachable through another.
	e.must(http.StatusNotFound, "GET", "/v1/agents/"+b["id"].(string)+"/custom-tools/"+tool["id"].(string), nil)
	e.must(http.StatusNotFound, "PATCH", "/v1/agents/"+b["id"].(string)+"/custom-tools/"+tool["id"].(string), map[string]any{"enabled": true})
	e.must(http.StatusNoContent, "DELETE", tid, nil)
	e.must(http.StatusNotFound, "DELETE", tid, nil)
	e.must(http.StatusNotFound, "GET", "/v1/agents/0190d4c3-0000-7000-8000-000000000000/custom-tools", nil)
	e.must(http.StatusNotFound, "POST", "/v1/agents/0190d4c3-0000-7000-8000-000000000000/custom-tools", map[string]any{"name": "x", "webhookUrl": "https://e.com"})
}
