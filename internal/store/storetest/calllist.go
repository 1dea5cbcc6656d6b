package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// callFleet is a set of calls built to tell call sorts and filters apart.
type callFleet struct {
	calls            []model.Call // in creation order
	byTag            map[string]model.Call
	sales, support   model.Folder
	alice, bob, gone model.Agent // gone is deleted once its calls exist
	trunk            model.SIPTrunk
}

// newCallFleet creates, in org: calls of three agents (one in a folder, one
// without, one in a folder but deleted), in every status and both directions,
// with ties in creation time, start, end and duration, nulls in every
// nullable sort key, and numbers, agent names and summaries to search,
// some holding LIKE wildcards and backslashes.
func newCallFleet(t *testing.T, b *bundle) callFleet {
	t.Helper()
	f := callFleet{
		sales:   newFolder(t, b, b.org.ID, func(f *model.Folder) { f.Name = "Sales" }),
		support: newFolder(t, b, b.org.ID, func(f *model.Folder) { f.Name = "Support" }),
		trunk:   newSIPTrunk(t, b, b.org.ID),
		byTag:   map[string]model.Call{},
	}
	f.alice = newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name, a.FolderID = "Alice Agent", &f.sales.ID })
	f.bob = newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name = "Bob_Bot" })
	f.gone = newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name, a.FolderID = "Carol 50%", &f.support.ID })
	none := -1
	specs := []struct {
		tag                     string
		agent                   model.Agent
		status, direction       string
		trunk                   bool
		from, to                string
		created, started, ended int // seconds; none is null
		duration                int
		summary                 string // "" is null
	}{
		{"c1", f.alice, model.CallCompleted, model.Outbound, true, "+15550001001", "+15550002001", 1, 2, 60, 58, "Booked a table"},
		{"c2", f.bob, model.CallFailed, model.Outbound, false, "+15550001001", "+15550002002", 2, none, 5, none, ""},
		{"c3", f.alice, model.CallQueued, model.Outbound, true, "+15550001003", "+15550002003", 3, none, none, none, ""},
		{"c4", f.gone, model.CallCompleted, model.Inbound, false, "+15550003003", "+15550001001", 3, 4, 30, 26, "100% satisfied"},
		{"c5", f.bob, model.CallInProgress, model.Inbound, true, "+15550003005", "+15550001005", 5, 6, none, none, ""},
		{"c6", f.alice, model.CallCompleted, model.Outbound, false, "+15550001006", "+15550002006", 6, 6, 30, 24, "under_score"},
		{"c7", f.bob, model.CallCanceled, model.Outbound, false, "+15550001007", "+15550002007", 7, none, 8, none, ""},
		{"c8", f.alice, model.CallTransferred, model.Inbound, true, "+15550003008", "+15550001008", 8, 9, 20, 11, `back\slash`},
		{"c9", f.gone, model.CallRinging, model.Outbound, false, "+15550001009", "+15550002009", 9, none, none, none, ""},
		{"c10", f.alice, model.CallCompleted, model.Inbound, false, "+15550003010", "+15550001010", 10, 11, 69, 58, "Mixed CASE Summary"},
	}
	tm := func(sec int) *time.Time {
		if sec == none {
			return nil
		}
		return ptr(at(sec))
	}
	for _, s := range specs {
		c := newCall(t, b, b.org.ID, s.agent.ID, func(c *model.Call) {
			c.AgentName, c.Status, c.Direction, c.FromNumber, c.ToNumber = s.agent.Name, s.status, s.direction, s.from, s.to
			c.CreatedAt, c.StartedAt, c.EndedAt = at(s.created), tm(s.started), tm(s.ended)
			if s.trunk {
				c.SIPTrunkID = &f.trunk.ID
			}
			if s.duration != none {
				c.DurationSeconds = ptr(s.duration)
			}
			if s.summary != "" {
				c.Summary = ptr(s.summary)
			}
			c.Variables = map[string]any{"tag": s.tag}
			c.Transcript = []map[string]any{{"role": "user", "text": "hello " + s.tag}}
			c.Metrics = map[string]any{"llm_prompt_tokens": 10.0}
		})
		f.calls = append(f.calls, c)
		f.byTag[s.tag] = c
	}
	// Never listed: another organization's calls, matching every filter.
	for _, s := range specs[:3] {
		newCall(t, b, b.other.ID, s.agent.ID, func(c *model.Call) {
			c.AgentName, c.Status, c.FromNumber, c.ToNumber = s.agent.Name, s.status, s.from, s.to
			c.CreatedAt, c.SIPTrunkID, c.Summary = at(s.created), &f.trunk.ID, ptr("Booked 100% under_score")
		})
	}
	b.update(t, func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, b.org.ID, f.gone.ID) })
	return f
}

// callKey is a call's sort key as sortable text, nil for null.
type callKey func(model.Call) *string

func timeKey(get func(model.Call) *time.Time) callKey {
	return func(c model.Call) *string {
		if v := get(c); v != nil {
			return ptr(v.Format(sortableTime))
		}
		return nil
	}
}

var callKeys = map[string]callKey{
	"":                      timeKey(func(c model.Call) *time.Time { return &c.CreatedAt }),
	store.CallSortCreatedAt: timeKey(func(c model.Call) *time.Time { return &c.CreatedAt }),
	store.CallSortStartedAt: timeKey(func(c model.Call) *time.Time { return c.StartedAt }),
	store.CallSortEndedAt:   timeKey(func(c model.Call) *time.Time { return c.EndedAt }),
	store.CallSortStatus:    func(c model.Call) *string { return &c.Status },
	store.CallSortDirection: func(c model.Call) *string { return &c.Direction },
	store.CallSortDurationSeconds: func(c model.Call) *string {
		if c.DurationSeconds == nil {
			return nil
		}
		return ptr(fmt.Sprintf("%010d", *c.DurationSeconds))
	},
}

// sorted is the ids of the fleet's calls that keep keeps, in the order the
// store must give: by key then id in dir, nulls last either way.
func (f callFleet) sorted(keep func(model.Call) bool, key callKey, dir string) []string {
	var rows []model.Call
	for _, c := range f.calls {
		if keep == nil || keep(c) {
			rows = append(rows, c)
		}
	}
	sign := 1
	if dir != store.Asc {
		sign = -1
	}
	slices.SortFunc(rows, func(x, y model.Call) int {
		kx, ky := key(x), key(y)
		switch {
		case kx == nil && ky != nil:
			return 1
		case kx != nil && ky == nil:
			return -1
		case kx != nil && ky != nil:
			if c := strings.Compare(*kx, *ky); c != 0 {
				return sign * c
			}
		}
		return sign * strings.Compare(x.ID, y.ID)
	})
	return callIDs(rows)
}

func (f callFleet) tags(tags ...string) func(model.Call) bool {
	return func(c model.Call) bool {
		for _, tag := range tags {
			if f.byTag[tag].ID == c.ID {
				return true
			}
		}
		return false
	}
}

func listCallRows(t *testing.T, b *bundle, f store.CallFilter) ([]model.Call, int) {
	t.Helper()
	var total int
	rows := read(t, b, func(tx store.Tx) ([]model.Call, error) {
		rows, n, err := tx.ListCalls(b.ctx, b.org.ID, f)
		total = n
		return rows, err
	})
	if rows == nil {
		t.Fatal("ListCalls returned nil, want a slice")
	}
	return rows, total
}

// listCalls lists the org's calls with f, the whole list unless f pages.
func listCalls(t *testing.T, b *bundle, f store.CallFilter) ([]string, int) {
	t.Helper()
	rows, total := listCallRows(t, b, f)
	return callIDs(rows), total
}

var callListTests = []test{
	{"Sorts", func(t *testing.T, b *bundle) {
		fleet := newCallFleet(t, b)
		for by, key := range callKeys {
			for _, dir := range []string{"", store.Desc, store.Asc} {
				t.Run(fmt.Sprintf("%s %s", by, dir), func(t *testing.T) {
					wantDir := dir
					if wantDir == "" {
						wantDir = store.Desc
					}
					want := fleet.sorted(nil, key, wantDir)
					got, total := listCalls(t, b, store.CallFilter{Page: store.Page{SortDir: dir}, SortBy: by})
					wantEqual(t, want, got)
					wantEqual(t, len(want), total)
					// Pages of 3 add up to the same list.
					var pages []string
					for n := 1; n <= 4; n++ {
						got, total := listCalls(t, b, store.CallFilter{Page: store.Page{Number: n, Size: 3, SortDir: dir}, SortBy: by})
						wantEqual(t, len(want), total)
						pages = append(pages, got...)
					}
					wantEqual(t, want, pages)
				})
			}
		}
	}},
	{"NullsLast", func(t *testing.T, b *bundle) {
		// Spelled out for one key, besides the model in sorted.
		fleet := newCallFleet(t, b)
		tags := func(tags ...string) []string {
			out := make([]string, len(tags))
			for i, tag := range tags {
				out[i] = fleet.byTag[tag].ID
			}
			return out
		}
		byID := func(tags []string, dir string) []string {
			ids := tags
			slices.Sort(ids)
			if dir == store.Desc {
				slices.Reverse(ids)
			}
			return ids
		}
		nulls := tags("c2", "c3", "c5", "c7", "c9")
		tie := tags("c1", "c10") // 58 seconds each
		got, _ := listCalls(t, b, store.CallFilter{SortBy: store.CallSortDurationSeconds, Page: store.Page{SortDir: store.Desc}})
		want := append(append(byID(slices.Clone(tie), store.Desc), tags("c4", "c6", "c8")...), byID(slices.Clone(nulls), store.Desc)...)
		wantEqual(t, want, got)
		got, _ = listCalls(t, b, store.CallFilter{SortBy: store.CallSortDurationSeconds, Page: store.Page{SortDir: store.Asc}})
		want = append(append(tags("c8", "c6", "c4"), byID(slices.Clone(tie), store.Asc)...), byID(slices.Clone(nulls), store.Asc)...)
		wantEqual(t, want, got)
	}},
	{"Filters", func(t *testing.T, b *bundle) {
		fleet := newCallFleet(t, b)
		tags := fleet.tags
		ms := func(sec int, micro int) time.Time { return at(sec).Add(time.Duration(micro) * time.Microsecond) }
		for _, c := range []struct {
			name string
			f    store.CallFilter
			keep func(model.Call) bool
		}{
			{"all", store.CallFilter{}, nil},
			{"status", store.CallFilter{Statuses: []string{model.CallCompleted}}, tags("c1", "c4", "c6", "c10")},
			{"statuses", store.CallFilter{Statuses: []string{model.CallFailed, model.CallQueued, model.CallRinging}}, tags("c2", "c3", "c9")},
			{"status none", store.CallFilter{Statuses: []string{"BOGUS"}}, tags()},
			{"direction", store.CallFilter{Direction: model.Inbound}, tags("c4", "c5", "c8", "c10")},
			{"agent", store.CallFilter{AgentID: fleet.bob.ID}, tags("c2", "c5", "c7")},
			{"deleted agent", store.CallFilter{AgentID: fleet.gone.ID}, tags("c4", "c9")},
			{"unknown agent", store.CallFilter{AgentID: model.NewID()}, tags()},
			{"malformed agent", store.CallFilter{AgentID: "bob"}, tags()},
			{"folder", store.CallFilter{FolderID: fleet.sales.ID}, tags("c1", "c3", "c6", "c8", "c10")},
			{"folder of the deleted agent", store.CallFilter{FolderID: fleet.support.ID}, tags()},
			{"no folder", store.CallFilter{FolderID: store.FolderNone}, tags("c2", "c5", "c7")},
			{"unknown folder", store.CallFilter{FolderID: model.NewID()}, tags()},
			{"malformed folder", store.CallFilter{FolderID: "sales"}, tags()},
			{"trunk", store.CallFilter{SIPTrunkID: fleet.trunk.ID}, tags("c1", "c3", "c5", "c8")},
			{"unknown trunk", store.CallFilter{SIPTrunkID: model.NewID()}, tags()},
			{"malformed trunk", store.CallFilter{SIPTrunkID: "trunk"}, tags()},
			{"from", store.CallFilter{FromNumber: "+15550001001"}, tags("c1", "c2")},
			{"from is exact", store.CallFilter{FromNumber: "+1555000100"}, tags()},
			{"to", store.CallFilter{ToNumber: "+15550001001"}, tags("c4")},
			{"created from", store.CallFilter{CreatedFrom: at(8)}, tags("c8", "c9", "c10")},
			{"created to", store.CallFilter{CreatedTo: at(3)}, tags("c1", "c2", "c3", "c4")},
			{"created between, inclusive", store.CallFilter{CreatedFrom: at(3), CreatedTo: at(6)}, tags("c3", "c4", "c5", "c6")},
			{"created from, sub-millisecond", store.CallFilter{CreatedFrom: ms(3, 500), CreatedTo: ms(6, 500)}, tags("c5", "c6")},
			{"created to, sub-millisecond", store.CallFilter{CreatedFrom: ms(2, -500), CreatedTo: ms(6, -500)}, tags("c2", "c3", "c4", "c5")},
			{"created from, other zone", store.CallFilter{CreatedFrom: at(9).In(time.FixedZone("X", -5*3600))}, tags("c9", "c10")},
			{"created, empty range", store.CallFilter{CreatedFrom: at(6), CreatedTo: at(5)}, tags()},
			{"q from number", store.CallFilter{Query: "0001001"}, tags("c1", "c2", "c4")},
			{"q to number", store.CallFilter{Query: "0002006"}, tags("c6")},
			{"q agent name, any case", store.CallFilter{Query: "aLiCe"}, tags("c1", "c3", "c6", "c8", "c10")},
			{"q summary, any case", store.CallFilter{Query: "mixed case"}, tags("c10")},
			{"q percent is literal", store.CallFilter{Query: "0%"}, tags("c4", "c9")},
			{"q underscore is literal", store.CallFilter{Query: "b_b"}, tags("c2", "c5", "c7")},
			{"q underscore matches no other character", store.CallFilter{Query: "e_a"}, tags()},
			{"q percent matches no run", store.CallFilter{Query: "ce%ag"}, tags()},
			{"q underscore in summary", store.CallFilter{Query: "r_s"}, tags("c6")},
			{"q backslash is literal", store.CallFilter{Query: `k\s`}, tags("c8")},
			{"q plus", store.CallFilter{Query: "+1555000300"}, tags("c4", "c5", "c8")},
			{"q no match", store.CallFilter{Query: "zulu"}, tags()},
			{"q and status", store.CallFilter{Query: "alice", Statuses: []string{model.CallCompleted}}, tags("c1", "c6", "c10")},
			{"everything", store.CallFilter{
				Statuses: []string{model.CallCompleted, model.CallTransferred}, Direction: model.Inbound, AgentID: fleet.alice.ID,
				FolderID: fleet.sales.ID, SIPTrunkID: fleet.trunk.ID, FromNumber: "+15550003008", ToNumber: "+15550001008",
				CreatedFrom: at(8), CreatedTo: at(8), Query: "slash",
			}, tags("c8")},
		} {
			t.Run(c.name, func(t *testing.T) {
				f := c.f
				want := fleet.sorted(c.keep, callKeys[""], store.Desc)
				got, total := listCalls(t, b, f)
				wantEqual(t, want, got, cmpopts.EquateEmpty())
				wantEqual(t, len(want), total)
				// The total counts the filtered rows, not the page.
				f.Page = store.Page{Number: 2, Size: 2, SortDir: store.Asc}
				got, total = listCalls(t, b, f)
				wantEqual(t, len(want), total)
				asc := reversed(want)
				wantEqual(t, asc[min(2, len(asc)):min(4, len(asc))], got, cmpopts.EquateEmpty())
			})
		}
	}},
	{"Pages", func(t *testing.T, b *bundle) {
		fleet := newCallFleet(t, b)
		var rows []created
		for _, c := range fleet.calls {
			rows = append(rows, created{c.ID, c.CreatedAt})
		}
		list := func(f store.CallFilter) func(store.Page) ([]string, int) {
			return func(p store.Page) ([]string, int) {
				f.Page = p
				return listCalls(t, b, f)
			}
		}
		checkPaging(t, oldestFirst(rows), list(store.CallFilter{}))
		checkPaging(t, oldestFirst(rows), list(store.CallFilter{SortBy: store.CallSortCreatedAt}))
		var outbound []created
		for _, c := range fleet.calls {
			if c.Direction == model.Outbound {
				outbound = append(outbound, created{c.ID, c.CreatedAt})
			}
		}
		checkPaging(t, oldestFirst(outbound), list(store.CallFilter{Direction: model.Outbound}))
		checkPaging(t, nil, list(store.CallFilter{Query: "zulu"}))
	}},
	{"Records", func(t *testing.T, b *bundle) {
		// Lists give whole records, or with Minimal, records without their
		// variables, transcript, summary and metrics.
		fleet := newCallFleet(t, b)
		full, _ := listCallRows(t, b, store.CallFilter{Page: store.Page{SortDir: store.Asc}})
		wantEqual(t, fleet.calls[:2], full[:2])
		want := make([]model.Call, len(full))
		for i, c := range full {
			if c.Variables == nil || c.Transcript == nil || c.Metrics == nil {
				t.Fatalf("full record %d lacks documents: %+v", i, c)
			}
			c.Variables, c.Transcript, c.Summary, c.Metrics = nil, nil, nil, nil
			want[i] = c
		}
		minimal, total := listCallRows(t, b, store.CallFilter{Page: store.Page{SortDir: store.Asc}, Minimal: true})
		wantEqual(t, want, minimal)
		wantEqual(t, len(fleet.calls), total)
		minimal, _ = listCallRows(t, b, store.CallFilter{Page: store.Page{Number: 1, Size: 3}, Minimal: true, FolderID: fleet.sales.ID, Query: "a"})
		for _, c := range minimal {
			if c.Variables != nil || c.Transcript != nil || c.Summary != nil || c.Metrics != nil {
				t.Fatalf("minimal record has big fields: %+v", c)
			}
		}
	}},
	{"UnfilteredTotal", func(t *testing.T, b *bundle) {
		// An unfiltered list's total is the organization's count, kept
		// beside the calls: it must move with them, transaction by
		// transaction.
		total := func(orgID string) int {
			var n int
			read(t, b, func(tx store.Tx) ([]model.Call, error) {
				rows, total, err := tx.ListCalls(b.ctx, orgID, store.CallFilter{Page: page(1)})
				n = total
				return rows, err
			})
			return n
		}
		wantEqual(t, 0, total(b.org.ID))
		for range 3 {
			newCall(t, b, b.org.ID, model.NewID())
		}
		newCall(t, b, b.other.ID, model.NewID())
		boom := errors.New("boom")
		err := b.st.Update(b.ctx, func(tx store.Tx) error {
			c := model.Call{OrgID: b.org.ID, AgentID: model.NewID(), Direction: model.Inbound, Status: model.CallRinging}
			if err := tx.CreateCall(b.ctx, &c); err != nil {
				return err
			}
			return boom
		})
		wantIs(t, err, boom)
		b.update(t, func(tx store.Tx) error {
			for range 2 {
				c := model.Call{OrgID: b.org.ID, AgentID: model.NewID(), Direction: model.Inbound, Status: model.CallRinging}
				if err := tx.CreateCall(b.ctx, &c); err != nil {
					return err
				}
			}
			return nil
		})
		wantEqual(t, 5, total(b.org.ID))
		wantEqual(t, 1, total(b.other.ID))
		// Filtered lists count their rows: the same calls, the same total.
		_, n := listCalls(t, b, store.CallFilter{Statuses: []string{model.CallCompleted, model.CallRinging}})
		wantEqual(t, 5, n)
	}},
	{"OtherOrgSeesNone", func(t *testing.T, b *bundle) {
		newCallFleet(t, b)
		for _, org := range []string{model.NewID(), "not-a-uuid"} {
			var rows []model.Call
			var total int
			err := b.view(func(tx store.Tx) (err error) {
				rows, total, err = tx.ListCalls(b.ctx, org, store.CallFilter{Page: page(10)})
				return err
			})
			if err != nil || rows == nil || len(rows) != 0 || total != 0 {
				t.Fatalf("org %s: %v rows, total %d, err %v", org, rows, total, err)
			}
		}
	}},
}
