package sqlite

import (
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Unavailable tells the failures of a database that cannot take the work
// right now from those of the work itself, by the primary result code (an
// extended code's low byte): locked by another process past the busy
// timeout (SQLITE_BUSY, SQLITE_LOCKED), a failing or full disk
// (SQLITE_IOERR and its extended codes, SQLITE_FULL), a file that cannot
// be opened (SQLITE_CANTOPEN), or a WAL locking race (SQLITE_PROTOCOL).
// An interrupted statement (the caller's cancellation) is not one.
func (dialect) Unavailable(err error) bool {
	e, ok := errors.AsType[*sqlite.Error](err)
	if !ok {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL,
		sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}
