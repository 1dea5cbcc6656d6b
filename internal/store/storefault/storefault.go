// Package storefault wraps a store.Store and makes chosen writes fail, as a
// database that goes away or refuses writes does: an outage (every
// transaction refused until it ends), a statement refused at one step of a
// call's life (busy, I/O error, disk full), or a commit whose answer is lost
// (the write landed; the caller is told it failed). The call plane's fault
// tests use it; the engines' own errors are classified by their dialects.
package storefault

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Errors as the engines report them once classified (store.ErrUnavailable,
// with the driver's words).
var (
	Busy     = fmt.Errorf("change call: %w: database is locked (5) (SQLITE_BUSY)", store.ErrUnavailable)
	IOError  = fmt.Errorf("change call: %w: disk I/O error (10) (SQLITE_IOERR)", store.ErrUnavailable)
	DiskFull = fmt.Errorf("change call: %w: database or disk is full (13) (SQLITE_FULL)", store.ErrUnavailable)
	Refused  = fmt.Errorf("begin transaction: %w: failed to connect to `user=parley database=parley`: dial tcp 127.0.0.1:5432: connect: connection refused", store.ErrUnavailable)
)

// Rule makes matching calls of a Tx method fail.
type Rule struct {
	// Op is the Tx method: CreateCall, ChangeCall (ChangeCallFrom too), UpdateCall,
	// AppendTranscript, SetPostCallWebhookStatus, PutCallDialog,
	// DeleteCallDialog, RenewLeases, ExpiredLiveCalls, GetCallForUpdate,
	// UpdateOrg; and beyond calls (background.go) UpdateTestAttempt,
	// UpdateTestRun, SetTestRunWebhookStatus, RenewTestRunLeases,
	// SetSIPRegistrationStatus, ReleaseSIPRegistration, UpdateMessage,
	// ReplaceKnowledgeChunks, UpdateKnowledgeSource.
	Op string
	// To is the status the record is written with ("" any): a call's
	// (ChangeCall, UpdateCall, CreateCall), an attempt's or a run's, a
	// registration's state, a message's.
	To string
	// Times is how many matching calls fail; 0 every one.
	Times int
	Err   error
	// LoseAck lets the write run and commit, and then answers Err, as a
	// connection lost between the commit and its answer does.
	LoseAck bool

	hits int
}

// Store is a store.Store whose transactions fail as its rules say.
type Store struct {
	store.Store

	mu    sync.Mutex
	down  error
	rules []*Rule
	fails map[string]int // by op: statements refused, transactions (op "") refused while down
	calls map[string]int // by op: statements asked for
}

// Wrap returns s with no faults yet.
func Wrap(s store.Store) *Store {
	return &Store{Store: s, fails: map[string]int{}, calls: map[string]int{}}
}

// Down makes every transaction fail with err until Up.
func (s *Store) Down(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = err
}

// Up ends the outage Down began.
func (s *Store) Up() { s.Down(nil) }

// Inject adds r.
func (s *Store) Inject(r Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, &r)
}

// Clear removes every rule.
func (s *Store) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = nil
}

// Fails says how many calls of op failed by a rule ("" transactions
// refused while down).
func (s *Store) Fails(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fails[op]
}

// Calls says how many times op was asked for, refused or not.
func (s *Store) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

func (s *Store) outage() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down != nil {
		s.fails[""]++
	}
	return s.down
}

// Update runs fn unless the store is down; a statement a rule refuses
// fails fn (and so rolls the transaction back), and a lost answer fails
// Update after the commit.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := s.outage(); err != nil {
		return err
	}
	var lost error
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		lost = nil
		return fn(&faultTx{Tx: tx, s: s, lost: &lost})
	})
	if err == nil && lost != nil {
		return lost
	}
	return err
}

// View runs fn unless the store is down.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := s.outage(); err != nil {
		return err
	}
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(&faultTx{Tx: tx, s: s}) })
}

// Ping fails while the store is down.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.outage(); err != nil {
		return err
	}
	return s.Store.Ping(ctx)
}

// fault is the rule for a call of op writing status to ("" none): its
// error, or for a lost answer nil now and the error for after the commit.
func (s *Store) fault(op, to string) (now, afterCommit error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	for _, r := range s.rules {
		if r.Op != op || (r.To != "" && r.To != to) || (r.Times > 0 && r.hits >= r.Times) {
			continue
		}
		r.hits++
		s.fails[op]++
		if r.LoseAck {
			return nil, r.Err
		}
		return r.Err, nil
	}
	return nil, nil
}

// faultTx is a Tx whose writes the store's rules may refuse.
type faultTx struct {
	store.Tx
	s    *Store
	lost *error // nil in a View
}

// check applies the rules to a call of op writing status to.
func (t *faultTx) check(op, to string) error {
	now, after := t.s.fault(op, to)
	if after != nil && t.lost != nil {
		*t.lost = after
	}
	return now
}

func (t *faultTx) CreateCall(ctx context.Context, c *model.Call) error {
	if err := t.check("CreateCall", c.Status); err != nil {
		return err
	}
	return t.Tx.CreateCall(ctx, c)
}

func (t *faultTx) UpdateCall(ctx context.Context, c *model.Call) error {
	if err := t.check("UpdateCall", c.Status); err != nil {
		return err
	}
	return t.Tx.UpdateCall(ctx, c)
}

func (t *faultTx) ChangeCall(ctx context.Context, before, after *model.Call) error {
	if err := t.check("ChangeCall", after.Status); err != nil {
		return err
	}
	return t.Tx.ChangeCall(ctx, before, after)
}

// ChangeCallFrom is the same write as ChangeCall: rules for ChangeCall
// strike it too.
func (t *faultTx) ChangeCallFrom(ctx context.Context, before, after *model.Call) (model.Call, bool, error) {
	if err := t.check("ChangeCall", after.Status); err != nil {
		return model.Call{}, false, err
	}
	return t.Tx.ChangeCallFrom(ctx, before, after)
}

func (t *faultTx) GetCallForUpdate(ctx context.Context, orgID, id string) (model.Call, error) {
	if err := t.check("GetCallForUpdate", ""); err != nil {
		return model.Call{}, err
	}
	return t.Tx.GetCallForUpdate(ctx, orgID, id)
}

func (t *faultTx) SetPostCallWebhookStatus(ctx context.Context, orgID, id, status string) error {
	if err := t.check("SetPostCallWebhookStatus", ""); err != nil {
		return err
	}
	return t.Tx.SetPostCallWebhookStatus(ctx, orgID, id, status)
}

func (t *faultTx) AppendTranscript(ctx context.Context, orgID, id string, entries []map[string]any, at time.Time) error {
	if err := t.check("AppendTranscript", ""); err != nil {
		return err
	}
	return t.Tx.AppendTranscript(ctx, orgID, id, entries, at)
}

func (t *faultTx) PutCallDialog(ctx context.Context, d *model.CallDialog) error {
	if err := t.check("PutCallDialog", ""); err != nil {
		return err
	}
	return t.Tx.PutCallDialog(ctx, d)
}

func (t *faultTx) DeleteCallDialog(ctx context.Context, orgID, callID string) error {
	if err := t.check("DeleteCallDialog", ""); err != nil {
		return err
	}
	return t.Tx.DeleteCallDialog(ctx, orgID, callID)
}

func (t *faultTx) RenewLeases(ctx context.Context, owner string, ids []string, until time.Time) (int, error) {
	if err := t.check("RenewLeases", ""); err != nil {
		return 0, err
	}
	return t.Tx.RenewLeases(ctx, owner, ids, until)
}

func (t *faultTx) ExpiredLiveCalls(ctx context.Context, owner string, running []string, now time.Time, n int) ([]model.Call, error) {
	if err := t.check("ExpiredLiveCalls", ""); err != nil {
		return nil, err
	}
	return t.Tx.ExpiredLiveCalls(ctx, owner, running, now, n)
}

var (
	_ store.Store = (*Store)(nil)
	_ store.Tx    = (*faultTx)(nil)
)

func (t *faultTx) UpdateOrg(ctx context.Context, o *model.Organization) error {
	if err := t.check("UpdateOrg", ""); err != nil {
		return err
	}
	return t.Tx.UpdateOrg(ctx, o)
}
