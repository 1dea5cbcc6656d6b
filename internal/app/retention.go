package app

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-voice/parley/internal/retention"
	"github.com/parley-voice/parley/internal/store"
)

// newSweeper builds the retention sweeper: every --retention-interval, on
// one server at a time among those sharing the database, it deletes the
// recordings and empties the transcripts past their organization's
// retention.
func newSweeper(c Config, st store.Store, recordings retention.Recordings, reg prometheus.Registerer, log *slog.Logger) *retention.Sweeper {
	return retention.New(retention.Options{
		Store: st, Recordings: recordings, Node: nodeID(c), Interval: c.RetentionInterval,
		Logger: log, Metrics: retention.NewMetrics(reg),
	})
}

// retention runs the sweeper in the background; stopping cancels a sweep
// between (or inside) its batches and gives the lease up for another server.
func (s *serving) retention() component {
	l := background(func(ctx context.Context) { s.a.Retention.Run(ctx) })
	return component{name: "retention", start: l.start, stop: l.stop}
}
