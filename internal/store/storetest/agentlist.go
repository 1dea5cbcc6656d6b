package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// agentFleet is a set of agents built to tell sorts and filters apart.
type agentFleet struct {
	agents         []model.Agent // in creation order
	sales, support model.Folder
	byName         map[string]model.Agent
}

// newAgentFleet creates, in org: names in mixed case and with LIKE
// wildcards, creation and update times in different orders (with ties),
// some agents disabled, some in folders.
func newAgentFleet(t *testing.T, b *bundle) agentFleet {
	t.Helper()
	f := agentFleet{
		sales:   newFolder(t, b, b.org.ID, func(f *model.Folder) { f.Name = "Sales" }),
		support: newFolder(t, b, b.org.ID, func(f *model.Folder) { f.Name = "Support" }),
		byName:  map[string]model.Agent{},
	}
	specs := []struct {
		name             string
		created, updated int
		status           string
		folder           *string
	}{
		{"alpha", 1, 50, model.AgentActive, &f.sales.ID},
		{"Bravo", 2, 40, model.AgentDisabled, &f.sales.ID},
		{"charlie", 3, 60, model.AgentActive, nil},
		{"delta_1", 4, 40, model.AgentActive, &f.support.ID},
		{"DELTA%2", 4, 10, model.AgentDisabled, nil},
		{"echo", 5, 20, model.AgentActive, &f.support.ID},
		{`fox\trot`, 6, 30, model.AgentActive, nil},
		{"Alpha", 7, 70, model.AgentActive, nil},
	}
	for _, s := range specs {
		a := newAgent(t, b, b.org.ID, func(a *model.Agent) {
			a.Name, a.Status, a.FolderID = s.name, s.status, s.folder
			a.CreatedAt, a.UpdatedAt = at(s.created), at(s.updated)
		})
		f.agents = append(f.agents, a)
		f.byName[a.Name] = a
	}
	newAgent(t, b, b.other.ID, func(a *model.Agent) { a.Name = "alpha" }) // never listed
	return f
}

// sorted is the fleet's ids in the order key then id, ascending.
func (f agentFleet) sorted(keep func(model.Agent) bool, key func(model.Agent) string) []string {
	var rows []model.Agent
	for _, a := range f.agents {
		if keep == nil || keep(a) {
			rows = append(rows, a)
		}
	}
	slices.SortFunc(rows, func(x, y model.Agent) int {
		if c := strings.Compare(key(x), key(y)); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return ids(rows, func(a model.Agent) string { return a.ID })
}

// sortableTime formats times so that text order is time order.
const sortableTime = "2006-01-02T15:04:05.000000000Z"

func createdKey(a model.Agent) string { return a.CreatedAt.Format(sortableTime) }
func updatedKey(a model.Agent) string { return a.UpdatedAt.Format(sortableTime) }
func nameKey(a model.Agent) string    { return strings.ToLower(a.Name) }

func listAgents(t *testing.T, b *bundle, f store.AgentFilter) ([]string, int) {
	t.Helper()
	var total int
	rows := read(t, b, func(tx store.Tx) ([]model.Agent, error) {
		rows, n, err := tx.ListAgents(b.ctx, b.org.ID, f)
		total = n
		return rows, err
	})
	return ids(rows, func(a model.Agent) string { return a.ID }), total
}

func page(size int) store.Page { return store.Page{Number: 1, Size: size} }

var agentListTests = []test{
	{"Sorts", func(t *testing.T, b *bundle) {
		fleet := newAgentFleet(t, b)
		for _, s := range []struct {
			by  string
			key func(model.Agent) string
		}{
			{"", createdKey},
			{store.SortCreatedAt, createdKey},
			{store.SortUpdatedAt, updatedKey},
			{store.SortName, nameKey},
		} {
			want := fleet.sorted(nil, s.key)
			got, total := listAgents(t, b, store.AgentFilter{Page: store.Page{Number: 1, Size: 50, SortDir: store.Asc}, SortBy: s.by})
			wantEqual(t, want, got)
			wantEqual(t, len(want), total)
			got, _ = listAgents(t, b, store.AgentFilter{Page: page(50), SortBy: s.by}) // default: desc
			wantEqual(t, reversed(want), got)
			got, _ = listAgents(t, b, store.AgentFilter{Page: store.Page{Number: 1, Size: 50, SortDir: store.Desc}, SortBy: s.by})
			wantEqual(t, reversed(want), got)
		}
	}},
	{"Filters", func(t *testing.T, b *bundle) {
		fleet := newAgentFleet(t, b)
		in := func(folder *model.Folder) func(model.Agent) bool {
			return func(a model.Agent) bool {
				if folder == nil {
					return a.FolderID == nil
				}
				return a.FolderID != nil && *a.FolderID == folder.ID
			}
		}
		disabled := func(a model.Agent) bool { return a.Status == model.AgentDisabled }
		names := func(names ...string) func(model.Agent) bool {
			return func(a model.Agent) bool { return slices.Contains(names, a.Name) }
		}
		for _, c := range []struct {
			name string
			f    store.AgentFilter
			keep func(model.Agent) bool
		}{
			{"all", store.AgentFilter{}, nil},
			{"status", store.AgentFilter{Status: model.AgentDisabled}, disabled},
			{"folder", store.AgentFilter{FolderID: fleet.sales.ID}, in(&fleet.sales)},
			{"no folder", store.AgentFilter{FolderID: store.FolderNone}, in(nil)},
			{"unknown folder", store.AgentFilter{FolderID: model.NewID()}, names()},
			{"malformed folder", store.AgentFilter{FolderID: "not-a-uuid"}, names()},
			{"status and folder", store.AgentFilter{Status: model.AgentDisabled, FolderID: store.FolderNone}, names("DELTA%2")},
			{"query any case", store.AgentFilter{Query: "ALPH"}, names("alpha", "Alpha")},
			{"query substring", store.AgentFilter{Query: "ELT"}, names("delta_1", "DELTA%2")},
			{"query percent is literal", store.AgentFilter{Query: "%"}, names("DELTA%2")},
			{"query underscore is literal", store.AgentFilter{Query: "a_"}, names("delta_1")},
			{"query backslash is literal", store.AgentFilter{Query: `x\t`}, names(`fox\trot`)},
			{"query no match", store.AgentFilter{Query: "zulu"}, names()},
			{"query and folder", store.AgentFilter{Query: "a", FolderID: fleet.support.ID}, names("delta_1")},
		} {
			t.Run(c.name, func(t *testing.T) {
				f := c.f
				f.Page = store.Page{Number: 1, Size: 50, SortDir: store.Asc}
				want := fleet.sorted(c.keep, createdKey)
				got, total := listAgents(t, b, f)
				wantEqual(t, want, got)
				wantEqual(t, len(want), total)
			})
		}
	}},
	{"Pages", func(t *testing.T, b *bundle) {
		fleet := newAgentFleet(t, b)
		for _, by := range []string{store.SortCreatedAt, store.SortUpdatedAt, store.SortName} {
			key := map[string]func(model.Agent) string{
				store.SortCreatedAt: createdKey, store.SortUpdatedAt: updatedKey, store.SortName: nameKey,
			}[by]
			want := reversed(fleet.sorted(nil, key))
			var pages []string
			for n := 1; n <= 3; n++ {
				got, total := listAgents(t, b, store.AgentFilter{Page: store.Page{Number: n, Size: 3}, SortBy: by})
				wantEqual(t, len(want), total)
				pages = append(pages, got...)
			}
			wantEqual(t, want, pages)
			got, total := listAgents(t, b, store.AgentFilter{Page: store.Page{Number: 4, Size: 3}, SortBy: by})
			if len(got) != 0 || total != len(want) {
				t.Fatalf("page past the end: %d rows, total %d", len(got), total)
			}
		}
		// The total counts the filtered rows, not the page.
		got, total := listAgents(t, b, store.AgentFilter{Page: store.Page{Number: 2, Size: 1}, Status: model.AgentDisabled})
		wantEqual(t, 2, total)
		wantEqual(t, []string{fleet.byName["Bravo"].ID}, got)
	}},
	{"OtherOrgSeesNone", func(t *testing.T, b *bundle) {
		newAgentFleet(t, b)
		rows, total, err := func() ([]model.Agent, int, error) {
			var rows []model.Agent
			var total int
			err := b.view(func(tx store.Tx) error {
				var err error
				rows, total, err = tx.ListAgents(b.ctx, model.NewID(), store.AgentFilter{Page: page(10)})
				return err
			})
			return rows, total, err
		}()
		if err != nil || len(rows) != 0 || total != 0 {
			t.Fatalf("unknown org: %d rows, total %d, err %v", len(rows), total, err)
		}
	}},
}
