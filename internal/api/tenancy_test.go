package api

import (
	"net/http"
	"strings"
	"testing"
)

// Every route, driven with globex's key and acme's ids: nothing leaks, every
// id answers 404, and nothing acme owns changes.
func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	folder := e.create("/v1/folders", map[string]any{"name": "acme folder"})
	trunk := e.create("/v1/sip-trunks", map[string]any{"friendlyName": "acme trunk", "host": "sip.acme.example"})
	kb := e.create("/v1/knowledge-bases", map[string]any{"name": "acme kb"})
	source := e.create("/v1/knowledge-bases/"+kb["id"].(string)+"/sources", map[string]any{"sourceType": "text", "displayName": "Refunds", "content": "Refunds take 5 days."})
	conn := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": "AC", "authToken": "t", "fromNumber": "+14155550100"})
	e.server.Messages.Carrier = acceptAll
	msg := e.create("/v1/messages", map[string]any{"to": "+14155550190", "from": "+14155550191", "messagingConnectionId": conn["id"], "body": "hi"})
	agent := e.createAgent(map[string]any{"name": "acme agent", "folderId": folder["id"], "sipTrunkId": trunk["id"], "knowledgeBaseIds": []any{kb["id"]}, "messagingConnectionId": conn["id"]})
	tool := e.create("/v1/agents/"+agent["id"].(string)+"/custom-tools", map[string]any{"name": "acme_tool", "webhookUrl": "https://acme.example"})
	number := e.create("/v1/phone-numbers", map[string]any{"e164": "+14155550142", "agentId": agent["id"]})
	placed := e.create("/v1/calls", map[string]any{"agentId": agent["id"], "toNumber": "+14155550177", "fromNumber": "+14155550142"})
	before := e.must(http.StatusOK, "GET", "/v1/agents/"+agent["id"].(string), nil).Body
	campaign := e.newCampaign(agent["id"].(string), nil)
	e.must(http.StatusCreated, "POST", "/v1/campaigns/"+campaign["id"].(string)+"/recipients", map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550179"}}})
	suppressed := e.create("/v1/suppressions", map[string]any{"number": "+14155550180"})
	campaignBefore := e.must(http.StatusOK, "GET", "/v1/campaigns/"+campaign["id"].(string), nil).Body

	ids := map[string]string{
		"/v1/agents/{id}": agent["id"].(string), "/v1/folders/{id}": folder["id"].(string),
		"/v1/sip-trunks/{id}": trunk["id"].(string), "/v1/phone-numbers/{id}": number["id"].(string),
		"/v1/messaging-connections/{id}": conn["id"].(string), "/v1/knowledge-bases/{id}": kb["id"].(string),
		"/v1/calls/{id}": placed["id"].(string), "/v1/messages/{id}": msg["id"].(string),
		"/v1/campaigns/{id}": campaign["id"].(string), "/v1/suppressions/{id}": suppressed["id"].(string),
	}
	// A plausible body per route, so a 404 cannot come from validation.
	bodies := map[string]any{
		"PATCH /v1/agents/{id}":                        map[string]any{"name": "stolen"},
		"POST /v1/agents/{id}/custom-tools":            map[string]any{"name": "evil", "webhookUrl": "https://evil.example"},
		"PATCH /v1/agents/{id}/custom-tools/{toolId}":  map[string]any{"enabled": false},
		"PATCH /v1/folders/{id}":                       map[string]any{"name": "stolen"},
		"PATCH /v1/sip-trunks/{id}":                    map[string]any{"friendlyName": "stolen"},
		"PATCH /v1/phone-numbers/{id}":                 map[string]any{"agentId": nil},
		"PATCH /v1/knowledge-bases/{id}":               map[string]any{"name": "stolen"},
		"PATCH /v1/messaging-connections/{id}":         map[string]any{"accountSid": "ACstolen"},
		"DELETE /v1/agents/{id}/custom-tools/{toolId}": nil,
		"GET /v1/agents/{id}/custom-tools/{toolId}":    nil,
		"POST /v1/agents/{id}/duplicate":               nil,
		"GET /v1/agents/{id}/custom-tools":             nil,
		"POST /v1/knowledge-bases/{id}/sources":        map[string]any{"sourceType": "text", "displayName": "x", "content": "y"},
		"POST /v1/knowledge-bases/{id}/query":          map[string]any{"query": "refunds"},
		"PATCH /v1/campaigns/{id}":                     map[string]any{"name": "stolen"},
		"POST /v1/campaigns/{id}/recipients":           map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550181"}}},
	}
	checked := 0
	for _, rt := range e.server.routes() {
		method, path, _ := strings.Cut(rt.pattern, " ")
		if !strings.Contains(path, "{") || strings.HasPrefix(path, "/v1/test-suites/") {
			continue // test suites need runs of a running model: TestTestSuiteTenantIsolation
		}
		concrete := path
		for prefix, id := range ids {
			if strings.HasPrefix(path, strings.TrimSuffix(prefix, "{id}")) {
				concrete = strings.Replace(concrete, "{id}", id, 1)
			}
		}
		concrete = strings.Replace(concrete, "{toolId}", tool["id"].(string), 1)
		concrete = strings.Replace(concrete, "{sourceId}", source["id"].(string), 1)
		if strings.Contains(concrete, "{") {
			t.Errorf("route %s has no acme id to try", rt.pattern)
			continue
		}
		if rt.pattern == "POST /v1/messaging-connections/{id}/status" {
			continue // signed by the carrier, no key: TestMessageStatusCallbacks
		}
		r := e.request(method, concrete, bodies[rt.pattern], e.otherKey)
		if r.Status != http.StatusNotFound || r.ErrorCode(t) != "not_found" {
			t.Errorf("globex %s %s = %d %s, want 404", method, concrete, r.Status, r.Body)
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("only %d routes with ids checked", checked)
	}
	// Lists and batch-get show nothing of acme's.
	for _, path := range []string{"/v1/calls", "/v1/agents", "/v1/folders", "/v1/sip-trunks", "/v1/phone-numbers", "/v1/messaging-connections", "/v1/knowledge-bases",
		"/v1/campaigns", "/v1/suppressions", "/v1/campaigns?agentId=" + agent["id"].(string), "/v1/calls?campaignId=" + campaign["id"].(string)} {
		r := e.request("GET", path, nil, e.otherKey)
		if r.Status != http.StatusOK || len(r.List(t)) != 0 || r.JSON(t)["total"] != float64(0) {
			t.Errorf("globex GET %s = %d %s", path, r.Status, r.Body)
		}
	}
	if r := e.request("GET", "/v1/agents?folderId="+folder["id"].(string), nil, e.otherKey); len(r.List(t)) != 0 {
		t.Errorf("folder filter leaks: %s", r.Body)
	}
	// Foreign ids in bodies are refused as unknown, never used.
	r := e.request("POST", "/v1/phone-numbers", map[string]any{"e164": "+14155550143", "agentId": agent["id"]}, e.otherKey)
	if r.Status != http.StatusBadRequest {
		t.Errorf("assigning acme's agent from globex = %d", r.Status)
	}
	// acme's things are unchanged.
	if after := e.must(http.StatusOK, "GET", "/v1/agents/"+agent["id"].(string), nil).Body; string(after) != string(before) {
		t.Errorf("acme's agent changed:\n%s\n%s", before, after)
	}
	if n := len(e.must(http.StatusOK, "GET", "/v1/agents/"+agent["id"].(string)+"/custom-tools", nil).List(t)); n != 1 {
		t.Errorf("acme's agent has %d tools", n)
	}
	if c := e.must(http.StatusOK, "GET", "/v1/messaging-connections/"+conn["id"].(string), nil).Data(t); c["accountSid"] != "AC" {
		t.Errorf("globex changed acme's messaging connection: %v", c)
	}
	if countAgents(e) != 1 {
		t.Error("acme's agent count changed")
	}
	if after := e.must(http.StatusOK, "GET", "/v1/campaigns/"+campaign["id"].(string), nil).Body; string(after) != string(campaignBefore) {
		t.Errorf("acme's campaign changed:\n%s\n%s", campaignBefore, after)
	}
	if n := len(e.must(http.StatusOK, "GET", "/v1/campaigns/"+campaign["id"].(string)+"/recipients", nil).List(t)); n != 1 {
		t.Errorf("acme's campaign has %d recipients", n)
	}
	if n := len(e.must(http.StatusOK, "GET", "/v1/suppressions", nil).List(t)); n != 1 {
		t.Errorf("acme has %d suppressions", n)
	}
	// globex's own list is its own: acme's suppression does not stop its calls,
	// nor does its campaign take acme's agent.
	if r := e.request("POST", "/v1/suppressions", map[string]any{"number": "+14155550180"}, e.otherKey); r.Status != http.StatusCreated {
		t.Errorf("globex suppressing the same number = %d %s", r.Status, r.Body)
	}
	if r := e.request("POST", "/v1/campaigns", campaignBody(agent["id"].(string), nil), e.otherKey); r.Status != http.StatusBadRequest || !sameSet(r.ErrorFields(t), []string{"agentId"}) {
		t.Errorf("globex campaign with acme's agent = %d %s", r.Status, r.Body)
	}
	if c := e.must(http.StatusOK, "GET", "/v1/calls/"+placed["id"].(string), nil).Data(t); c["status"] == "CANCELED" {
		t.Error("globex canceled acme's call")
	}
	if r := e.request("POST", "/v1/calls/batch-get", map[string]any{"ids": []any{placed["id"]}}, e.otherKey); len(r.List(t)) != 0 {
		t.Errorf("call batch-get across organizations: %s", r.Body)
	}
	// globex cannot place a call with acme's agent.
	if r := e.request("POST", "/v1/calls", map[string]any{"agentId": agent["id"], "toNumber": "+14155550178", "fromNumber": "+14155550142"}, e.otherKey); r.Status != http.StatusBadRequest {
		t.Errorf("globex calling with acme's agent = %d", r.Status)
	}
}
