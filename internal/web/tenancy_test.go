package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/phonenumber"
	"github.com/parley-voice/parley/internal/siptrunk"
)

// TestTenantIsolation: another organization's agent and key answer 404 on
// every page and form, and stay untouched.
func TestTenantIsolation(t *testing.T) {
	e := newEnv(t)
	b, _ := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	_, other := e.user("globex", "gus@globex.example")
	theirs, err := e.svc.Agents.Create(ctx, other.OrgID, agent.Input{Name: opt.Value("Globex secret agent"), PromptTemplate: opt.Value("p")})
	if err != nil {
		t.Fatal(err)
	}
	secret, key, err := e.svc.Orgs.IssueKey(ctx, other.OrgID, "theirs")
	if err != nil {
		t.Fatal(err)
	}
	agentPath := "/agents/" + theirs.ID
	keyPath := "/keys/" + key.ID + "/revoke"
	form := createForm(map[string]string{"name": "Hijacked"})
	for _, c := range []struct {
		method, path string
	}{
		{"GET", agentPath}, {"POST", agentPath}, {"POST", agentPath + "/duplicate"},
		{"GET", agentPath + "/delete"}, {"POST", agentPath + "/delete"},
		{"GET", keyPath}, {"POST", keyPath},
		{"GET", "/agents/not-a-uuid"}, {"POST", "/agents/not-a-uuid/delete"}, {"GET", "/keys/not-a-uuid/revoke"},
		{"GET", "/agents/" + model.NewID()},
	} {
		var p page
		if c.method == "GET" {
			p = b.get(c.path)
		} else {
			p = b.post(c.path, url.Values(cloneForm(form)))
		}
		if p.status != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", c.method, c.path, p.status)
		}
	}
	v, err := e.svc.Agents.Get(ctx, other.OrgID, theirs.ID)
	if err != nil || v.Name != "Globex secret agent" {
		t.Fatalf("their agent after the attempts: %+v, %v", v, err)
	}
	if _, err := e.svc.Orgs.Authenticate(ctx, secret); err != nil {
		t.Fatalf("their key after the attempts: %v", err)
	}
	// Lists show only the signed-in organization's.
	for _, path := range []string{"/agents", "/agents?q=Globex", "/keys"} {
		p := b.get(path)
		for _, leak := range []string{"Globex secret agent", theirs.ID, key.Prefix} {
			if contains(p.body, leak) {
				t.Errorf("%s shows %q", path, leak)
			}
		}
	}
}

func cloneForm(f url.Values) url.Values {
	out := url.Values{}
	for k, v := range f {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// TestCallTenantIsolation: another organization's call, its live
// transcript and recording answer 404, it cannot be ended, and no list
// shows it or its messages.
func TestCallTenantIsolation(t *testing.T) {
	e := newEnv(t)
	b, _ := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	_, other := e.user("globex", "gus@globex.example")
	a := e.newAgentIn(other.OrgID, "Globex secret agent")
	theirs := e.newCall(a, model.CallInProgress, func(c *model.Call) {
		c.FromNumber = "+19990000001"
		c.Transcript = []map[string]any{{"at": 0.5, "role": "user", "type": "message", "text": "Globex secret words"}}
	})
	e.record(theirs, 1)
	path := "/calls/" + theirs.ID
	for _, c := range []struct{ method, path string }{
		{"GET", path}, {"GET", path + "/live"}, {"GET", path + "/recording"}, {"POST", path + "/end"},
		{"GET", "/calls/not-a-uuid"}, {"GET", "/calls/not-a-uuid/recording"}, {"POST", "/calls/not-a-uuid/end"},
		{"GET", "/calls/" + model.NewID()}, {"POST", "/calls/" + model.NewID() + "/end"},
	} {
		var p page
		if c.method == "GET" {
			p = b.get(c.path)
		} else {
			p = b.post(c.path, nil)
		}
		if p.status != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", c.method, c.path, p.status)
		}
	}
	if c, err := e.svc.Calls.Get(ctx, other.OrgID, theirs.ID); err != nil || c.Status != model.CallInProgress {
		t.Fatalf("their call after the attempts: %s, %v", c.Status, err)
	}
	e.newMessage(a, "Globex secret text", func(m *model.Message) { m.CallID = &theirs.ID })
	for _, path := range []string{"/calls", "/calls/live", "/calls?q=Globex", "/calls?agentId=" + a.ID, "/calls?fromNumber=%2B19990000001",
		"/messages", "/messages?agentId=" + a.ID, "/messages?callId=" + theirs.ID} {
		body := withoutSearchForm(b.get(path).body) // which echoes the query
		for _, leak := range []string{"Globex", theirs.ID, "19990000001"} {
			if leak == theirs.ID && contains(path, leak) {
				continue // the page names the call it was asked about
			}
			if contains(body, leak) {
				t.Errorf("%s shows %q", path, leak)
			}
		}
	}
}

// withoutSearchForm is a page without its filter form.
func withoutSearchForm(body string) string {
	start := strings.Index(body, `<form role="search"`)
	if start < 0 {
		return body
	}
	end := strings.Index(body[start:], "</form>")
	return body[:start] + body[start+end:]
}

// TestTalkTenantIsolation: another organization's agent cannot be called
// or its talk page opened, and no one follows another organization's call,
// not even through one of their own agents' paths.
func TestTalkTenantIsolation(t *testing.T) {
	phone := &fakeWebCalls{}
	e := newEnv(t, withWebCalls(phone))
	b, u := e.signedIn("acme", "ada@example.com")
	ours := e.agent(u.OrgID, "Acme desk")
	_, other := e.user("globex", "gus@globex.example")
	theirs := e.agent(other.OrgID, "Globex secret agent")
	ctx := context.Background()
	theirCall, _, err := phone.WebCall(ctx, other.OrgID, theirs.ID, "v=0 theirs")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/agents/" + theirs.ID + "/talk",
		"/agents/" + theirs.ID + "/talk/" + theirCall.ID,
		"/agents/" + ours.ID + "/talk/" + theirCall.ID,
		"/agents/" + ours.ID + "/talk/not-a-uuid",
		"/agents/not-a-uuid/talk",
	} {
		p := b.get(path)
		if p.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, p.status)
		}
		if contains(p.body, "Globex secret agent") || contains(p.body, theirCall.ID) && !contains(path, theirCall.ID) {
			t.Errorf("GET %s shows their agent or call", path)
		}
	}
	for _, path := range []string{"/agents/" + theirs.ID + "/talk", "/agents/not-a-uuid/talk"} {
		if p := b.postJSON(path, `{"sdp":"v=0 offer"}`, b.csrf); p.status != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, p.status)
		}
	}
	if got := phone.asked(); len(got) != 1 {
		t.Fatalf("the phone was asked %q, want only the test's own call", got)
	}
	// Our own call shows under our agent only.
	p := b.postJSON("/agents/"+ours.ID+"/talk", `{"sdp":"v=0 offer"}`, b.csrf)
	wantStatus(t, p, http.StatusCreated)
	ourCall := decodeJSON[talkAnswer](t, p).CallID
	wantStatus(t, b.get("/agents/"+ours.ID+"/talk/"+ourCall), http.StatusOK)
	wantStatus(t, b.get("/agents/"+theirs.ID+"/talk/"+ourCall), http.StatusNotFound)
}

// TestTenantIsolationAdminPages: another organization's trunk, number,
// knowledge base and source answer 404 on every page and form and stay
// untouched; lists and choices show only the signed-in organization's;
// the settings forms change only its own organization.
func TestTenantIsolationAdminPages(t *testing.T) {
	e := newEnv(t)
	b, me := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	_, other := e.user("globex", "gus@globex.example")
	trunk, err := e.svc.SIPTrunks.Create(ctx, other.OrgID, siptrunk.Input{FriendlyName: opt.Value("Globex trunk"), Host: opt.Value("sip.globex.example")})
	if err != nil {
		t.Fatal(err)
	}
	theirAgent, err := e.svc.Agents.Create(ctx, other.OrgID, agent.Input{Name: opt.Value("Globex secret agent"), PromptTemplate: opt.Value("p")})
	if err != nil {
		t.Fatal(err)
	}
	number, err := e.svc.PhoneNumbers.Create(ctx, other.OrgID, phonenumber.Input{E164: opt.Value("+14155550199"), SIPTrunkID: opt.Value(trunk.ID)})
	if err != nil {
		t.Fatal(err)
	}
	kb, err := e.svc.KnowledgeBases.Create(ctx, other.OrgID, knowledge.Input{Name: opt.Value("Globex secrets")})
	if err != nil {
		t.Fatal(err)
	}
	src, err := e.svc.KnowledgeBases.AddSource(ctx, other.OrgID, kb.ID, knowledge.SourceInput{SourceType: opt.Value("text"), DisplayName: opt.Value("Plans"), Content: opt.Value("The launch code is zebra.")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Orgs.RotateWebhookSecret(ctx, other.OrgID); err != nil {
		t.Fatal(err)
	}
	form := url.Values{"friendlyName": {"Hijacked"}, "transport": {"udp"}, "host": {"evil.example"}, "e164": {"+14155550198"},
		"displayName": {"Hijacked"}, "content": {"x"}, "query": {"launch code"}}
	trunkPath, numberPath, kbPath := "/trunks/"+trunk.ID, "/numbers/"+number.ID, "/knowledge/"+kb.ID
	for _, c := range []struct{ method, path string }{
		{"GET", trunkPath}, {"POST", trunkPath}, {"GET", trunkPath + "/delete"}, {"POST", trunkPath + "/delete"},
		{"GET", numberPath}, {"POST", numberPath}, {"GET", numberPath + "/delete"}, {"POST", numberPath + "/delete"},
		{"GET", kbPath}, {"POST", kbPath + "/sources"}, {"POST", kbPath + "/query"},
		{"GET", kbPath + "/delete"}, {"POST", kbPath + "/delete"},
		{"GET", kbPath + "/sources/" + src.ID + "/delete"}, {"POST", kbPath + "/sources/" + src.ID + "/delete"},
		{"GET", "/trunks/not-a-uuid"}, {"GET", "/numbers/" + model.NewID()}, {"POST", "/knowledge/not-a-uuid/query"},
	} {
		var p page
		if c.method == "GET" {
			p = b.get(c.path)
		} else {
			p = b.post(c.path, cloneForm(form))
		}
		if p.status != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", c.method, c.path, p.status)
		}
		if contains(p.body, "zebra") {
			t.Errorf("%s %s shows their knowledge", c.method, c.path)
		}
	}
	if got, err := e.svc.SIPTrunks.Get(ctx, other.OrgID, trunk.ID); err != nil || got.FriendlyName != "Globex trunk" {
		t.Fatalf("their trunk after the attempts: %+v, %v", got, err)
	}
	if got, err := e.svc.PhoneNumbers.Get(ctx, other.OrgID, number.ID); err != nil || got.E164 != "+14155550199" {
		t.Fatalf("their number after the attempts: %+v, %v", got, err)
	}
	if d, err := e.svc.KnowledgeBases.GetDetail(ctx, other.OrgID, kb.ID); err != nil || len(d.Sources) != 1 {
		t.Fatalf("their knowledge base after the attempts: %+v, %v", d, err)
	}

	// Their trunk and agent are not choices, and naming them is refused.
	p := b.post("/numbers", url.Values{"e164": {"+14155550197"}, "sipTrunkId": {trunk.ID}, "agentId": {theirAgent.ID}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "names no SIP trunk in this organization", "names no agent in this organization")
	for _, path := range []string{"/trunks", "/numbers", "/numbers/new", "/knowledge", "/settings"} {
		p := b.get(path)
		for _, leak := range []string{"Globex trunk", trunk.ID, "4155550199", theirAgent.ID, "Globex secret agent", "Globex secrets", kb.ID, "globex"} {
			if contains(p.body, leak) {
				t.Errorf("%s shows %q", path, leak)
			}
		}
	}

	// Settings change the signed-in organization only.
	if p := b.post("/settings", url.Values{"name": {"acme"}, "concurrencyLimit": {"3"}}); p.status != http.StatusSeeOther {
		t.Fatalf("save settings: %d", p.status)
	}
	wantStatus(t, b.post("/settings/webhook-secret/delete", nil), http.StatusSeeOther)
	o, err := e.svc.Orgs.Get(ctx, other.OrgID)
	if err != nil || o.ConcurrencyLimit == 3 || len(o.WebhookSecret) == 0 {
		t.Fatalf("their organization after my settings: limit %d, signing %v, %v", o.ConcurrencyLimit, len(o.WebhookSecret) > 0, err)
	}
	if mine, _ := e.svc.Orgs.Get(ctx, me.OrgID); mine.ConcurrencyLimit != 3 {
		t.Fatalf("my limit = %d", mine.ConcurrencyLimit)
	}
}
