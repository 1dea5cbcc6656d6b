package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// LeaseName is the store.Singletons lease a sweeping server holds.
const LeaseName = "retention"

// Recordings deletes calls' recordings (recording.Store: local disk, or
// the object store).
type Recordings interface {
	// Delete removes a call's recording; nil when there is none.
	Delete(ctx context.Context, orgID, callID string) error
}

// Options configure a Sweeper.
type Options struct {
	Store store.Store
	// Recordings deletes the recordings (nil: this server keeps none, and
	// only recordingUrl is cleared).
	Recordings Recordings
	// Node names this server; it owns the lease while it sweeps.
	Node string
	// Interval is the time between passes (default 1 h).
	Interval time.Duration
	// LeaseTTL is how long the lease outlives its last renewal (default
	// 2 min): a sweeping server that dies holds it up that long. A batch
	// must take less.
	LeaseTTL time.Duration
	// Batch is how many calls one transaction covers (default 200).
	Batch int
	// Now is the clock (default time.Now).
	Now     func() time.Time
	Logger  *slog.Logger
	Metrics *Metrics
}

// Sweeper runs retention passes; Run runs it.
type Sweeper struct{ o Options }

// New builds a Sweeper.
func New(o Options) *Sweeper {
	if o.Interval <= 0 {
		o.Interval = time.Hour
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 2 * time.Minute
	}
	if o.Batch <= 0 {
		o.Batch = 200
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Sweeper{o: o}
}

// Result is what one pass did.
type Result struct {
	// Ran is false when another server held the lease: nothing was done.
	Ran         bool
	Recordings  int // recordings deleted (recordingUrl cleared)
	Transcripts int // transcripts emptied
}

// errLeaseLost stops a pass whose server no longer holds the lease.
var errLeaseLost = errors.New("retention: the lease passed to another server")

// Run sweeps at once and then every Interval until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	tick := time.NewTicker(s.o.Interval)
	defer tick.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.o.Logger.Warn("retention sweep stopped; the next one retries", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Sweep runs one pass if this server gets the lease, and gives the lease
// up at its end, whatever happened, so another server may run the next.
func (s *Sweeper) Sweep(ctx context.Context) (Result, error) {
	var r Result
	ok, err := s.claim(ctx, nil)
	if err != nil || !ok {
		return r, err
	}
	r.Ran = true
	s.o.Metrics.addPass()
	defer s.release(ctx)
	err = s.sweep(ctx, &r)
	if err != nil {
		s.o.Metrics.addError()
	}
	if r.Recordings > 0 || r.Transcripts > 0 {
		s.o.Logger.Info("retention sweep", "recordings_deleted", r.Recordings, "transcripts_emptied", r.Transcripts)
	}
	return r, err
}

// claim takes or renews the lease, in tx when given (a batch's writes).
func (s *Sweeper) claim(ctx context.Context, tx store.Tx) (bool, error) {
	now := s.o.Now()
	if tx != nil {
		return tx.ClaimSingleton(ctx, LeaseName, s.o.Node, now, now.Add(s.o.LeaseTTL))
	}
	var ok bool
	err := s.o.Store.Update(ctx, func(tx store.Tx) (err error) {
		ok, err = tx.ClaimSingleton(ctx, LeaseName, s.o.Node, now, now.Add(s.o.LeaseTTL))
		return err
	})
	return ok, err
}

// release gives the lease up, even as ctx ends (a server stopping lets
// another take over at once rather than after LeaseTTL).
func (s *Sweeper) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := s.o.Store.Update(ctx, func(tx store.Tx) error { return tx.ReleaseSingleton(ctx, LeaseName, s.o.Node) })
	if err != nil {
		s.o.Logger.Warn("release the retention lease (it runs out by itself)", "err", err)
	}
}

func (s *Sweeper) sweep(ctx context.Context, r *Result) error {
	orgs, err := store.Read(ctx, s.o.Store, func(tx store.Tx) ([]model.Organization, error) { return tx.RetainingOrgs(ctx) })
	if err != nil {
		return err
	}
	var failed error
	for _, o := range orgs {
		for _, k := range []struct {
			kind string
			days *int
		}{{store.RetainRecording, o.RecordingRetentionDays}, {store.RetainTranscript, o.TranscriptRetentionDays}} {
			if k.days == nil {
				continue
			}
			err := s.sweepKind(ctx, o.ID, k.kind, s.o.Now().Add(-time.Duration(*k.days)*24*time.Hour), r)
			switch {
			case errors.Is(err, errLeaseLost), ctx.Err() != nil:
				return err
			case err != nil:
				// One organization's failure (its recordings' store, say)
				// does not hold the others up.
				failed = errors.Join(failed, fmt.Errorf("organization %s, %ss: %w", o.ID, k.kind, err))
			}
		}
	}
	return failed
}

// sweepKind goes through the organization's calls that ended before
// cutoff, one batch per transaction, until none is left.
func (s *Sweeper) sweepKind(ctx context.Context, orgID, kind string, cutoff time.Time, r *Result) error {
	for {
		calls, err := store.Read(ctx, s.o.Store, func(tx store.Tx) ([]store.EndedCall, error) {
			return tx.EndedCallsAfter(ctx, orgID, kind, cutoff, s.o.Batch)
		})
		if err != nil || len(calls) == 0 {
			return err
		}
		var done []store.EndedCall
		var deleteErr error
		if kind == store.RetainRecording {
			done, deleteErr = s.deleteRecordings(ctx, orgID, calls)
		} else {
			done = calls
		}
		if len(done) > 0 {
			if err := s.write(ctx, orgID, kind, done, r); err != nil {
				return err
			}
		}
		if deleteErr != nil || len(calls) < s.o.Batch {
			return deleteErr
		}
	}
}

// deleteRecordings deletes the recordings of calls, in order, and returns
// the calls done with: those up to the first whose deletion failed.
func (s *Sweeper) deleteRecordings(ctx context.Context, orgID string, calls []store.EndedCall) ([]store.EndedCall, error) {
	for i, c := range calls {
		if !c.HasRecording || s.o.Recordings == nil {
			continue
		}
		if err := s.o.Recordings.Delete(ctx, orgID, c.ID); err != nil {
			return calls[:i], fmt.Errorf("delete the recording of call %s: %w", c.ID, err)
		}
	}
	return calls, nil
}

// write clears what done held and moves the cursor past it, in one
// transaction that renews the lease first: without it nothing is written.
func (s *Sweeper) write(ctx context.Context, orgID, kind string, done []store.EndedCall, r *Result) error {
	ids := make([]string, len(done))
	for i, c := range done {
		ids[i] = c.ID
	}
	last := done[len(done)-1]
	var n int
	err := s.o.Store.Update(ctx, func(tx store.Tx) error {
		mine, err := s.claim(ctx, tx)
		if err != nil {
			return err
		}
		if !mine {
			return errLeaseLost
		}
		if kind == store.RetainRecording {
			n, err = tx.ClearRecordingURLs(ctx, orgID, ids)
		} else {
			n, err = tx.EmptyTranscripts(ctx, orgID, ids)
		}
		if err != nil {
			return err
		}
		return tx.AdvanceRetentionCursor(ctx, orgID, kind, last.EndedAt, last.ID)
	})
	if err != nil {
		return err
	}
	if kind == store.RetainRecording {
		r.Recordings += n
	} else {
		r.Transcripts += n
	}
	s.o.Metrics.addDeleted(kind, n)
	return nil
}
