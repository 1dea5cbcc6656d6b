package persist

import "github.com/prometheus/client_golang/prometheus"

// Metrics count the writes that had to be retried.
type Metrics struct {
	retries   *prometheus.CounterVec
	pending   *prometheus.GaugeVec
	abandoned *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_store_write_retries_total",
			Help: "Writes the database did not take and that were tried again, by write (call state, transcript, webhook status, ...).",
		}, []string{"write"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "parley_store_writes_retrying",
			Help: "Writes being retried now, by write: more than zero while the database is unreachable.",
		}, []string{"write"}),
		abandoned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_store_writes_abandoned_total",
			Help: "Writes given up after their retry budget, by write; their records go to the reaper or sweep.",
		}, []string{"write"}),
	}
	if reg != nil {
		reg.MustRegister(m.retries, m.pending, m.abandoned)
	}
	return m
}

func (m *Metrics) retry(what string) {
	if m != nil {
		m.retries.WithLabelValues(what).Inc()
	}
}

func (m *Metrics) retrying(what string, d float64) {
	if m != nil {
		m.pending.WithLabelValues(what).Add(d)
	}
}

func (m *Metrics) abandon(what string) {
	if m != nil {
		m.abandoned.WithLabelValues(what).Inc()
	}
}
