package app

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/recording/s3store"
	"github.com/parley-voice/parley/internal/secret"
)

// uploadGrace is how long a stopping server waits for its last calls'
// recordings to reach the object store; what is left uploads at its next
// start.
const uploadGrace = 10 * time.Second

// recordingsFlags are the flags that say where recordings are kept.
func recordingsFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.RecordingsURL, "recordings-url", "", "s3://BUCKET/PREFIX: recordings in an S3-compatible object store any server reads (AWS_* variables; AWS_ENDPOINT_URL for other stores); empty: under the data dir")
}

// checkRecordingsURL tells a --recordings-url that is not s3://BUCKET/PREFIX.
func checkRecordingsURL(raw string) error {
	if raw == "" {
		return nil
	}
	if _, _, err := s3store.ParseURL(raw); err != nil {
		return fmt.Errorf("--recordings-url: %w", err)
	}
	return nil
}

// newRecordings is the recording store: under the data dir, and moved to
// the object store --recordings-url names when it is set.
func newRecordings(ctx context.Context, c Config, base string, box *secret.Box, reg prometheus.Registerer, log *slog.Logger) (*recording.Store, error) {
	s := &recording.Store{
		Dir: filepath.Join(c.DataDir, "recordings"), PublicURL: base, Key: box.Derive("recording-links"),
		Logger: log,
	}
	if c.RecordingsURL == "" {
		return s, nil
	}
	objects, err := s3store.Open(ctx, c.RecordingsURL)
	if err != nil {
		return nil, fmt.Errorf("--recordings-url: %w", err)
	}
	s.Objects, s.Metrics = objects, recording.NewMetrics(reg)
	return s, nil
}

// recordings moves finished recordings to the object store. It starts
// before calls and so stops after them: the last calls' recordings get
// uploadGrace to land before the server exits.
func (s *serving) recordings() component {
	store := s.a.Recordings
	if store == nil || store.Objects == nil {
		return component{}
	}
	l := background(store.RunUploads)
	return component{name: "recordings", start: l.start, stop: func(ctx context.Context) error {
		wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), uploadGrace)
		defer cancel()
		if store.WaitUploads(wait) != nil {
			s.log.Warn("recordings left on disk: they upload at the next start", "pending", store.Pending(), "store", store.Objects.String())
		}
		return l.stop(ctx)
	}}
}
