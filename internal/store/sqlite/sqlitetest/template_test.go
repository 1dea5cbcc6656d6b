package sqlitetest

import (
	"testing"

	"github.com/pressly/goose/v3"
	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/migrations"
	"github.com/parley-voice/parley/internal/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestCopiesAreMigratedAndApart: each store is at the latest migration and
// its own database: what one writes the next copy does not hold.
func TestCopiesAreMigratedAndApart(t *testing.T) {
	ctx := t.Context()
	first := Open(t)
	p, err := goose.NewProvider(goose.DialectSQLite3, first.DB(), migrations.SQLite(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if pending, err := p.HasPending(ctx); err != nil || pending {
		t.Fatalf("the copy has pending migrations: %v, %v", pending, err)
	}
	if err := first.Update(ctx, func(tx store.Tx) error { return tx.CreateOrg(ctx, &model.Organization{Name: "acme"}) }); err != nil {
		t.Fatal(err)
	}
	second := Open(t, sqlite.WithReaders(1))
	n := -1
	if err := second.View(ctx, func(tx store.Tx) (err error) { n, err = tx.CountOrgs(ctx); return }); err != nil || n != 0 {
		t.Fatalf("a new copy holds %d organizations (%v), want none", n, err)
	}
}
