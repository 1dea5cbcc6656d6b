package sqlstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// timeLayout is how SQLite holds a time: fixed width, so text order is time
// order. PostgreSQL gets a time.Time; both are read back through timeDest.
const timeLayout = "2006-01-02T15:04:05.000Z"

// stamp is t as stored: UTC to the millisecond, and now when unset.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return model.Now()
	}
	return t.UTC().Truncate(time.Millisecond)
}

func (t *tx) time(v time.Time) any { return t.d.Time(stamp(v)) }

// nullTime writes an optional time; nil is NULL.
func (t *tx) nullTime(v *time.Time) any {
	if v == nil {
		return nil
	}
	return t.d.Time(stamp(*v))
}

// FormatTime is the SQLite text form of a time, for the sqlite dialect.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// timeDest scans a time column whichever way the driver hands it over.
type timeDest struct{ t *time.Time }

func (d timeDest) Scan(src any) error {
	t, err := parseTime(src)
	if err != nil {
		return err
	}
	*d.t = t
	return nil
}

// nullTimeDest scans a nullable time column.
type nullTimeDest struct{ t **time.Time }

func (d nullTimeDest) Scan(src any) error {
	if src == nil {
		*d.t = nil
		return nil
	}
	t, err := parseTime(src)
	if err != nil {
		return err
	}
	*d.t = &t
	return nil
}

func parseTime(src any) (time.Time, error) {
	switch v := src.(type) {
	case time.Time:
		return v.UTC(), nil
	case string:
		return parseTimeText(v)
	case []byte:
		return parseTimeText(string(v))
	default:
		return time.Time{}, fmt.Errorf("scan time: unexpected %T", src)
	}
}

func parseTimeText(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		if t, err2 := time.Parse(time.RFC3339Nano, s); err2 == nil {
			return t.UTC(), nil
		}
		return time.Time{}, fmt.Errorf("scan time %q: %w", s, err)
	}
	return t, nil
}

// secret writes sealed bytes; nil and empty are both NULL.
func secret(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// document writes v as a JSON document.
func document(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode document: %w", err)
	}
	return string(b), nil
}

// documentDest scans a JSON column into v.
type documentDest struct{ v any }

func (d documentDest) Scan(src any) error {
	var b []byte
	switch s := src.(type) {
	case []byte:
		b = s
	case string:
		b = []byte(s)
	case nil:
		return nil
	default:
		return fmt.Errorf("scan document: unexpected %T", src)
	}
	if err := json.Unmarshal(b, d.v); err != nil {
		return fmt.Errorf("decode document: %w", err)
	}
	return nil
}
