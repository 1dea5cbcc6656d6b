package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestKnowledgeBaseSourcesQueryDelete(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()

	p := b.post("/knowledge", url.Values{"name": {strings.Repeat("k", 129)}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="name-error"`, "must be at most 128 characters")
	p = b.post("/knowledge", url.Values{"name": {"Opening hours"}, "description": {"When we are open"}})
	wantStatus(t, p, http.StatusSeeOther)
	id := strings.TrimPrefix(p.location(), "/knowledge/")
	wantContains(t, b.get("/knowledge"), "Opening hours", "When we are open")

	base := "/knowledge/" + id
	p = b.post(base+"/sources", url.Values{"displayName": {"Hours"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="content-error"`, "is required", `value="Hours"`)
	p = b.post(base+"/sources", url.Values{"displayName": {"Hours"}, "content": {"The shop opens at nine on weekdays and at ten on Saturdays. It is closed on Sundays."}})
	if p.location() != base+"?added=1" {
		t.Fatalf("add source: %d to %q\n%s", p.status, p.location(), p.body)
	}
	p = b.get(base + "?added=1")
	wantContains(t, p, "Source added.", "Hours")

	p = b.post(base+"/query", url.Values{"query": {"When does the shop open on Saturdays?"}, "chunks": {"99"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="chunks-error"`, "must be from 1 to 20")
	p = b.post(base+"/query", url.Values{"query": {"When does the shop open on Saturdays?"}})
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "1 chunk retrieved.", "at ten on Saturdays", "score ")
	p = b.post(base+"/query", url.Values{"query": {"parking"}})
	wantContains(t, p, "0 chunks retrieved.")

	srcs, err := e.svc.KnowledgeBases.Sources(ctx, u.OrgID, id)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("sources %+v, %v", srcs, err)
	}
	wantContains(t, b.get(base+"/sources/"+srcs[0].ID+"/delete"), "Delete the source “Hours”")
	if p := b.post(base+"/sources/"+srcs[0].ID+"/delete", nil); p.location() != base {
		t.Fatalf("delete source: %d to %q", p.status, p.location())
	}
	wantContains(t, b.get(base), "No sources yet.")

	wantContains(t, b.get(base+"/delete"), "Delete the knowledge base “Opening hours”")
	if p := b.post(base+"/delete", nil); p.location() != "/knowledge" {
		t.Fatalf("delete: %d to %q", p.status, p.location())
	}
	wantContains(t, b.get("/knowledge"), "No knowledge bases yet.")
}
