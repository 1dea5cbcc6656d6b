package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/phonenumber"
	"github.com/parley-voice/parley/internal/siptrunk"
)

func TestCustomToolForms(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	a := e.newAgentIn(u.OrgID, "Front desk")
	base := "/agents/" + a.ID
	wantContains(t, b.get(base), `id="tools"`, "No custom tools", `href="`+base+`/tools/new"`)
	wantContains(t, b.get(base+"/tools/new"), `id="f-name"`, `maxlength="64"`, `id="f-timeoutSeconds"`, `max="30"`, `name="enabled" checked`)

	// Every broken rule beside its input; nothing is stored.
	p := b.post(base+"/tools", url.Values{"name": {"end_call"}, "webhookUrl": {"ftp://example.com"}, "timeoutSeconds": {"31"},
		"schema": {`{"type": "array"}`}, "headers": {"Bad Header: x"}, "queryParams": {"no-equals-sign"}, "description": {"Books a table"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="queryParams-error"`, "line 1: write it as name=value", `value="end_call"`, "Books a table")
	p = b.post(base+"/tools", url.Values{"name": {"end_call"}, "webhookUrl": {"ftp://example.com"}, "timeoutSeconds": {"31"},
		"schema": {`{"type": "array"}`}, "headers": {"Bad Header: x"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="name-error"`, "is the name of a system tool", `id="webhookUrl-error"`, `id="timeoutSeconds-error"`,
		`id="schema-error"`, `schema.type: must be &#34;object&#34;`, `id="headers-error"`, "headers[0].key: must be a valid HTTP header name")
	// A schema whose escapes decode into text no store keeps (PostgreSQL
	// refuses \u0000 in JSON) is refused at its input.
	p = b.post(base+"/tools", url.Values{"name": {"book_table"}, "webhookUrl": {"https://hooks.example.com/book"},
		"schema": {`{"type": "object", "description": "a\u0000b"}`}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="schema-error"`)
	// So is one that gives a key twice, as the API refuses it.
	p = b.post(base+"/tools", url.Values{"name": {"book_table"}, "webhookUrl": {"https://hooks.example.com/book"},
		"schema": {`{"type": "object", "properties": {"date": {"type": "string", "type": "number"}}}`}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="schema-error"`, "properties.date.type: duplicate key")
	if tools, _ := e.svc.Agents.Tools(ctx, u.OrgID, a.ID); len(tools) != 0 {
		t.Fatalf("a refused form stored %+v", tools)
	}

	p = b.post(base+"/tools", url.Values{"name": {"book_table"}, "description": {"Books a table"}, "webhookUrl": {"https://hooks.example.com/book"},
		"enabled": {"on"}, "sendRawRequestBody": {"on"}, "timeoutSeconds": {"10"},
		"schema":  {`{"type": "object", "properties": {"date": {"type": "string"}}}`},
		"headers": {"Authorization: Bearer abc:def\n\nX-Trace: 1"}, "queryParams": {"source=parley"}})
	wantStatus(t, p, http.StatusSeeOther)
	tools, err := e.svc.Agents.Tools(ctx, u.OrgID, a.ID)
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %+v, %v", tools, err)
	}
	tool := tools[0]
	if p.location() != base+"/tools/"+tool.ID+"?saved=1" || !tool.Enabled || !tool.SendRawRequestBody || *tool.TimeoutSeconds != 10 ||
		len(tool.Headers) != 2 || tool.Headers[0].Value != "Bearer abc:def" || tool.QueryParams[0].Key != "source" || tool.Schema["properties"] == nil {
		t.Fatalf("created %+v, to %q", tool, p.location())
	}
	wantContains(t, b.get(p.location()), "Saved.", `value="book_table"`, "X-Trace: 1", "source=parley", `name="sendRawRequestBody" checked`)
	wantContains(t, b.get(base), `href="`+base+`/tools/`+tool.ID+`"`, "book_table", "https://hooks.example.com/book")

	// The same name twice is a conflict shown above the form.
	p = b.post(base+"/tools", url.Values{"name": {"book_table"}, "webhookUrl": {"https://hooks.example.com/2"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "already has a custom tool named")

	// Edit: unchecked boxes turn off, blank fields clear.
	p = b.post(base+"/tools/"+tool.ID, url.Values{"name": {"book"}, "webhookUrl": {"https://hooks.example.com/book2"}})
	wantStatus(t, p, http.StatusSeeOther)
	got, _ := e.svc.Agents.Tool(ctx, u.OrgID, a.ID, tool.ID)
	if got.Name != "book" || got.Enabled || got.SendRawRequestBody || got.TimeoutSeconds != nil || got.Description != nil ||
		len(got.Headers) != 0 || len(got.QueryParams) != 0 || got.Schema["type"] != "object" {
		t.Fatalf("edited %+v", got)
	}
	p = b.post(base+"/tools/"+tool.ID, url.Values{"name": {""}, "webhookUrl": {"https://hooks.example.com/book2"}})
	wantStatus(t, p, http.StatusBadRequest)
	if got2, _ := e.svc.Agents.Tool(ctx, u.OrgID, a.ID, tool.ID); got2.Name != "book" {
		t.Fatalf("a refused edit changed the name to %q", got2.Name)
	}

	wantContains(t, b.get(base+"/tools/"+tool.ID+"/delete"), "Delete the custom tool “book”")
	p = b.post(base+"/tools/"+tool.ID+"/delete", nil)
	if p.status != http.StatusSeeOther || p.location() != base+"#tools" {
		t.Fatalf("delete: %d to %q", p.status, p.location())
	}
	if tools, _ := e.svc.Agents.Tools(ctx, u.OrgID, a.ID); len(tools) != 0 {
		t.Fatalf("after delete: %+v", tools)
	}
	wantStatus(t, b.get(base+"/tools/"+tool.ID), http.StatusNotFound)
}

// TestAgentKnowledgeAndNumbers: the agent form assigns and unassigns the
// organization's knowledge bases; the page lists the numbers that ring it.
func TestAgentKnowledgeAndNumbers(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	a := e.newAgentIn(u.OrgID, "Front desk")
	kb1, err := e.svc.KnowledgeBases.Create(ctx, u.OrgID, knowledge.Input{Name: opt.Value("Opening hours")})
	if err != nil {
		t.Fatal(err)
	}
	kb2, err := e.svc.KnowledgeBases.Create(ctx, u.OrgID, knowledge.Input{Name: opt.Value("Prices")})
	if err != nil {
		t.Fatal(err)
	}
	trunk, err := e.svc.SIPTrunks.Create(ctx, u.OrgID, siptrunk.Input{FriendlyName: opt.Value("Carrier"), Host: opt.Value("sip.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	n, err := e.svc.PhoneNumbers.Create(ctx, u.OrgID, phonenumber.Input{E164: opt.Value("+14155550100"), SIPTrunkID: opt.Value(trunk.ID), AgentID: opt.Value(a.ID)})
	if err != nil {
		t.Fatal(err)
	}
	base := "/agents/" + a.ID
	p := b.get(base)
	wantContains(t, p, `name="knowledgeBaseIds" value="`+kb1.ID+`"`, "Opening hours", "Prices", `<a href="/numbers/`+n.ID+`">&#43;14155550100</a>`)
	form := createForm(map[string]string{"name": "Front desk"})
	form.Del("mode")
	form["knowledgeBaseIds"] = []string{kb1.ID, kb2.ID}
	wantStatus(t, b.post(base, cloneForm(form)), http.StatusSeeOther)
	v, _ := e.svc.Agents.Get(ctx, u.OrgID, a.ID)
	if len(v.KnowledgeBases) != 2 {
		t.Fatalf("assigned %+v", v.KnowledgeBases)
	}
	wantContains(t, b.get(base), `value="`+kb1.ID+`" checked`, `value="`+kb2.ID+`" checked`)
	form["knowledgeBaseIds"] = []string{kb2.ID}
	wantStatus(t, b.post(base, cloneForm(form)), http.StatusSeeOther)
	if v, _ = e.svc.Agents.Get(ctx, u.OrgID, a.ID); len(v.KnowledgeBases) != 1 || v.KnowledgeBases[0].ID != kb2.ID {
		t.Fatalf("after unassigning one: %+v", v.KnowledgeBases)
	}
	// A refused form keeps the agent's tools and numbers on the page.
	form.Set("name", strings.Repeat("n", 500))
	p = b.post(base, cloneForm(form))
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "&#43;14155550100", `id="tools"`)
	form.Set("name", "Front desk")
	delete(form, "knowledgeBaseIds")
	wantStatus(t, b.post(base, cloneForm(form)), http.StatusSeeOther)
	if v, _ = e.svc.Agents.Get(ctx, u.OrgID, a.ID); len(v.KnowledgeBases) != 0 {
		t.Fatalf("after unchecking all: %+v", v.KnowledgeBases)
	}
}
