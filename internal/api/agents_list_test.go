package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAgentListFiltersAndSorts(t *testing.T) {
	e := newEnv(t)
	f1 := e.create("/v1/folders", map[string]any{"name": "One"})
	f2 := e.create("/v1/folders", map[string]any{"name": "Two"})
	mk := func(name, status string, folder any) map[string]any {
		time.Sleep(2 * time.Millisecond) // distinct createdAt
		return e.createAgent(map[string]any{"name": name, "status": status, "folderId": folder})
	}
	mk("bravo", "active", f1["id"])
	mk("Alpha", "disabled", f1["id"])
	mk("charlie 100%", "active", f2["id"])
	mk("delta_x", "active", nil)
	mk("ECHO alpha", "disabled", nil)
	// globex's agents never show up.
	e.request("POST", "/v1/agents", map[string]any{"name": "alpha of globex", "promptTemplate": "P"}, e.otherKey)

	list := func(query string) []string {
		t.Helper()
		r := e.must(http.StatusOK, "GET", "/v1/agents?"+query, nil)
		return names(r.List(t))
	}
	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{"ECHO alpha", "delta_x", "charlie 100%", "Alpha", "bravo"}},
		{"sortDir=asc", []string{"bravo", "Alpha", "charlie 100%", "delta_x", "ECHO alpha"}},
		{"sortBy=createdAt&sortDir=desc", []string{"ECHO alpha", "delta_x", "charlie 100%", "Alpha", "bravo"}},
		{"sortBy=name&sortDir=asc", []string{"Alpha", "bravo", "charlie 100%", "delta_x", "ECHO alpha"}},
		{"sortBy=name", []string{"ECHO alpha", "delta_x", "charlie 100%", "bravo", "Alpha"}},
		{"status=active&sortDir=asc", []string{"bravo", "charlie 100%", "delta_x"}},
		{"status=disabled&sortDir=asc", []string{"Alpha", "ECHO alpha"}},
		{"folderId=" + f1["id"].(string) + "&sortDir=asc", []string{"bravo", "Alpha"}},
		{"folderId=none&sortDir=asc", []string{"delta_x", "ECHO alpha"}},
		{"folderId=0190d4c3-0000-7000-8000-000000000000", []string{}},
		{"q=ALPHA&sortBy=name&sortDir=asc", []string{"Alpha", "ECHO alpha"}},
		{"q=lph&status=disabled&folderId=none", []string{"ECHO alpha"}},
		{"q=%25", []string{"charlie 100%"}}, // % is a literal, not a wildcard
		{"q=_", []string{"delta_x"}},        // so is _
		{"q=lt_", []string{}},               // _ does not match any character
		{"q=" + strings.Repeat("z", 128), []string{}},
	}
	for _, c := range cases {
		if got := list(c.query); !slices.Equal(got, c.want) {
			t.Errorf("GET /v1/agents?%s = %v, want %v", c.query, got, c.want)
		}
	}
	// updatedAt sorts by the last change.
	time.Sleep(2 * time.Millisecond)
	all := e.must(http.StatusOK, "GET", "/v1/agents?sortBy=name&sortDir=asc", nil).List(t)
	e.must(http.StatusOK, "PATCH", "/v1/agents/"+all[2]["id"].(string), map[string]any{"firstMessage": "touched"})
	if got := list("sortBy=updatedAt"); got[0] != "charlie 100%" {
		t.Errorf("sortBy=updatedAt first = %v, want the agent just changed", got[0])
	}
	// Deleting a folder leaves its agents uncategorized.
	e.must(http.StatusNoContent, "DELETE", "/v1/folders/"+f2["id"].(string), nil)
	if got := list("folderId=none&sortDir=asc"); !slices.Equal(got, []string{"charlie 100%", "delta_x", "ECHO alpha"}) {
		t.Errorf("after folder delete, folderId=none = %v", got)
	}
}

func TestAgentListPagination(t *testing.T) {
	e := newEnv(t)
	for i := range 7 {
		e.createAgent(map[string]any{"name": fmt.Sprintf("agent-%d", i)})
	}
	page := func(q string) (names []string, page, size, total int, next bool) {
		t.Helper()
		r := e.must(http.StatusOK, "GET", "/v1/agents?sortBy=name&sortDir=asc&"+q, nil)
		m := r.JSON(t)
		for _, a := range r.List(t) {
			names = append(names, a["name"].(string))
		}
		return names, int(m["page"].(float64)), int(m["pageSize"].(float64)), int(m["total"].(float64)), m["hasNextPage"].(bool)
	}
	cases := []struct {
		q                  string
		first              string
		n, page, size, tot int
		next               bool
	}{
		{"", "agent-0", 7, 1, 25, 7, false},
		{"pageSize=3", "agent-0", 3, 1, 3, 7, true},
		{"pageSize=3&page=2", "agent-3", 3, 2, 3, 7, true},
		{"pageSize=3&page=3", "agent-6", 1, 3, 3, 7, false},
		{"pageSize=3&page=4", "", 0, 4, 3, 7, false},
		{"pageSize=7", "agent-0", 7, 1, 7, 7, false},
		{"pageSize=1&page=7", "agent-6", 1, 7, 1, 7, false},
		{"pageSize=100&page=1000", "", 0, 1000, 100, 7, false},
	}
	for _, c := range cases {
		got, p, s, total, next := page(c.q)
		if len(got) != c.n || p != c.page || s != c.size || total != c.tot || next != c.next || (c.n > 0 && got[0] != c.first) {
			t.Errorf("?%s: %d items from %v, page %d size %d total %d next %v; want %d from %s, page %d size %d total %d next %v",
				c.q, len(got), got, p, s, total, next, c.n, c.first, c.page, c.size, c.tot, c.next)
		}
	}
	// Pages never overlap and cover the list, also when names tie.
	for range 3 {
		e.createAgent(map[string]any{"name": "same"})
	}
	seen := map[string]bool{}
	for p := 1; p <= 5; p++ {
		for _, a := range e.must(http.StatusOK, "GET", fmt.Sprintf("/v1/agents?sortBy=name&pageSize=2&page=%d", p), nil).List(t) {
			if seen[a["id"].(string)] {
				t.Errorf("agent %v on two pages", a["name"])
			}
			seen[a["id"].(string)] = true
		}
	}
	if len(seen) != 10 {
		t.Errorf("pages covered %d of 10 agents", len(seen))
	}
}

func TestAgentListMinimal(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(map[string]any{"defaultVariables": map[string]any{"x": "y"}})
	e.create("/v1/agents/"+a["id"].(string)+"/custom-tools", map[string]any{"name": "t", "webhookUrl": "https://example.com"})
	assertMinimal(t, e.must(http.StatusOK, "GET", "/v1/agents?minimal=true", nil).List(t)[0])
	full := e.must(http.StatusOK, "GET", "/v1/agents?minimal=false", nil).List(t)[0]
	if full["promptTemplate"] == nil || len(full["customTools"].([]any)) != 1 {
		t.Errorf("minimal=false list lacks details: %v", full)
	}
}

func TestAgentListQueryIsStrict(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ query, field string }{
		{"page=0", "page"}, {"page=-1", "page"}, {"page=x", "page"}, {"page=1.5", "page"},
		{"pageSize=0", "pageSize"}, {"pageSize=101", "pageSize"}, {"pageSize=", "pageSize"},
		{"sortBy=color", "sortBy"}, {"sortBy=createdat", "sortBy"}, {"sortDir=up", "sortDir"},
		{"status=bogus", "status"}, {"minimal=maybe", "minimal"}, {"minimal=1", "minimal"},
		{"folderId=nope", "folderId"}, {"q=" + strings.Repeat("z", 129), "q"},
		{"page=1&page=2", "page"}, {"color=red", "color"},
	} {
		e.invalid("validation_failed", "GET", "/v1/agents?"+c.query, nil, c.field)
	}
	e.invalid("validation_failed", "GET", "/v1/agents?page=0&pageSize=101&sortBy=x", nil, "page", "pageSize", "sortBy")
	for _, ok := range []string{"page=1", "pageSize=1", "pageSize=100", "sortDir=asc", "minimal=true", "q=", "status=active", "folderId=none"} {
		e.must(http.StatusOK, "GET", "/v1/agents?"+ok, nil)
	}
}
