package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func TestFolders(t *testing.T) {
	e := newEnv(t)
	f := e.create("/v1/folders", map[string]any{"name": "Sales", "color": "#3B82F6"})
	bare := e.create("/v1/folders", map[string]any{"name": strings.Repeat("f", 128)})
	if bare["color"] != nil {
		t.Errorf("color default = %v", bare["color"])
	}
	e.invalid("validation_failed", "POST", "/v1/folders", map[string]any{"name": strings.Repeat("f", 129), "color": "blue"}, "name", "color")
	e.invalid("validation_failed", "POST", "/v1/folders", map[string]any{}, "name")
	id := "/v1/folders/" + f["id"].(string)
	p := e.must(http.StatusOK, "PATCH", id, map[string]any{"name": "Renamed", "color": nil}).Data(t)
	if p["name"] != "Renamed" || p["color"] != nil {
		t.Errorf("patched folder = %v", p)
	}
	a := e.createAgent(map[string]any{"folderId": f["id"]})
	if got := e.must(http.StatusOK, "GET", "/v1/agents/"+a["id"].(string), nil).Data(t)["folder"].(map[string]any); got["name"] != "Renamed" {
		t.Errorf("agent's folder = %v", got)
	}
	if r := e.must(http.StatusOK, "GET", "/v1/folders?pageSize=1", nil).JSON(t); r["total"] != float64(2) || r["hasNextPage"] != true {
		t.Errorf("folder list = %v", r)
	}
	e.must(http.StatusNoContent, "DELETE", id, nil)
	e.must(http.StatusNotFound, "GET", id, nil)
	if got := e.must(http.StatusOK, "GET", "/v1/agents/"+a["id"].(string), nil).Data(t); got["folderId"] != nil || got["folder"] != nil {
		t.Errorf("agent keeps a deleted folder: %v %v", got["folderId"], got["folder"])
	}
}

func TestSIPTrunks(t *testing.T) {
	e := newEnv(t)
	tr := e.create("/v1/sip-trunks", map[string]any{
		"friendlyName": "Telnyx", "host": "sip.telnyx.com", "port": 5061, "transport": "tls",
		"username": "u", "password": "s3cret", "inboundUsername": "in", "inboundPassword": "in-s3cret",
		"inboundAllowedCidrs": []any{"203.0.113.0/24", "198.51.100.7"},
	})
	if strings.Contains(string(e.do("GET", "/v1/sip-trunks/"+tr["id"].(string), nil).Body), "s3cret") {
		t.Fatal("a trunk password was returned")
	}
	if tr["passwordSet"] != true || tr["inboundPasswordSet"] != true {
		t.Errorf("password flags = %v %v", tr["passwordSet"], tr["inboundPasswordSet"])
	}
	// Stored sealed: the database does not hold the password in clear.
	var stored []byte
	e.store.View(context.Background(), func(tx store.Tx) error {
		k, err := tx.GetSIPTrunk(context.Background(), orgOf(t, e, e.key), tr["id"].(string))
		stored = k.Password
		return err
	})
	if opened, err := e.box.Open(stored); err != nil || opened != "s3cret" || strings.Contains(string(stored), "s3cret") {
		t.Errorf("stored password %q opens to %q (%v)", stored, opened, err)
	}
	def := e.create("/v1/sip-trunks", map[string]any{"friendlyName": "PBX", "host": "10.0.0.5"})
	if def["transport"] != "udp" || def["port"] != nil || def["passwordSet"] != false || def["callsPerSecond"] != nil {
		t.Errorf("defaults = %v", def)
	}
	// callsPerSecond: the trunk's own limit; null the server's; bad values change nothing.
	defID := "/v1/sip-trunks/" + def["id"].(string)
	if p := e.must(http.StatusOK, "PATCH", defID, map[string]any{"callsPerSecond": 2.5}).Data(t); p["callsPerSecond"] != 2.5 {
		t.Errorf("callsPerSecond = %v, want 2.5", p["callsPerSecond"])
	}
	for _, bad := range []any{-1, 10001} {
		e.invalid("validation_failed", "PATCH", defID, map[string]any{"callsPerSecond": bad}, "callsPerSecond")
	}
	e.invalid("invalid_json", "PATCH", defID, map[string]any{"callsPerSecond": "5"}, "callsPerSecond")
	if got := e.must(http.StatusOK, "GET", defID, nil).Data(t); got["callsPerSecond"] != 2.5 {
		t.Errorf("after refused changes callsPerSecond = %v, want 2.5", got["callsPerSecond"])
	}
	if p := e.must(http.StatusOK, "PATCH", defID, map[string]any{"callsPerSecond": nil}).Data(t); p["callsPerSecond"] != nil {
		t.Errorf("callsPerSecond after null = %v", p["callsPerSecond"])
	}
	loop := e.create("/v1/sip-trunks", map[string]any{"friendlyName": "Loop", "transport": "loopback"})
	if loop["host"] != nil {
		t.Errorf("loopback trunk host = %v", loop["host"])
	}
	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "x"}, "host")
	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "x", "transport": "loopback", "host": "a.b"}, "host")
	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{
		"friendlyName": "", "host": "sip://bad", "port": 70000, "transport": "sctp", "inboundAllowedCidrs": []any{"300.1.1.1/8"},
	}, "friendlyName", "host", "port", "transport", "inboundAllowedCidrs[0]")
	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "x", "host": "h.example", "port": 0}, "port")
	// PATCH: null clears the password; switching away from loopback needs a host.
	id := "/v1/sip-trunks/" + tr["id"].(string)
	if p := e.must(http.StatusOK, "PATCH", id, map[string]any{"password": nil, "port": nil}).Data(t); p["passwordSet"] != false || p["port"] != nil || p["host"] != "sip.telnyx.com" {
		t.Errorf("patched trunk = %v", p)
	}
	e.invalid("validation_failed", "PATCH", "/v1/sip-trunks/"+loop["id"].(string), map[string]any{"transport": "udp"}, "host")
	e.must(http.StatusOK, "PATCH", "/v1/sip-trunks/"+loop["id"].(string), map[string]any{"transport": "udp", "host": "pbx.local"})
	// Deleting a trunk unassigns it from agents and numbers.
	a := e.createAgent(map[string]any{"sipTrunkId": tr["id"]})
	n := e.create("/v1/phone-numbers", map[string]any{"e164": "+14155550111", "sipTrunkId": tr["id"]})
	e.must(http.StatusNoContent, "DELETE", id, nil)
	if got := e.must(http.StatusOK, "GET", "/v1/agents/"+a["id"].(string), nil).Data(t); got["sipTrunkId"] != nil || got["sipTrunk"] != nil {
		t.Errorf("agent keeps deleted trunk: %v", got["sipTrunk"])
	}
	if got := e.must(http.StatusOK, "GET", "/v1/phone-numbers/"+n["id"].(string), nil).Data(t); got["sipTrunkId"] != nil {
		t.Errorf("number keeps deleted trunk")
	}
}

func TestPhoneNumbers(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(map[string]any{"name": "A"})
	b := e.createAgent(map[string]any{"name": "B"})
	n := e.create("/v1/phone-numbers", map[string]any{"e164": "+14155550100", "agentId": a["id"]})
	got := e.must(http.StatusOK, "GET", "/v1/agents/"+a["id"].(string), nil).Data(t)["phoneNumbers"].([]any)
	if len(got) != 1 || got[0].(map[string]any)["e164"] != "+14155550100" {
		t.Fatalf("agent phoneNumbers = %v", got)
	}
	id := "/v1/phone-numbers/" + n["id"].(string)
	// One agent at a time: assigning to another agent is a conflict until released.
	if r := e.do("PATCH", id, map[string]any{"agentId": b["id"]}); r.Status != http.StatusConflict || r.ErrorCode(t) != "conflict" {
		t.Fatalf("reassign = %d %s", r.Status, r.Body)
	}
	e.must(http.StatusOK, "PATCH", id, map[string]any{"agentId": a["id"]}) // same agent: fine
	e.must(http.StatusOK, "PATCH", id, map[string]any{"agentId": nil})
	if p := e.must(http.StatusOK, "PATCH", id, map[string]any{"agentId": b["id"]}).Data(t); p["agentId"] != b["id"] {
		t.Errorf("assigned to %v", p["agentId"])
	}
	// A number exists once in the deployment.
	if r := e.do("POST", "/v1/phone-numbers", map[string]any{"e164": "+14155550100"}); r.Status != http.StatusConflict {
		t.Errorf("same number twice = %d", r.Status)
	}
	if r := e.request("POST", "/v1/phone-numbers", map[string]any{"e164": "+14155550100"}, e.otherKey); r.Status != http.StatusConflict {
		t.Errorf("same number in another organization = %d", r.Status)
	}
	for _, bad := range []string{"14155550100", "+0123", "+1", "+1234567890123456", "+1 415 555"} {
		e.invalid("validation_failed", "POST", "/v1/phone-numbers", map[string]any{"e164": bad}, "e164")
	}
	e.create("/v1/phone-numbers", map[string]any{"e164": "+123456789012345"})
	e.invalid("validation_failed", "POST", "/v1/phone-numbers", map[string]any{"e164": "+14155550999", "agentId": "0190d4c3-0000-7000-8000-000000000000", "sipTrunkId": "x"}, "agentId", "sipTrunkId")
	if r := e.must(http.StatusOK, "GET", "/v1/phone-numbers?agentId="+b["id"].(string), nil).List(t); len(r) != 1 {
		t.Errorf("filter by agent = %d numbers", len(r))
	}
	e.invalid("validation_failed", "GET", "/v1/phone-numbers?agentId=nope", nil, "agentId")
	e.must(http.StatusNoContent, "DELETE", id, nil)
	if got := e.must(http.StatusOK, "GET", "/v1/agents/"+b["id"].(string), nil).Data(t)["phoneNumbers"].([]any); len(got) != 0 {
		t.Errorf("deleted number still on agent")
	}
}

func TestMessagingConnections(t *testing.T) {
	e := newEnv(t)
	c := e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": "AC123", "authToken": "tok-s3cret", "fromNumber": "+14155550100", "name": "Main"})
	if c["baseUrl"] != "https://api.twilio.com" || c["authTokenSet"] != true || c["inboundUrl"] != nil || !strings.HasPrefix(c["id"].(string), "mc_") {
		t.Errorf("connection = %v", c)
	}
	if strings.Contains(string(e.do("GET", "/v1/messaging-connections/"+c["id"].(string), nil).Body), "tok-s3cret") {
		t.Fatal("auth token returned")
	}
	e.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "baseUrl": "http://127.0.0.1:9999", "accountSid": "AC1", "authToken": "t", "messagingServiceSid": "MG1"})
	e.invalid("validation_failed", "POST", "/v1/messaging-connections", map[string]any{}, "provider", "accountSid", "authToken", "fromNumber")
	e.invalid("validation_failed", "POST", "/v1/messaging-connections", map[string]any{"provider": "plivo", "accountSid": "A", "authToken": "t", "fromNumber": "555", "baseUrl": "x"}, "provider", "fromNumber", "baseUrl")
	a := e.createAgent(map[string]any{"messagingConnectionId": c["id"]})
	if r := e.must(http.StatusOK, "GET", "/v1/messaging-connections", nil).JSON(t); r["total"] != float64(2) {
		t.Errorf("list total = %v", r["total"])
	}
	e.must(http.StatusMethodNotAllowed, "PATCH", "/v1/messaging-connections/"+c["id"].(string), map[string]any{})
	e.must(http.StatusNoContent, "DELETE", "/v1/messaging-connections/"+c["id"].(string), nil)
	e.must(http.StatusNotFound, "GET", "/v1/messaging-connections/"+c["id"].(string), nil)
	e.must(http.StatusNotFound, "GET", "/v1/messaging-connections/not-an-id", nil)
	if got := e.must(http.StatusOK, "GET", "/v1/agents/"+a["id"].(string), nil).Data(t); got["messagingConnectionId"] != nil {
		t.Errorf("agent keeps deleted connection")
	}
}

func TestKnowledgeBases(t *testing.T) {
	e := newEnv(t)
	kb := e.create("/v1/knowledge-bases", map[string]any{"name": "Policies", "description": "refunds"})
	if kb["sourceCount"] != float64(0) || len(kb["sources"].([]any)) != 0 {
		t.Errorf("new kb = %v", kb)
	}
	e.invalid("validation_failed", "POST", "/v1/knowledge-bases", map[string]any{"name": ""}, "name")
	id := "/v1/knowledge-bases/" + kb["id"].(string)
	if p := e.must(http.StatusOK, "PATCH", id, map[string]any{"description": nil}).Data(t); p["description"] != nil || p["name"] != "Policies" {
		t.Errorf("patched = %v", p)
	}
	a := e.createAgent(map[string]any{"knowledgeBaseIds": []any{kb["id"]}})
	e.must(http.StatusNoContent, "DELETE", id, nil)
	if got := e.must(http.StatusOK, "GET", "/v1/agents/"+a["id"].(string), nil).Data(t); len(got["knowledgeBases"].([]any)) != 0 {
		t.Errorf("agent keeps deleted kb")
	}
}

func TestOrganization(t *testing.T) {
	e := newEnv(t)
	o := e.must(http.StatusOK, "GET", "/v1/organization", nil).Data(t)
	if o["name"] != "acme" || o["concurrencyLimit"] != float64(10) || o["webhookSigningEnabled"] != false {
		t.Errorf("organization = %v", o)
	}
	p := e.must(http.StatusOK, "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 3, "name": "Acme Inc"}).Data(t)
	if p["concurrencyLimit"] != float64(3) || p["name"] != "Acme Inc" {
		t.Errorf("patched = %v", p)
	}
	e.invalid("validation_failed", "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 0, "name": ""}, "concurrencyLimit", "name")
	e.invalid("invalid_json", "PATCH", "/v1/organization", map[string]any{"id": "x"}, "id")
	if r := e.do("PATCH", "/v1/organization", map[string]any{"name": "globex"}); r.Status != http.StatusConflict {
		t.Errorf("taking another organization's name = %d", r.Status)
	}
	sec := e.must(http.StatusCreated, "POST", "/v1/organization/webhook-secret", nil).Data(t)["secret"].(string)
	if !strings.HasPrefix(sec, "whsec_") {
		t.Errorf("secret = %q", sec)
	}
	if e.must(http.StatusOK, "GET", "/v1/organization", nil).Data(t)["webhookSigningEnabled"] != true {
		t.Error("signing not enabled after rotate")
	}
	e.must(http.StatusNoContent, "DELETE", "/v1/organization/webhook-secret", nil)
	if e.must(http.StatusOK, "GET", "/v1/organization", nil).Data(t)["webhookSigningEnabled"] != false {
		t.Error("signing still enabled after delete")
	}
	if other := e.request("GET", "/v1/organization", nil, e.otherKey).Data(t); other["name"] != "globex" || other["concurrencyLimit"] != float64(10) {
		t.Errorf("other organization changed: %v", other)
	}
}

// orgOf is the organization id of key.
func orgOf(t *testing.T, e *env, key string) string {
	t.Helper()
	return e.request("GET", "/v1/organization", nil, key).Data(t)["id"].(string)
}

func TestKnowledgeSources(t *testing.T) {
	e := newEnv(t)
	kb := e.create("/v1/knowledge-bases", map[string]any{"name": "Policies"})
	base := "/v1/knowledge-bases/" + kb["id"].(string)
	content := "Refunds are issued within 14 days. Keep your receipt. Déjà vu costs extra."
	src := e.create(base+"/sources", map[string]any{"sourceType": "text", "displayName": "Refunds", "content": content})
	if src["knowledgeBaseId"] != kb["id"] || src["mimeType"] != "text/plain" || src["fileSize"] != float64(len(content)) ||
		src["content"] != content || src["errorMessage"] != nil || src["originalUrl"] != nil {
		t.Errorf("source = %v", src)
	}
	got := e.must(http.StatusOK, "GET", base, nil).Data(t)
	if got["sourceCount"] != float64(1) || len(got["sources"].([]any)) != 1 {
		t.Errorf("kb = %v", got)
	}
	if s := e.must(http.StatusOK, "GET", base+"/sources/"+src["id"].(string), nil).Data(t); s["displayName"] != "Refunds" {
		t.Errorf("get source = %v", s)
	}
	if l := e.must(http.StatusOK, "GET", base+"/sources", nil).JSON(t)["data"].([]any); len(l) != 1 {
		t.Errorf("sources = %v", l)
	}
	// Every limit, on both sides.
	ok := map[string]any{"sourceType": "text", "displayName": strings.Repeat("n", 256), "content": strings.Repeat("é", 100000)}
	e.create(base+"/sources", ok)
	for field, bad := range map[string]any{"sourceType": "url", "displayName": strings.Repeat("n", 257), "content": strings.Repeat("é", 100001)} {
		body := map[string]any{"sourceType": "text", "displayName": "x", "content": "y"}
		body[field] = bad
		e.invalid("validation_failed", "POST", base+"/sources", body, field)
	}
	for _, field := range []string{"sourceType", "displayName", "content"} {
		body := map[string]any{"sourceType": "text", "displayName": "x", "content": "y"}
		delete(body, field)
		e.invalid("validation_failed", "POST", base+"/sources", body, field)
		body[field] = nil
		e.invalid("validation_failed", "POST", base+"/sources", body, field)
	}
	e.invalid("validation_failed", "POST", base+"/sources", map[string]any{"sourceType": "text", "displayName": " ", "content": "y"}, "displayName")

	// Query: what an agent would get, with limits.
	hits := e.must(http.StatusOK, "POST", base+"/query", map[string]any{"query": "How long do refunds take?"}).JSON(t)["data"].([]any)
	if len(hits) == 0 {
		t.Fatal("no hits")
	}
	h := hits[0].(map[string]any)
	if h["sourceId"] != src["id"] || h["displayName"] != "Refunds" || !strings.Contains(h["text"].(string), "14 days") || h["score"].(float64) <= 0 || h["score"].(float64) > 1 {
		t.Errorf("hit = %v", h)
	}
	if hits := e.must(http.StatusOK, "POST", base+"/query", map[string]any{"query": "refunds", "chunks": 1, "similarityThreshold": 1}).JSON(t)["data"].([]any); len(hits) != 1 {
		t.Errorf("chunks 1, threshold 1: %v", hits)
	}
	e.must(http.StatusOK, "POST", base+"/query", map[string]any{"query": strings.Repeat("q", 2000), "chunks": 20, "similarityThreshold": 0})
	for field, bad := range map[string]any{"query": strings.Repeat("q", 2001), "chunks": 21, "similarityThreshold": 1.01} {
		body := map[string]any{"query": "refunds"}
		body[field] = bad
		e.invalid("validation_failed", "POST", base+"/query", body, field)
	}
	e.invalid("validation_failed", "POST", base+"/query", map[string]any{"query": "refunds", "chunks": 0}, "chunks")
	e.invalid("validation_failed", "POST", base+"/query", map[string]any{"query": "refunds", "similarityThreshold": -0.1}, "similarityThreshold")
	e.invalid("validation_failed", "POST", base+"/query", map[string]any{}, "query")

	// 404s: unknown base, unknown source, a source of another base.
	other := e.create("/v1/knowledge-bases", map[string]any{"name": "Other"})
	for _, path := range []string{"/v1/knowledge-bases/" + model.NewID() + "/sources/" + src["id"].(string),
		"/v1/knowledge-bases/" + other["id"].(string) + "/sources/" + src["id"].(string),
		base + "/sources/" + model.NewID()} {
		e.must(http.StatusNotFound, "GET", path, nil)
		e.must(http.StatusNotFound, "DELETE", path, nil)
	}
	e.must(http.StatusNotFound, "POST", "/v1/knowledge-bases/"+model.NewID()+"/sources", map[string]any{"sourceType": "text", "displayName": "x", "content": "y"})
	e.must(http.StatusNotFound, "POST", "/v1/knowledge-bases/"+model.NewID()+"/query", map[string]any{"query": "x"})

	// Delete a source: gone from the base and from queries.
	e.must(http.StatusNoContent, "DELETE", base+"/sources/"+src["id"].(string), nil)
	if got := e.must(http.StatusOK, "GET", base, nil).Data(t); got["sourceCount"] != float64(1) {
		t.Errorf("after delete: %v", got["sourceCount"])
	}
	if hits := e.must(http.StatusOK, "POST", base+"/query", map[string]any{"query": "refunds receipt"}).JSON(t)["data"].([]any); len(hits) != 0 {
		t.Errorf("a deleted source is still retrieved: %v", hits)
	}

	// Assignment and duplicate: the copy keeps the base.
	a := e.createAgent(map[string]any{"knowledgeBaseIds": []any{kb["id"]}})
	dup := e.must(http.StatusCreated, "POST", "/v1/agents/"+a["id"].(string)+"/duplicate", nil).Data(t)
	if kbs := dup["knowledgeBases"].([]any); len(kbs) != 1 || kbs[0].(map[string]any)["id"] != kb["id"] {
		t.Errorf("duplicate's knowledge bases %v", dup["knowledgeBases"])
	}
	// Deleting the base removes its sources with it.
	e.must(http.StatusNoContent, "DELETE", base, nil)
	e.must(http.StatusNotFound, "GET", base+"/sources", nil)
}
