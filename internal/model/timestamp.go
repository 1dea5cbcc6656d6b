package model

import "time"

// Timestamp is a time as Parley answers it: UTC, RFC 3339, milliseconds
// ("2026-11-23T09:29:08.765Z").
type Timestamp time.Time

// TimestampLayout is the layout of a Timestamp.
const TimestampLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes the time in TimestampLayout.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(TimestampLayout) + `"`), nil
}

// TimestampPtr is t as a *Timestamp, nil for nil.
func TimestampPtr(t *time.Time) *Timestamp {
	if t == nil {
		return nil
	}
	v := Timestamp(*t)
	return &v
}
