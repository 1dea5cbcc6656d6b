package store

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// Calls persists calls, the queue they wait in and the leases of the nodes
// running them.
type Calls interface {
	CreateCall(ctx context.Context, c *model.Call) error
	GetCall(ctx context.Context, orgID, id string) (model.Call, error)
	// GetCallForUpdate reads a call to change it: in a write transaction
	// the row stays locked until the transaction ends (PostgreSQL: SELECT
	// ... FOR UPDATE; SQLite's single writer already excludes every other
	// writer), so no other writer can change it between this read and
	// UpdateCall.
	GetCallForUpdate(ctx context.Context, orgID, id string) (model.Call, error)
	// GetCalls returns the calls among ids that exist in the organization.
	GetCalls(ctx context.Context, orgID string, ids []string) ([]model.Call, error)
	ListCalls(ctx context.Context, orgID string, f CallFilter) ([]model.Call, int, error)
	// UpdateCall writes every field of c (found by OrgID and ID) but its
	// transcript, which only AppendTranscript changes. It overwrites the
	// whole row, so c must have been read in the same transaction with the
	// row held: GetCallForUpdate, or a listing that locks its rows
	// (OldestQueuedCalls, ExpiredLiveCalls).
	UpdateCall(ctx context.Context, c *model.Call) error
	// ChangeCall writes the fields in which after differs from before, the
	// call as read in the same transaction with its row held
	// (GetCallForUpdate); before must not share maps with after. Writing
	// only what changed spares the indexes on the columns that did not.
	ChangeCall(ctx context.Context, before, after *model.Call) error
	// ChangeCallFrom is ChangeCall without the locked read, for a writer
	// that knows the call as it last wrote it (before): in one statement it
	// writes the fields in which after differs from before if the stored
	// call's status is still before.Status, and returns the call as stored
	// then, its transcript included. ok is false, and nothing is written,
	// when no call has that id and that status (it moved on meanwhile, or
	// is not there): the caller reads it to learn which. before must not
	// share maps with after.
	ChangeCallFrom(ctx context.Context, before, after *model.Call) (stored model.Call, ok bool, err error)
	// SetPostCallWebhookStatus records how the post-call webhook went, and
	// writes nothing else (not even updatedAt: a delivery is bookkeeping,
	// not a change to the call).
	SetPostCallWebhookStatus(ctx context.Context, orgID, id, status string) error
	// AppendTranscript adds entries at the end of a call's transcript,
	// setting each entry's "seq" to its index, and sets updatedAt;
	// concurrent appends all land, in some order.
	AppendTranscript(ctx context.Context, orgID, id string, entries []map[string]any, at time.Time) error

	// LockOrg serialises admission decisions for one organization until the
	// transaction ends (PostgreSQL: a row lock on the organization; SQLite's
	// single writer already serialises every write transaction). It returns
	// the organization as locked.
	LockOrg(ctx context.Context, orgID string) (model.Organization, error)
	// CountLiveCalls says how many lines the organization's calls hold (a
	// live call holds one, two while it reserves one): one row, kept by the schema in the transaction of every status
	// change, not a count of the calls.
	CountLiveCalls(ctx context.Context, orgID string) (int, error)
	// CountLines says how many of the organization's calls hold a line and
	// whether any waits in the queue, in one query. After LockOrg in the
	// same write transaction it is exact until the transaction ends.
	CountLines(ctx context.Context, orgID string) (Lines, error)
	// ReleaseReservedLine gives up the line a live call reserves for its
	// far end (ReservesLine) and says whether it did: false when the call
	// holds no reservation (it ended, it never had one, or it was already
	// released). Only this clears ReservesLine; UpdateCall and ChangeCall
	// never write it.
	ReleaseReservedLine(ctx context.Context, orgID, callID string) (bool, error)
	// GetCallByLoopbackCaller finds the inbound leg that the call callerID
	// placed over the loopback trunk (ErrNotFound when none came yet).
	GetCallByLoopbackCaller(ctx context.Context, orgID, callerID string) (model.Call, error)
	// OldestQueuedCalls returns up to n of the organization's QUEUED calls,
	// oldest first (created_at, then id): the FIFO order of the queue.
	OldestQueuedCalls(ctx context.Context, orgID string, n int) ([]model.Call, error)
	// OrgsWithQueuedCalls lists the organizations that have QUEUED calls.
	OrgsWithQueuedCalls(ctx context.Context) ([]string, error)

	// RenewLeases extends until the lease of those of the calls ids (across
	// organizations) that are live and owned by owner, and returns how many
	// it renewed. A server names the calls it is running: a lease is
	// renewed only for work that is really going on.
	RenewLeases(ctx context.Context, owner string, ids []string, until time.Time) (int, error)
	// ExpiredLiveCalls returns live calls whose lease expired before now, or,
	// when owner is not empty, every live call owned by owner but the ones
	// in running (a node that restarts reclaims its own calls at once; a
	// node reclaims at any time a call it holds but no longer runs). Across
	// organizations, at most n.
	// A transaction that ends calls of several organizations must end them
	// one organization after another, in the order of their ids: ending a
	// call writes its organization's live count, a row two such
	// transactions would otherwise lock in opposite orders.
	ExpiredLiveCalls(ctx context.Context, owner string, running []string, now time.Time, n int) ([]model.Call, error)
	// PendingPostCallWebhooks returns ended calls that have a
	// PostCallWebhookURL and no PostCallWebhookStatus, oldest first, at most n.
	PendingPostCallWebhooks(ctx context.Context, n int) ([]model.Call, error)
}

// Lines is what an admission decision needs to know about an
// organization's calls besides its limit.
type Lines struct {
	Live   int  // lines held: one per live call, two while it reserves one
	Queued bool // some call waits in the queue
}

// Call list sort keys.
const (
	CallSortCreatedAt       = "createdAt"
	CallSortStartedAt       = "startedAt"
	CallSortEndedAt         = "endedAt"
	CallSortDurationSeconds = "durationSeconds"
	CallSortStatus          = "status"
	CallSortDirection       = "direction"
)

// CallFilter narrows and orders a call list. Empty values mean "any".
// Sorting by a nullable key puts nulls last in both directions; ties break by
// id in the sort direction.
type CallFilter struct {
	Page
	SortBy     string
	Statuses   []string
	Direction  string
	AgentID    string
	FolderID   string // a folder id or FolderNone; calls whose agent was deleted never match
	SIPTrunkID string
	CampaignID string
	FromNumber string
	ToNumber   string
	// CreatedFrom and CreatedTo bound createdAt, inclusive; zero means open.
	CreatedFrom time.Time
	CreatedTo   time.Time
	// Query is a case-insensitive substring of the from or to number, the
	// agent name or the summary (% and _ literal).
	Query string
	// Minimal leaves Transcript, Summary, Metrics and Variables unloaded.
	Minimal bool
}
