package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/phonenumber"
	"github.com/parley-voice/parley/internal/siptrunk"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/store"
)

// TestTenantIsolationAgentExtrasConnectionsUsers: another organization's
// custom tools, messaging connections and users answer 404 on every page
// and form and stay untouched; no list shows them.
func TestTenantIsolationAgentExtrasConnectionsUsers(t *testing.T) {
	e := newEnv(t)
	b, me := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	ours := e.newAgentIn(me.OrgID, "Acme desk")
	_, other := e.user("globex", "gus@globex.example")
	theirs := e.newAgentIn(other.OrgID, "Globex secret agent")
	tool, err := e.svc.Agents.CreateTool(ctx, other.OrgID, theirs.ID, agent.ToolInput{Name: opt.Value("globex_tool"), WebhookURL: opt.Value("https://globex.example/hook")})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := e.svc.MessagingConnections.Create(ctx, other.OrgID, sms.ConnectionInput{Name: opt.Value("Globex line"), Provider: opt.Value("twilio"),
		AccountSID: opt.Value("ACglobex"), AuthToken: opt.Value("globex-token"), FromNumber: opt.Value("+14155550199")})
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"name": {"hijacked"}, "webhookUrl": {"https://evil.example"}, "provider": {"twilio"}, "accountSid": {"ACevil"},
		"authToken": {"evil"}, "fromNumber": {"+14155550198"}, "enabled": {"on"}}
	theirTools, ourPathToTheirTool := "/agents/"+theirs.ID+"/tools", "/agents/"+ours.ID+"/tools/"+tool.ID
	connPath, userPath := "/connections/"+conn.ID, "/users/"+other.ID
	for _, c := range []struct{ method, path string }{
		{"GET", theirTools + "/new"}, {"POST", theirTools},
		{"GET", theirTools + "/" + tool.ID}, {"POST", theirTools + "/" + tool.ID},
		{"GET", theirTools + "/" + tool.ID + "/delete"}, {"POST", theirTools + "/" + tool.ID + "/delete"},
		// Their tool under one of our agents' paths.
		{"GET", ourPathToTheirTool}, {"POST", ourPathToTheirTool}, {"GET", ourPathToTheirTool + "/delete"}, {"POST", ourPathToTheirTool + "/delete"},
		{"GET", "/agents/not-a-uuid/tools/new"}, {"GET", "/agents/" + ours.ID + "/tools/not-a-uuid"}, {"POST", "/agents/" + ours.ID + "/tools/" + model.NewID() + "/delete"},
		{"GET", connPath}, {"POST", connPath}, {"GET", connPath + "/delete"}, {"POST", connPath + "/delete"},
		{"GET", "/connections/mc_missing"}, {"POST", "/connections/not-an-id/delete"},
		{"GET", userPath + "/reset"}, {"POST", userPath + "/reset"}, {"GET", userPath + "/delete"}, {"POST", userPath + "/delete"},
		{"GET", "/users/not-a-uuid/reset"}, {"POST", "/users/" + model.NewID() + "/delete"},
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
		for _, leak := range []string{"globex_tool", "Globex line", "ACglobex", "gus@globex.example"} {
			if contains(p.body, leak) {
				t.Errorf("%s %s shows %q", c.method, c.path, leak)
			}
		}
	}
	if tools, _ := e.svc.Agents.Tools(ctx, other.OrgID, theirs.ID); len(tools) != 1 || tools[0].Name != "globex_tool" {
		t.Fatalf("their tools after the attempts: %+v", tools)
	}
	if tools, _ := e.svc.Agents.Tools(ctx, me.OrgID, ours.ID); len(tools) != 0 {
		t.Fatalf("our agent got tools: %+v", tools)
	}
	if c, err := e.svc.MessagingConnections.Get(ctx, other.OrgID, conn.ID); err != nil || c.AccountSID != "ACglobex" {
		t.Fatalf("their connection after the attempts: %+v, %v", c, err)
	}
	if u, err := e.svc.Accounts.Get(ctx, other.OrgID, other.ID); err != nil || u.PasswordHash != other.PasswordHash {
		t.Fatalf("their user after the attempts: %v, password changed: %v", err, u.PasswordHash != other.PasswordHash)
	}
	for _, path := range []string{"/connections", "/users", "/agents/" + ours.ID, "/agents/new"} {
		p := b.get(path)
		for _, leak := range []string{"globex_tool", "Globex line", "ACglobex", conn.ID, "gus@globex.example", other.ID} {
			if contains(p.body, leak) {
				t.Errorf("%s shows %q", path, leak)
			}
		}
	}
}

// TestCSRFAdminExtras: every new form refuses a missing or forged token,
// and changes nothing.
func TestCSRFAdminExtras(t *testing.T) {
	e := newEnv(t)
	b, me := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	a := e.newAgentIn(me.OrgID, "Front desk")
	tool, err := e.svc.Agents.CreateTool(ctx, me.OrgID, a.ID, agent.ToolInput{Name: opt.Value("book"), WebhookURL: opt.Value("https://hooks.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := e.svc.MessagingConnections.Create(ctx, me.OrgID, sms.ConnectionInput{Provider: opt.Value("twilio"),
		AccountSID: opt.Value("AC1"), AuthToken: opt.Value("tok"), FromNumber: opt.Value("+14155550100")})
	if err != nil {
		t.Fatal(err)
	}
	_, bob, err := e.svc.Accounts.AddUser(ctx, me.OrgID, "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"name": {"changed"}, "webhookUrl": {"https://evil.example"}, "provider": {"twilio"}, "accountSid": {"AC2"},
		"authToken": {"tok2"}, "fromNumber": {"+14155550101"}, "email": {"eve@example.com"}}
	toolBase := "/agents/" + a.ID + "/tools"
	for _, path := range []string{toolBase, toolBase + "/" + tool.ID, toolBase + "/" + tool.ID + "/delete",
		"/connections", "/connections/" + conn.ID, "/connections/" + conn.ID + "/delete",
		"/users", "/users/" + bob.ID + "/reset", "/users/" + bob.ID + "/delete"} {
		for _, token := range []string{"forged", ""} {
			f := cloneForm(form)
			f.Set("csrf", token)
			if p := b.post(path, f); p.status != http.StatusForbidden {
				t.Errorf("POST %s with csrf %q: %d, want 403", path, token, p.status)
			}
		}
	}
	if got, _ := e.svc.Agents.Tools(ctx, me.OrgID, a.ID); len(got) != 1 || got[0].Name != "book" {
		t.Fatalf("tools after forged posts: %+v", got)
	}
	if got, _ := e.svc.MessagingConnections.Get(ctx, me.OrgID, conn.ID); got.AccountSID != "AC1" {
		t.Fatalf("connection after forged posts: %+v", got)
	}
	if _, total, _ := e.svc.MessagingConnections.List(ctx, me.OrgID, adminPageOne); total != 1 {
		t.Fatalf("%d connections after forged posts", total)
	}
	if users, total, _ := e.svc.Accounts.Users(ctx, me.OrgID, adminPageOne); total != 2 || !users[1].MustChangePassword || users[1].UpdatedAt != bob.UpdatedAt {
		t.Fatalf("users after forged posts: %+v", users)
	}
}

// TestAdminListsPage: trunks, numbers, knowledge bases, keys, connections
// and users page past their first 100, with the API's rules for page and
// pageSize.
func TestAdminListsPage(t *testing.T) {
	e := newEnv(t)
	b, me := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	const n = maxPageSize + 2
	trunk := siptrunk.Input{FriendlyName: opt.Value("Carrier"), Host: opt.Value("sip.example.com")}
	var (
		lastTrunk model.SIPTrunk
		lastBase  model.KnowledgeBase
		lastConn  model.MessagingConnection
		lastNum   model.PhoneNumber
		err       error
	)
	for i := range n {
		trunk.FriendlyName = opt.Value(fmt.Sprintf("Trunk %03d", i))
		if lastTrunk, err = e.svc.SIPTrunks.Create(ctx, me.OrgID, trunk); err != nil {
			t.Fatal(err)
		}
		if lastNum, err = e.svc.PhoneNumbers.Create(ctx, me.OrgID, phoneInput(fmt.Sprintf("+1415555%04d", i), lastTrunk.ID)); err != nil {
			t.Fatal(err)
		}
		if lastBase, err = e.svc.KnowledgeBases.Create(ctx, me.OrgID, knowledge.Input{Name: opt.Value(fmt.Sprintf("Base %03d", i))}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.svc.Orgs.IssueKey(ctx, me.OrgID, fmt.Sprintf("key %03d", i)); err != nil {
			t.Fatal(err)
		}
		if lastConn, err = e.svc.MessagingConnections.Create(ctx, me.OrgID, sms.ConnectionInput{Name: opt.Value(fmt.Sprintf("Line %03d", i)),
			Provider: opt.Value("twilio"), AccountSID: opt.Value("AC"), AuthToken: opt.Value("t"), FromNumber: opt.Value("+14155550100")}); err != nil {
			t.Fatal(err)
		}
		// Stored directly: hashing 100 one-time passwords is slow and beside the point.
		if err := e.st.Update(ctx, func(tx store.Tx) error {
			return tx.CreateUser(ctx, &model.User{OrgID: me.OrgID, Email: fmt.Sprintf("user%03d@example.com", i), PasswordHash: "x", MustChangePassword: true})
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Forms offer every choice, not the first page's: an agent's trunk,
	// connection and knowledge base past the 100th stay selected, as does
	// a number's agent, so saving the form keeps them.
	a, err := e.svc.Agents.Create(ctx, me.OrgID, agent.Input{Name: opt.Value("Far"), PromptTemplate: opt.Value("p"),
		SIPTrunkID: opt.Value(lastTrunk.ID), MessagingConnectionID: opt.Value(lastConn.ID), KnowledgeBaseIDs: opt.Value([]string{lastBase.ID})})
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, b.get("/agents/"+a.ID), `<option value="`+lastTrunk.ID+`" selected>Trunk 101</option>`,
		`<option value="`+lastConn.ID+`" selected>Line 101</option>`, `value="`+lastBase.ID+`" checked> Base 101`)
	wantContains(t, b.get("/numbers/"+lastNum.ID), `<option value="`+lastTrunk.ID+`" selected>Trunk 101</option>`)

	for _, c := range []struct{ path, first, last string }{
		{"/trunks", "Trunk 000", "Trunk 101"},
		{"/numbers", "&#43;14155550000", "&#43;14155550101"},
		{"/knowledge", "Base 000", "Base 101"},
		{"/keys", "key 101", "key 000"}, // newest first, as the keys page lists them
		{"/connections", "Line 000", "Line 101"},
		{"/users", "user000@example.com", "user101@example.com"}, // (ada, who is signed in, is named on every page)
	} {
		p := b.get(c.path)
		wantStatus(t, p, http.StatusOK)
		wantContains(t, p, c.first, `rel="next"`)
		if contains(p.body, c.last) {
			t.Errorf("%s: page 1 shows the last row", c.path)
		}
		// The last page of 100 holds the rest.
		p = b.get(c.path + "?pageSize=100&page=2")
		wantStatus(t, p, http.StatusOK)
		wantContains(t, p, c.last, "Page 2 of 2", `rel="prev"`)
		if contains(p.body, c.first) {
			t.Errorf("%s: page 2 shows the first row", c.path)
		}
		wantContains(t, p, `href="`+c.path+`?page=1&amp;pageSize=100"`)
		for _, bad := range []string{"?pageSize=101", "?page=0", "?pageSize=x"} {
			p := b.get(c.path + bad)
			wantStatus(t, p, http.StatusBadRequest)
			wantContains(t, p, c.first) // the list is still shown, beside the message
		}
	}
}

func phoneInput(e164, trunkID string) phonenumber.Input {
	return phonenumber.Input{E164: opt.Value(e164), SIPTrunkID: opt.Value(trunkID)}
}
