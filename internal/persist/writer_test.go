package persist_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
	"github.com/parley-voice/parley/internal/store/storefault"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bundle is a Writer over a store whose faults the test sets, and an
// organization to write.
type bundle struct {
	fs      *storefault.Store
	w       *persist.Writer
	reg     *prometheus.Registry
	org     model.Organization
	renames int
}

func setup(t *testing.T, budget time.Duration) *bundle {
	t.Helper()
	fs := storefault.Wrap(sqlitetest.Open(t))
	now := model.Now()
	b := &bundle{fs: fs, reg: prometheus.NewRegistry(),
		org: model.Organization{ID: model.NewID(), Name: "acme", ConcurrencyLimit: 1, CreatedAt: now, UpdatedAt: now}}
	if err := fs.Update(t.Context(), func(tx store.Tx) error { return tx.CreateOrg(t.Context(), &b.org) }); err != nil {
		t.Fatal(err)
	}
	b.w = &persist.Writer{Store: fs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: persist.NewMetrics(b.reg), Budget: budget}
	return b
}

// rename is the write under test: the organization's name, counted.
func (b *bundle) rename(name string) func(ctx context.Context, tx store.Tx) error {
	return func(ctx context.Context, tx store.Tx) error {
		b.renames++
		o, err := tx.GetOrg(ctx, b.org.ID)
		if err != nil {
			return err
		}
		o.Name = name
		return tx.UpdateOrg(ctx, &o)
	}
}

func (b *bundle) name(t *testing.T) string {
	t.Helper()
	o, err := store.Read(t.Context(), b.fs, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(t.Context(), b.org.ID) })
	if err != nil {
		t.Fatal(err)
	}
	return o.Name
}

func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total
}

// A database that is down for a while takes the write once it is back;
// the retries are counted and none is pending after.
func TestUpdateLandsAfterAnOutage(t *testing.T) {
	b := setup(t, time.Minute)
	b.fs.Down(storefault.Refused)
	done := make(chan error, 1)
	go func() { done <- b.w.Update(context.Background(), "org name", b.rename("renamed")) }()
	for b.fs.Fails("") < 3 {
		time.Sleep(time.Millisecond)
	}
	if got := counter(t, b.reg, "parley_store_writes_retrying"); got != 1 {
		t.Errorf("writes retrying during the outage = %v, want 1", got)
	}
	b.fs.Up()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := b.name(t); got != "renamed" {
		t.Errorf("name %q", got)
	}
	if got := counter(t, b.reg, "parley_store_write_retries_total"); got < 3 {
		t.Errorf("retries counted %v, want at least 3", got)
	}
	if got := counter(t, b.reg, "parley_store_writes_retrying"); got != 0 {
		t.Errorf("writes retrying after = %v", got)
	}
}

// A refused statement rolls its transaction back; the next try writes.
func TestUpdateRetriesARefusedStatement(t *testing.T) {
	b := setup(t, time.Minute)
	b.fs.Inject(storefault.Rule{Op: "UpdateOrg", Times: 2, Err: storefault.Busy})
	if err := b.w.Update(t.Context(), "org name", b.rename("renamed")); err != nil {
		t.Fatal(err)
	}
	if b.renames != 3 || b.name(t) != "renamed" {
		t.Errorf("%d tries, name %q", b.renames, b.name(t))
	}
}

// A verdict on the data is not retried.
func TestUpdateStopsAtAPermanentError(t *testing.T) {
	b := setup(t, time.Minute)
	refused := errors.New("a rule of the domain")
	for _, err := range []error{persist.Permanent(refused), store.ErrNotFound, store.ErrConflict, store.ErrClosed} {
		tries := 0
		got := b.w.Update(t.Context(), "refused", func(context.Context, store.Tx) error { tries++; return err })
		if tries != 1 || !errors.Is(got, err) {
			t.Errorf("%v: %d tries, error %v", err, tries, got)
		}
	}
	if got := b.w.Update(t.Context(), "refused", func(context.Context, store.Tx) error { return persist.Permanent(refused) }); !errors.Is(got, refused) {
		t.Errorf("Permanent hides the error: %v", got)
	}
}

// A write the database never takes is given up after the budget, counted.
func TestUpdateGivesUpAfterItsBudget(t *testing.T) {
	b := setup(t, 400*time.Millisecond)
	b.fs.Down(storefault.DiskFull)
	err := b.w.Update(t.Context(), "org name", b.rename("renamed"))
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
	if got := counter(t, b.reg, "parley_store_writes_abandoned_total"); got != 1 {
		t.Errorf("abandoned %v", got)
	}
	b.fs.Up()
	if got := b.name(t); got != "acme" {
		t.Errorf("name %q", got)
	}
}

// Ending the context ends the retries.
func TestUpdateStopsWithItsContext(t *testing.T) {
	b := setup(t, time.Hour)
	b.fs.Down(storefault.Refused)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.w.Update(ctx, "org name", b.rename("renamed")) }()
	for b.fs.Fails("") < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if got := counter(t, b.reg, "parley_store_writes_retrying"); got != 0 {
		t.Errorf("writes retrying after = %v", got)
	}
}

// A nil Writer retries with the defaults.
func TestNilWriter(t *testing.T) {
	var w *persist.Writer
	tries := 0
	err := w.Do(t.Context(), "nothing", func(context.Context) error {
		if tries++; tries < 2 {
			return storefault.Busy
		}
		return nil
	})
	if err != nil || tries != 2 {
		t.Errorf("%d tries, %v", tries, err)
	}
}
