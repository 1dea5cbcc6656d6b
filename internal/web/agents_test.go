package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// agentForm is a valid create form, changed by set.
func createForm(set map[string]string) url.Values {
	f := url.Values{"name": {"Support"}, "promptTemplate": {"You help callers."}, "status": {"active"}, "mode": {"single_prompt"}}
	for k, v := range set {
		f.Set(k, v)
	}
	return f
}

func TestAgentFormRefusesWhatTheAPIRefuses(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	p := b.post("/agents", createForm(map[string]string{
		"name":                    strings.Repeat("n", agent.MaxNameLen+1),
		"interruptionThresholdMs": "50",
		"llmTemperature":          "warm",
		"defaultVariables":        "{not json",
		"runtimeConfig":           "[1]",
		"timezone":                "Mars/Olympus",
		"transferRoutes":          `[{"to_number":"123","condition":"always"}]`,
		"preCallWebhookUrl":       "ftp://example.com",
	}))
	wantStatus(t, p, http.StatusBadRequest)
	// Each message sits next to its field, as the API words it.
	wantContains(t, p,
		`id="name-error"`, "must be at most 128 characters",
		`id="interruptionThresholdMs-error"`, "must be between 100 and 2000",
		`id="llmTemperature-error"`, "must be a number",
		`id="defaultVariables-error"`, "must be valid JSON",
		`aria-invalid="true"`,
	)
	// Nothing was created.
	if _, total, _ := e.svc.Agents.List(context.Background(), u.OrgID, store.AgentFilter{Page: store.Page{Number: 1, Size: 10}}); total != 0 {
		t.Fatalf("%d agents after a refused form", total)
	}
	// A JSON field that gives a key twice is refused beside it, as the API
	// refuses it.
	p = b.post("/agents", createForm(map[string]string{"defaultVariables": `{"tier": "gold", "tier": "basic"}`}))
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="defaultVariables-error"`, "defaultVariables.tier: duplicate key")
	if _, total, _ := e.svc.Agents.List(context.Background(), u.OrgID, store.AgentFilter{Page: store.Page{Number: 1, Size: 10}}); total != 0 {
		t.Fatalf("%d agents after a refused form", total)
	}
	// The form's own type errors out of the way, the service's rules speak
	// with the API's words.
	p = b.post("/agents", createForm(map[string]string{
		"interruptionThresholdMs": "50", "runtimeConfig": "[1]", "timezone": "Mars/Olympus",
		"transferRoutes": `[{"to_number":"123","condition":"always"}]`, "preCallWebhookUrl": "ftp://example.com",
	}))
	wantStatus(t, p, http.StatusBadRequest)
	_, apiErr := e.svc.Agents.Create(context.Background(), u.OrgID, agent.Input{
		Name: opt.Value("x"), PromptTemplate: opt.Value("y"), Timezone: opt.Value("Mars/Olympus"),
	})
	wantContains(t, p, `id="runtimeConfig-error"`, `id="timezone-error"`, apiErr.Error()[len("timezone: "):],
		"transferRoutes[0].to_number: must be an E.164 number", `id="preCallWebhookUrl-error"`)
}

func TestAgentCreateEditDuplicateDelete(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	p := b.post("/agents", createForm(map[string]string{
		"firstMessage": "Hello!", "interruptionThresholdMs": "700", "llmTemperature": "0.4",
		"endCallEnabled": "true", "defaultVariables": `{"company": "Acme"}`, "language": "en-US",
	}))
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location(), "/agents/") {
		t.Fatalf("create: %d to %q\n%s", p.status, p.location(), p.body)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(p.location(), "/agents/"), "?saved=1")
	v, err := e.svc.Agents.Get(ctx, u.OrgID, id)
	if err != nil {
		t.Fatal(err)
	}
	c := v.Config
	if v.Name != "Support" || *c.FirstMessage != "Hello!" || c.InterruptionThresholdMs != 700 || *c.LLMTemperature != 0.4 ||
		!*c.EndCallEnabled || c.DefaultVariables["company"] != "Acme" || *c.Language != "en-US" || c.Timezone != nil {
		t.Fatalf("created %+v", v)
	}
	// The edit form shows what is stored; blank inputs clear their field.
	p = b.get("/agents/" + id)
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, `value="Support"`, "Hello!", `value="700"`, "&#34;company&#34;: &#34;Acme&#34;")
	form := createForm(map[string]string{"name": "Support v2", "interruptionThresholdMs": "700", "language": "en-US"})
	form.Del("mode") // not on the edit form
	p = b.post("/agents/"+id, form)
	if p.status != http.StatusSeeOther {
		t.Fatalf("update: %d\n%s", p.status, p.body)
	}
	v, _ = e.svc.Agents.Get(ctx, u.OrgID, id)
	if v.Name != "Support v2" || v.Config.FirstMessage != nil || v.Config.DefaultVariables != nil || v.Config.EndCallEnabled != nil {
		t.Fatalf("after clearing: %+v", v)
	}
	// A blank name is refused on edit, not cleared.
	form.Set("name", " ")
	p = b.post("/agents/"+id, form)
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="name-error"`, "must not be empty")

	p = b.post("/agents/"+id+"/duplicate", nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("duplicate: %d", p.status)
	}
	copyID := strings.TrimPrefix(p.location(), "/agents/")
	cp, err := e.svc.Agents.Get(ctx, u.OrgID, copyID)
	if err != nil || cp.Name != agent.CopyName("Support v2") {
		t.Fatalf("duplicate: %+v, %v", cp, err)
	}
	wantContains(t, b.get("/agents/"+copyID+"/delete"), "Delete the agent")
	if p := b.post("/agents/"+copyID+"/delete", nil); p.location() != "/agents" {
		t.Fatalf("delete: %d to %q", p.status, p.location())
	}
	if _, err := e.svc.Agents.Get(ctx, u.OrgID, copyID); err == nil {
		t.Fatal("the deleted agent is still there")
	}
}

func TestAgentListSearchAndFilters(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	for _, a := range []struct{ name, status string }{{"Billing 100%", "active"}, {"Bookings", "disabled"}, {"Support", "active"}} {
		if _, err := e.svc.Agents.Create(ctx, u.OrgID, agent.Input{Name: opt.Value(a.name), PromptTemplate: opt.Value("p"), Status: opt.Value(a.status)}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(p page) []string {
		var out []string
		for _, n := range []string{"Billing 100%", "Bookings", "Support"} {
			if strings.Contains(p.body, ">"+n+"</a>") {
				out = append(out, n)
			}
		}
		return out
	}
	for query, want := range map[string]string{
		"":                                    "Billing 100%,Bookings,Support",
		"?q=boo":                              "Bookings",
		"?q=100%25":                           "Billing 100%",
		"?q=_":                                "",
		"?status=active":                      "Billing 100%,Support",
		"?status=disabled&q=b":                "Bookings",
		"?folderId=none&sortBy=name":          "Billing 100%,Bookings,Support",
		"?pageSize=1&sortBy=name&sortDir=asc": "Billing 100%",
		"?pageSize=1&page=3&sortBy=name&sortDir=asc": "Support",
	} {
		p := b.get("/agents" + query)
		wantStatus(t, p, http.StatusOK)
		if got := strings.Join(names(p), ","); got != want {
			t.Errorf("GET /agents%s lists %q, want %q", query, got, want)
		}
	}
	// Broken parameters are named, as the API names them.
	p := b.get("/agents?pageSize=101&status=bogus&folderId=x")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "pageSize: must be a whole number between 1 and 100", "status:", "folderId: must be a folder id or none")
}
