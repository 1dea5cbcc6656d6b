package store

import (
	"context"
	"time"
)

// TrunkPacing keeps, per trunk, the theoretical time of its next INVITE:
// the outbound calls-per-second limit carriers enforce, shared by every
// server on the database (telephony paces with it). trunk is a key naming
// a stored trunk or the default trunk, not a reference.
type TrunkPacing interface {
	// LockTrunkPace returns trunk's theoretical next INVITE time (the
	// epoch when it was never paced) and holds its row until the
	// transaction ends, so one server at a time moves it on.
	LockTrunkPace(ctx context.Context, trunk string) (time.Time, error)
	// SetTrunkPace writes trunk's theoretical next INVITE time; the row
	// must have been locked by LockTrunkPace in this transaction.
	SetTrunkPace(ctx context.Context, trunk string, next time.Time) error
}
