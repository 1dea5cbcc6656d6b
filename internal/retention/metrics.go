package retention

import "github.com/prometheus/client_golang/prometheus"

// Metrics count what sweeps delete; nil counts nothing.
type Metrics struct {
	deleted *prometheus.CounterVec
	errors  prometheus.Counter
	passes  prometheus.Counter
}

// NewMetrics registers the sweeper's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_retention_deleted_total",
			Help: "Calls' recordings deleted and transcripts emptied by retention sweeps on this server, by kind (recording, transcript).",
		}, []string{"kind"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_retention_errors_total",
			Help: "Retention sweeps on this server that stopped on an error (a recording the store would not delete, the database); the next sweep retries.",
		}),
		passes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_retention_sweeps_total",
			Help: "Retention sweeps this server ran (holding the lease; a server that finds another holding it runs none).",
		}),
	}
	m.deleted.WithLabelValues("recording")
	m.deleted.WithLabelValues("transcript")
	reg.MustRegister(m.deleted, m.errors, m.passes)
	return m
}

func (m *Metrics) addDeleted(kind string, n int) {
	if m != nil && n > 0 {
		m.deleted.WithLabelValues(kind).Add(float64(n))
	}
}

func (m *Metrics) addError() {
	if m != nil {
		m.errors.Inc()
	}
}

func (m *Metrics) addPass() {
	if m != nil {
		m.passes.Inc()
	}
}
