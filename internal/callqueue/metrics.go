package callqueue

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the call plane's Prometheus metrics.
type Metrics struct {
	placed    *prometheus.CounterVec
	ended     *prometheus.CounterVec
	live      prometheus.Gauge
	queueWait prometheus.Histogram
	lostByes  *prometheus.CounterVec
	// lostCancels counts the CANCELs of lost calls' ringing legs.
	lostCancels *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		placed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_calls_placed_total",
			Help: "Calls placed through the API, by result: admitted at once, queued, or rejected (429).",
		}, []string{"result"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_calls_ended_total",
			Help: "Calls ended, by final status and hang-up cause.",
		}, []string{"status", "cause"}),
		live: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parley_calls_live",
			Help: "Calls holding a line on this server.",
		}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parley_call_queue_wait_seconds",
			Help:    "Time from a call's creation to its admission.",
			Buckets: []float64{0.001, 0.01, 0.1, 0.5, 1, 5, 15, 30, 60, 300, 900, 3600},
		}),
		lostByes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_lost_call_byes_total",
			Help: "BYEs sent on the SIP legs of calls whose server was lost, by result: answered, or failed (no answer, 481, refused).",
		}, []string{"result"}),
		lostCancels: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_lost_call_cancels_total",
			Help: "CANCELs sent on the SIP legs still ringing of calls whose server was lost, by result: answered, or failed (no answer, 481, refused).",
		}, []string{"result"}),
	}
	if reg != nil {
		reg.MustRegister(m.placed, m.ended, m.live, m.queueWait, m.lostByes, m.lostCancels)
	}
	return m
}
