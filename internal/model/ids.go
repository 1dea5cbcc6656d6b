package model

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// NewID returns a new UUIDv7 string: unique, and sorting by creation time.
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// NewPrefixedID returns an opaque string id such as "mc_0193...", used where
// the interface says ids are plain strings rather than UUIDs.
func NewPrefixedID(prefix string) string {
	return prefix + "_" + strings.ReplaceAll(NewID(), "-", "")
}

// IsUUID reports whether s is a UUID in its canonical 36-character form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// Now is the current time as Parley stores it: UTC, millisecond precision.
func Now() time.Time {
	return time.Now().UTC().Truncate(time.Millisecond)
}
