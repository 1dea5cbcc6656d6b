package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
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
