package web

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/parley-voice/parley/internal/store"
)

// pager is a list's page navigation, drawn by the "pager" partial; every
// paged list carries one.
type pager struct {
	Total, Page, Last int
	PrevURL, NextURL  string
	// Problems are broken page or pageSize values, shown above the list.
	Problems []string
}

// adminPage reads an admin list's page and pageSize with the API's rules;
// these lists run oldest first, as they always have. A broken value is
// reported and falls back to its default.
func adminPage(r *http.Request) (store.Page, []string) {
	q := listQuery{v: r.URL.Query()}
	p := store.Page{Number: 1, Size: defaultPageSize, SortDir: store.Asc}
	q.number("page", &p.Number, 1, 1<<31-1)
	q.number("pageSize", &p.Size, 1, maxPageSize)
	return p, q.problems
}

// newPager is the navigation of page p of total rows at u.
func newPager(u *url.URL, p store.Page, total int, problems []string) pager {
	pg := pager{Total: total, Page: p.Number, Last: max(1, (total+p.Size-1)/p.Size), Problems: problems}
	link := func(n int) string {
		q := u.Query()
		q.Set("page", strconv.Itoa(n))
		return u.Path + "?" + q.Encode()
	}
	if p.Number > 1 {
		pg.PrevURL = link(min(p.Number-1, pg.Last))
	}
	if p.Number < pg.Last {
		pg.NextURL = link(p.Number + 1)
	}
	return pg
}

// pageOf is page p of all, for lists the store returns whole.
func pageOf[T any](all []T, p store.Page) []T {
	start := min((p.Number-1)*p.Size, len(all))
	return all[start:min(start+p.Size, len(all))]
}

// listStatus is a list page's status: 400 when its query was broken.
func listStatus(problems []string) int {
	if len(problems) > 0 {
		return http.StatusBadRequest
	}
	return http.StatusOK
}
