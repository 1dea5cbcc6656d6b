package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/recording/s3store"
)

const recordingsUsage = "Usage: parley recordings migrate --recordings-url s3://BUCKET/PREFIX [--data-dir DIR]\n"

// recordingsCommand runs `parley recordings migrate`: the recordings under
// the data dir move to the object store, each removed from disk once the
// store has it. Run again, it moves what is left (a failure, or a file
// written to within the last minute); it prints what it did and fails when
// a recording could not be moved.
func recordingsCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 || args[0] != "migrate" {
		fmt.Fprint(stderr, recordingsUsage)
		return errUsage
	}
	var c Config
	fs := newFlagSet("recordings migrate", stderr)
	storeFlags(fs, &c)
	recordingsFlags(fs, &c)
	if err := configure(fs, args[1:], getenv, &c); err != nil {
		return err
	}
	if c.RecordingsURL == "" {
		fmt.Fprint(stderr, "parley recordings migrate: --recordings-url (PARLEY_RECORDINGS_URL) names the store to move the recordings to\n"+recordingsUsage)
		return errUsage
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	objects, err := s3store.Open(ctx, c.RecordingsURL)
	if err != nil {
		return fmt.Errorf("--recordings-url: %w", err)
	}
	store := &recording.Store{Dir: filepath.Join(c.DataDir, "recordings"), Objects: objects}
	m, err := store.Migrate(ctx, func(key string, _ int64, err error) {
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", key, err)
		}
	})
	fmt.Fprintf(stdout, "moved %d recordings (%d bytes) from %s to %s; %d written to within the last minute left on disk; %d failed\n",
		m.Moved, m.Bytes, store.Dir, objects, m.Skipped, m.Failed)
	switch {
	case err != nil:
		return fmt.Errorf("recordings migrate: %w", err)
	case m.Failed > 0:
		return errors.New("recordings migrate: some recordings could not be moved (above); run it again to move them")
	}
	return nil
}
