package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func (e *env) suppressions(orgID string) []model.Suppression {
	e.t.Helper()
	list, _, err := e.svc.Suppressions.List(context.Background(), orgID, store.SuppressionFilter{Page: store.Page{Number: 1, Size: 100, SortDir: store.Asc}})
	if err != nil {
		e.t.Fatal(err)
	}
	return list
}

// TestSuppressionsAddSearchImportDelete: the do-not-call list's add form
// refuses what POST /v1/suppressions refuses and says when a number was
// there already; the search finds by number; a CSV import names every bad
// line and adds nothing, a good one adds what is new; delete takes a
// number off.
func TestSuppressionsAddSearchImportDelete(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")

	wantContains(t, b.get("/suppressions"), "No number is on the list.", `id="f-number"`, `action="/suppressions/import"`)
	p := b.post("/suppressions", url.Values{"number": {"555-0100"}, "reason": {strings.Repeat("r", 257)}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="number-error"`, "must be an E.164 number", `id="reason-error"`, "must be at most 256 characters", `value="555-0100"`)
	if p := b.post("/suppressions", url.Values{"number": {"+14155550100"}, "reason": {"asked not to be called"}}); p.location() != "/suppressions?added=1" {
		t.Fatalf("add: %d to %q\n%s", p.status, p.location(), p.body)
	}
	wantContains(t, b.get("/suppressions?added=1"), "Added to the list.", "&#43;14155550100", "asked not to be called")
	if p := b.post("/suppressions", url.Values{"number": {"+14155550100"}, "reason": {"again"}}); p.location() != "/suppressions?added=0" {
		t.Fatalf("add again: %d to %q", p.status, p.location())
	}
	wantContains(t, b.get("/suppressions?added=0"), "That number was on the list already.")

	// Import: every bad line named (a quoted newline counts its lines),
	// nothing added.
	bad := "\ufeffname,number,reason\r\nAda,+14155550101,\"moved,\nno longer here\"\r\nBob,555-0102,\r\n\r\nCy,+14155550103," + strings.Repeat("x", 257) + "\r\n"
	p = b.postFile("/suppressions/import", nil, "file", "dnc.csv", bad)
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "so nothing was added", `data-line="4"><th scope="row">4</th><td><code>number</code></td><td>must be an E.164 number`,
		`data-line="6"><th scope="row">6</th><td><code>reason</code></td><td>must be at most 256 characters`, "<details class=\"import\" open>")
	if got := e.suppressions(u.OrgID); len(got) != 1 {
		t.Fatalf("%d suppressions after a refused import", len(got))
	}
	p = b.postFile("/suppressions/import", nil, "file", "dnc.csv", "name,email\nAda,ada@example.com\n")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "the header row has no number column")
	p = b.postFile("/suppressions/import", nil, "file", "dnc.csv", "number\n\"+1415\n")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `<td>the file</td>`)
	wantStatus(t, b.postFile("/suppressions/import", nil, "", "", ""), http.StatusBadRequest)

	good := "phone_number,reason\n+14155550101,moved\n+14155550100,\n+14155550102,\n"
	if p := b.postFile("/suppressions/import", nil, "file", "dnc.csv", good); p.location() != "/suppressions?imported=2&known=1" {
		t.Fatalf("import: %d to %q\n%s", p.status, p.location(), p.body)
	}
	wantContains(t, b.get("/suppressions?imported=2&known=1"), "2 numbers added to the list; 1 was on it already.", "3 numbers")
	got := e.suppressions(u.OrgID)
	if len(got) != 3 || got[0].Reason == nil || *got[0].Reason != "asked not to be called" || got[1].Number != "+14155550101" || *got[1].Reason != "moved" {
		t.Fatalf("after the import: %+v", got)
	}

	p = b.get("/suppressions?q=0102")
	wantContains(t, p, "1 number", "&#43;14155550102")
	if contains(withoutSearchForm(p.body), "&#43;14155550101") {
		t.Fatal("the search shows a number it does not match")
	}

	wantContains(t, b.get("/suppressions/"+got[1].ID+"/delete"), "Take &#43;14155550101 off the do-not-call list?")
	if p := b.post("/suppressions/"+got[1].ID+"/delete", nil); p.location() != "/suppressions" {
		t.Fatalf("delete: %d to %q", p.status, p.location())
	}
	if left := e.suppressions(u.OrgID); len(left) != 2 {
		t.Fatalf("%d suppressions after the delete", len(left))
	}
	wantStatus(t, b.post("/suppressions/"+got[1].ID+"/delete", nil), http.StatusNotFound)
}
