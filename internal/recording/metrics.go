package recording

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the uploads' Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	waiting  prometheus.Gauge
	uploads  prometheus.Counter
	failures prometheus.Counter
}

// NewMetrics registers the metrics with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parley_recording_uploads_pending",
			Help: "Finished recordings on this server's disk waiting for the object store (--recordings-url).",
		}),
		uploads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_recording_uploads_total",
			Help: "Recordings moved to the object store.",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_recording_upload_failures_total",
			Help: "Failed upload attempts (each is retried, with backoff, until it lands).",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.waiting, m.uploads, m.failures)
	}
	return m
}

func (m *Metrics) pending(n int) {
	if m != nil {
		m.waiting.Set(float64(n))
	}
}

func (m *Metrics) uploaded() {
	if m != nil {
		m.uploads.Inc()
	}
}

func (m *Metrics) failed() {
	if m != nil {
		m.failures.Inc()
	}
}
