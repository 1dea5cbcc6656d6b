package webhook

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the delivery metrics of a Sender.
type metrics struct {
	deliveries *prometheus.CounterVec
	duration   *prometheus.HistogramVec
}

// newMetrics registers the metrics with reg (nil: not registered). Senders
// sharing a registry share the metrics.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_webhook_deliveries_total",
			Help: "Webhook deliveries attempted, by event and result (sent or failed).",
		}, []string{"event", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "parley_webhook_delivery_duration_seconds",
			Help:    "Time from sending a webhook to its answer (or failure), by event.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10},
		}, []string{"event"}),
	}
	if reg != nil {
		m.deliveries = register(reg, m.deliveries)
		m.duration = register(reg, m.duration)
	}
	return m
}

// register registers c with reg, or returns the equal collector already
// registered there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(err)
}

func (m *metrics) observe(event, result string, d time.Duration) {
	m.deliveries.WithLabelValues(event, result).Inc()
	m.duration.WithLabelValues(event).Observe(d.Seconds())
}
