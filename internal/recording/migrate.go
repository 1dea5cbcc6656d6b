package recording

import (
	"context"
	"errors"
	"os"
	"time"
)

// Migrated counts what Migrate did.
type Migrated struct {
	Moved   int   // recordings now in the store and no longer on disk
	Bytes   int64 // their size
	Skipped int   // written to within the last minute: perhaps a call's, still going on
	Failed  int   // left on disk: the store refused them
}

// ErrRecent tells Migrate's report of a recording written to within the
// last minute: perhaps a live call's, so it is left for the next run.
var ErrRecent = errors.New("written to within the last minute (a live call's?): left for the next run")

// migrateQuiet is how long a file must have gone unwritten to be moved: a
// live call's recording is written every half second.
const migrateQuiet = time.Minute

// Migrate moves the recordings on disk to Objects, each removed from disk
// once the store has it: run again, it moves only what is left, and after a
// failure it takes up where it stopped. report, when set, is told of each
// recording as it is done with (err nil: moved). It fails only when the
// recordings cannot be listed or ctx ends.
func (s *Store) Migrate(ctx context.Context, report func(key string, size int64, err error)) (Migrated, error) {
	var m Migrated
	if s.Objects == nil {
		return m, errors.New("recording: no object store to migrate to")
	}
	keys, err := s.local()
	if err != nil {
		return m, err
	}
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		st, err := os.Stat(s.keyPath(k))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err == nil && time.Since(st.ModTime()) < migrateQuiet {
			m.Skipped++
			if report != nil {
				report(k, st.Size(), ErrRecent)
			}
			continue
		}
		if err == nil {
			err = s.upload(ctx, k)
		}
		if report != nil {
			var size int64
			if st != nil {
				size = st.Size()
			}
			report(k, size, err)
		}
		if err != nil {
			m.Failed++
			continue
		}
		m.Moved++
		m.Bytes += st.Size()
	}
	return m, nil
}
