package sqlstore

import (
	"context"
	"strings"

	"github.com/parley-voice/parley/internal/model"
)

// queryFilter is the condition, " AND (...)", that a call list's q puts on
// the calls c, and its arguments: q, its LIKE wildcards and backslashes
// literal, inside the from or to number, the agent name or the summary, in
// any case (both sides lower()ed). It is what q means: an engine's index of
// it (Dialect.CallSearch) finds exactly these calls.
func queryFilter(q string) (string, []any) {
	var terms []string
	var args []any
	pattern := "%" + escapeLike(q) + "%"
	for _, col := range []string{"c.from_number", "c.to_number", "c.agent_name", "c.summary"} {
		terms = append(terms, "lower("+col+`) LIKE lower(?) ESCAPE '\'`)
		args = append(args, pattern)
	}
	return " AND (" + strings.Join(terms, " OR ") + ")", args
}

// callSearch is an engine's index of q, as Dialect.CallSearch gives it.
type callSearch struct {
	ids, count string
	args       []any
}

// searchCalls runs l, a call list of orgID without its filter q, with q found
// through the engine's index s. filtered says whether l has filters besides
// the organization.
//
// The total is counted in the index: with no other filter the index alone
// answers it (one organization's matches, never reading a call); otherwise
// only the matching calls are read. The page is read one of two ways, by
// what is cheaper for the count of matches just taken: the matching calls,
// sorted (reads as many calls as match), or the list's own order, through
// its index, checking each call with LIKE until the page is full (reads
// about (offset + size) × calls / matches calls, when the matches are
// spread over the list as they usually are). So a rare q reads its few
// matches, and a common one only the page's neighbourhood.
func (t *tx) searchCalls(ctx context.Context, orgID, q string, l listing, s callSearch, filtered bool,
	scan func(rowScanner) (model.Call, error)) ([]model.Call, int, error) {
	const what = "list calls"
	matches := "(" + s.ids + ") m CROSS JOIN calls c ON c.id = m.call_id" // CROSS: the matches drive the join
	var total int
	var err error
	if filtered {
		total, err = t.count(ctx, what, "SELECT count(*) FROM "+matches+" WHERE "+l.where,
			append(s.args[:len(s.args):len(s.args)], l.args...)...)
	} else {
		total, err = t.count(ctx, what, s.count, s.args...)
	}
	if err != nil {
		return nil, 0, err
	}
	l.counted = &total
	walk := false
	if l.page.Size > 0 && total > 0 {
		var calls int
		if calls, err = t.count(ctx, what, `SELECT COALESCE((SELECT calls FROM call_counts WHERE org_id = ?), 0)`, orgID); err != nil {
			return nil, 0, err
		}
		// Reading a match through the index costs about twice what reading
		// the next call of the list's order does.
		reach := max(l.page.Offset(), 0) + l.page.Size
		walk = int64(reach)*int64(calls) < 2*int64(total)*int64(total)
	}
	if walk {
		like, largs := queryFilter(q)
		l.where += like
		l.args = append(l.args[:len(l.args):len(l.args)], largs...)
	} else {
		l.from = matches
		l.args = append(s.args[:len(s.args):len(s.args)], l.args...)
	}
	return list(ctx, t, l, scan, what)
}
