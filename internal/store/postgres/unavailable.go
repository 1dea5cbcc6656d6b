package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable tells the failures of a database that cannot take the work
// right now from those of the work itself: a connection that cannot be
// made or was lost, a server shutting down, starting up or out of
// connections, memory or disk, and the transaction conflicts that a retry
// resolves (serialization failure, deadlock). A caller's own cancellation
// or deadline is not one, except while connecting: a connection that
// cannot be made in time is a database that cannot be reached.
func (dialect) Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if e, ok := errors.AsType[*pgconn.PgError](err); ok {
		return unavailableState(e.Code)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err)
}

// unavailableState reports whether a SQLSTATE is one of a database that
// cannot take the work right now.
func unavailableState(code string) bool {
	switch code {
	case "57P01", // admin_shutdown: the server is stopping, or the backend was terminated
		"57P02", // crash_shutdown
		"57P03", // cannot_connect_now: starting up or in recovery
		"40001", // serialization_failure
		"40P01": // deadlock_detected
		return true
	}
	// Class 08, connection exceptions; class 53, insufficient resources
	// (53100 disk full, 53200 out of memory, 53300 too many connections).
	return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53")
}
