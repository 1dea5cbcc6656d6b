package store

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// Retention kinds: what a retention period deletes from an ended call.
const (
	RetainRecording  = "recording"
	RetainTranscript = "transcript"
)

// Retention is what the retention sweeper reads and writes (conventions.md,
// "Serving on several machines"): per organization and kind, a cursor over
// its ended calls in (endedAt, id) order, behind which the sweeper is done.
// The sweeper reads a batch after the cursor, deletes what expired, and in
// one short transaction writes the calls and moves the cursor past them.
type Retention interface {
	// RetainingOrgs lists the organizations that have a retention period
	// set (either kind), in id order.
	RetainingOrgs(ctx context.Context) ([]model.Organization, error)
	// EndedCallsAfter returns up to n of the organization's calls that
	// ended before before and after the kind's cursor, in (endedAt, id)
	// order. Live and queued calls have not ended and are never returned.
	EndedCallsAfter(ctx context.Context, orgID, kind string, before time.Time, n int) ([]EndedCall, error)
	// ClearRecordingURLs sets the recordingUrl of the organization's calls
	// ids to null and says how many had one. updatedAt is left alone:
	// retention is bookkeeping, not a change anyone made to the call.
	ClearRecordingURLs(ctx context.Context, orgID string, ids []string) (int, error)
	// EmptyTranscripts makes the transcript of the organization's calls
	// ids empty ([]) and says how many were not; updatedAt is left alone.
	EmptyTranscripts(ctx context.Context, orgID string, ids []string) (int, error)
	// AdvanceRetentionCursor moves the organization's cursor of kind to
	// the call id that ended at endedAt (it only ever moves forward).
	AdvanceRetentionCursor(ctx context.Context, orgID, kind string, endedAt time.Time, id string) error
	// RecordingOrg is the organization of call id while the call has a
	// recording (its recordingUrl is set); ErrNotFound when there is no
	// such call, or its recording was never made or was deleted. It is for
	// signed recording links, which name only the call.
	RecordingOrg(ctx context.Context, id string) (string, error)
}

// EndedCall is a call as the retention sweeper sees it.
type EndedCall struct {
	ID           string
	EndedAt      time.Time
	HasRecording bool // its recordingUrl is set
}

// Singletons are leases on work that one server at a time does among those
// sharing a database (the retention sweeper). A holder renews its lease
// before it runs out; a lease that ran out is anyone's.
type Singletons interface {
	// ClaimSingleton takes or renews owner's lease on name until until,
	// when nobody holds it, owner does, or its holder's lease ended before
	// now; false when another holds it.
	ClaimSingleton(ctx context.Context, name, owner string, now, until time.Time) (bool, error)
	// ReleaseSingleton gives owner's lease on name up; not holding it is
	// not an error.
	ReleaseSingleton(ctx context.Context, name, owner string) error
}
