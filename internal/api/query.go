package api

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// query reads query parameters strictly: each known once, of the right
// shape, and no unknown ones. Errors accumulate; done reports them all.
type query struct {
	values url.Values
	seen   map[string]bool
	l      invalid.List
}

func newQuery(r *http.Request) *query {
	q := &query{seen: map[string]bool{}}
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		q.l.Add("query", "is not a valid query string")
	}
	for _, k := range invalid.Values(v, &q.l) {
		delete(v, k) // named for its text; then read as absent, so named once
	}
	q.values = v
	return q
}

// get returns the parameter's only value and whether it was given.
func (q *query) get(name string) (string, bool) {
	q.seen[name] = true
	vs, ok := q.values[name]
	if !ok {
		return "", false
	}
	if len(vs) > 1 {
		q.l.Add(name, "must be given once")
		return "", false
	}
	return vs[0], true
}

func (q *query) int(name string, def, lo, hi int) int {
	s, ok := q.get(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		if hi == maxInt {
			q.l.Add(name, "must be an integer of at least %d", lo)
		} else {
			q.l.Add(name, "must be an integer between %d and %d", lo, hi)
		}
		return def
	}
	return n
}

const maxInt = int(^uint(0) >> 1)

func (q *query) bool(name string, def bool) bool {
	s, ok := q.get(name)
	if !ok {
		return def
	}
	switch s {
	case "true":
		return true
	case "false":
		return false
	}
	q.l.Add(name, "must be true or false")
	return def
}

func (q *query) enum(name, def string, allowed ...string) string {
	s, ok := q.get(name)
	if !ok {
		return def
	}
	if !slices.Contains(allowed, s) {
		q.l.Add(name, "must be one of %s", strings.Join(allowed, ", "))
		return def
	}
	return s
}

func (q *query) string(name string, maxLen int) string {
	s, ok := q.get(name)
	if ok && invalid.Len(s) > maxLen {
		q.l.Add(name, "must be at most %d characters", maxLen)
		return ""
	}
	return s
}

// folder reads a folder filter: a folder id, or "none".
func (q *query) folder(name string) string {
	s, ok := q.get(name)
	if ok && s != store.FolderNone && !model.IsUUID(s) {
		q.l.Add(name, "must be a folder id or none")
		return ""
	}
	return s
}

func (q *query) uuid(name string) string {
	s, ok := q.get(name)
	if ok && !model.IsUUID(s) {
		q.l.Add(name, "must be a UUID")
		return ""
	}
	return s
}

// done reports every broken or unknown parameter.
func (q *query) done() error {
	for _, name := range sortedKeys(q.values) {
		if !q.seen[name] {
			q.l.Add(name, "is not a known query parameter")
		}
	}
	return q.l.Err()
}

// pageQuery is the page and size of a list request.
type pageQuery struct {
	Number, Size int
}

const defaultPageSize = 25

func (q *query) page() pageQuery {
	return pageQuery{
		Number: q.int("page", 1, 1, maxInt),
		Size:   q.int("pageSize", defaultPageSize, 1, 100),
	}
}

// storePage is the store's page for p, with the sortDir parameter read too.
func (q *query) storePage(p pageQuery) store.Page {
	return store.Page{Number: p.Number, Size: p.Size, SortDir: q.enum("sortDir", store.Desc, store.Asc, store.Desc)}
}

func sortedKeys(v url.Values) []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// refuseQuery answers 400 naming every query parameter sent to a route that
// reads none.
func refuseQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			if err := newQuery(r).done(); err != nil {
				writeError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
