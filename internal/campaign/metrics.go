package campaign

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the campaigns' Prometheus metrics.
type Metrics struct {
	dials    *prometheus.CounterVec
	outcomes *prometheus.CounterVec
	finished *prometheus.CounterVec
	parked   prometheus.Counter
	running  prometheus.Gauge
	pass     prometheus.Histogram
}

// NewMetrics registers the metrics with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		dials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_campaign_dials_total",
			Help: "Campaign dials tried, by result: placed, suppressed (the number was suppressed after it was added), moved (another server dialed it), or refused for now (no_line, at_concurrency, paced, not_running).",
		}, []string{"result"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_campaign_outcomes_total",
			Help: "Campaign recipients settled, by the status they moved to (completed, failed, retry, expired) and the call's retry outcome (NO_ANSWER, BUSY, VOICEMAIL, FAILED; empty for a completed call or an expiry).",
		}, []string{"status", "outcome"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_campaigns_finished_total",
			Help: "Campaigns finished by this server's dispatcher, by status.",
		}, []string{"status"}),
		parked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parley_campaign_recipients_parked_total",
			Help: "Due recipients put off to the opening of their calling window.",
		}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parley_campaigns_running",
			Help: "Running campaigns, as the dispatcher last listed them.",
		}),
		pass: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parley_campaign_dispatch_pass_seconds",
			Help:    "Time one dispatcher pass over the running campaigns took.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5},
		}),
	}
	if reg != nil {
		reg.MustRegister(m.dials, m.outcomes, m.finished, m.parked, m.running, m.pass)
	}
	return m
}
