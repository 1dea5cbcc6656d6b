package eval

import (
	"errors"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

// TestCreateCases: saved together, the cases keep their order; one bad
// case, or one too many for the suite, saves none.
func TestCreateCases(t *testing.T) {
	ctx := t.Context()
	st := sqlitetest.Open(t)
	now := model.Now()
	o := model.Organization{ID: model.NewID(), Name: "acme", ConcurrencyLimit: 10, CreatedAt: now, UpdatedAt: now}
	a := model.Agent{ID: model.NewID(), OrgID: o.ID, Name: "Front desk", Status: model.AgentActive, Mode: model.ModeSinglePrompt, CreatedAt: now, UpdatedAt: now}
	if err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &o); err != nil {
			return err
		}
		return tx.CreateAgent(ctx, &a)
	}); err != nil {
		t.Fatal(err)
	}
	s := &Service{Store: st}
	suite, err := s.CreateSuite(ctx, o.ID, SuiteInput{Name: opt.Value("Bookings"), AgentID: opt.Value(a.ID)})
	if err != nil {
		t.Fatal(err)
	}
	in := func(name string) CaseInput {
		return CaseInput{Name: opt.Value(name), Script: opt.Value("You call."), ScoringRubric: opt.Value("It answers.")}
	}
	cases := func() []string {
		got, _, err := s.ListCases(ctx, o.ID, suite.ID, store.Page{Number: 1, Size: 100, SortDir: store.Asc})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range got {
			names = append(names, c.Name)
		}
		return names
	}

	bad := in("second")
	bad.Script = opt.Value(" ")
	_, err = s.CreateCases(ctx, o.ID, suite.ID, []CaseInput{in("first"), bad})
	var refused *invalid.Error
	if !errors.As(err, &refused) || len(refused.Fields) != 1 || refused.Fields[0].Name != "cases[1].script" {
		t.Fatalf("a blank script: %v", err)
	}
	if got := cases(); len(got) != 0 {
		t.Fatalf("saved after a refusal: %v", got)
	}

	var batch []CaseInput
	for _, n := range []string{"c", "a", "d", "b"} {
		batch = append(batch, in(n))
	}
	if _, err := s.CreateCases(ctx, o.ID, suite.ID, batch); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cases(), ""); got != "cadb" {
		t.Fatalf("cases in order %q, want cadb", got)
	}

	many := make([]CaseInput, MaxCasesPerSuite-3)
	for i := range many {
		many[i] = in("more")
	}
	var conflict *invalid.Conflict
	if _, err := s.CreateCases(ctx, o.ID, suite.ID, many); !errors.As(err, &conflict) {
		t.Fatalf("past the suite's limit: %v", err)
	}
	if got := cases(); len(got) != 4 {
		t.Fatalf("%d cases after a refused batch, want 4", len(got))
	}
	if _, err := s.CreateCases(ctx, model.NewID(), suite.ID, batch[:1]); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another organization's suite: %v", err)
	}
}
