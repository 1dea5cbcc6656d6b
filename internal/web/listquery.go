package web

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// listQuery reads a list page's query with the API's rules for the same
// parameters. A broken value is reported in problems and left at its
// default, so the page still shows a list beside the message.
type listQuery struct {
	v        url.Values
	problems []string
}

func (q *listQuery) bad(name, msg string) { q.problems = append(q.problems, name+": "+msg) }

// page is page, pageSize and sortDir (newest first by default).
func (q *listQuery) page() store.Page {
	p := store.Page{Number: 1, Size: defaultPageSize, SortDir: store.Desc}
	q.number("page", &p.Number, 1, 1<<31-1)
	q.number("pageSize", &p.Size, 1, maxPageSize)
	q.enum("sortDir", &p.SortDir, store.Asc, store.Desc)
	return p
}

func (q *listQuery) enum(name string, dst *string, allowed ...string) {
	if v := q.v.Get(name); v != "" {
		if slices.Contains(allowed, v) {
			*dst = v
		} else {
			q.bad(name, "must be one of "+strings.Join(allowed, ", "))
		}
	}
}

func (q *listQuery) uuid(name string, dst *string) {
	if v := q.v.Get(name); v != "" {
		if model.IsUUID(v) {
			*dst = v
		} else {
			q.bad(name, "must be a UUID")
		}
	}
}

// folder is folderId: a folder's id, or none for no folder.
func (q *listQuery) folder(dst *string) {
	if v := q.v.Get("folderId"); v != "" {
		if v == store.FolderNone || model.IsUUID(v) {
			*dst = v
		} else {
			q.bad("folderId", "must be a folder id or none")
		}
	}
}

func (q *listQuery) e164(name string, dst *string) {
	v := q.v.Get(name)
	if v == "" {
		return
	}
	if strings.HasPrefix(v, " ") {
		v = "+" + v[1:] // an unencoded "+" arrives as a space
	}
	if invalid.IsE164(v) {
		*dst = v
	} else {
		q.bad(name, "must be an E.164 number such as +14155550100")
	}
}

// time is an RFC 3339 date-time, or a datetime-local field's minutes
// (no zone: UTC).
func (q *listQuery) time(name string, dst *time.Time) {
	v := q.v.Get(name)
	if v == "" {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		t, err = time.Parse("2006-01-02T15:04", v)
	}
	if err != nil {
		q.bad(name, "must be an RFC 3339 date-time such as 2026-11-23T09:00:00Z")
		return
	}
	*dst = t.UTC()
}

func (q *listQuery) number(name string, dst *int, lo, hi int) {
	if v := q.v.Get(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			q.bad(name, "must be a whole number between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
			return
		}
		*dst = n
	}
}
