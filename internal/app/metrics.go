package app

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlstore"
	"github.com/parley-voice/parley/internal/telephony/registration"
)

// newRegistry is /metrics' registry with the process's and the store's
// metrics; the parts register their own.
func newRegistry(st store.Store) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if rt, ok := st.(interface{ RoundTrips() uint64 }); ok {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "parley_store_round_trips_total",
			Help: "Statements sent to the database, transaction control included (a network round trip each on PostgreSQL).",
		}, func() float64 { return float64(rt.RoundTrips()) }))
	}
	if ot, ok := st.(interface{ ObserveTransactions(sqlstore.TxObserver) }); ok {
		txTime := prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "parley_store_transaction_seconds",
			Help:    "Database transactions by kind (update: read-write, on SQLite one group commit; view: read-only), from BEGIN to COMMIT or ROLLBACK, waiting for a connection included.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1},
		}, []string{"kind"})
		reg.MustRegister(txTime)
		byKind := map[string]prometheus.Observer{"update": txTime.WithLabelValues("update"), "view": txTime.WithLabelValues("view")}
		ot.ObserveTransactions(func(kind string, d time.Duration) { byKind[kind].Observe(d.Seconds()) })
	}
	return reg
}

// registerSIPMetrics registers the SIP side's gauges and counters.
func registerSIPMetrics(reg prometheus.Registerer, ua *sipua.UA, keeper *registration.Keeper) {
	for _, state := range []string{model.RegistrationRegistering, model.RegistrationRegistered, model.RegistrationFailed} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "parley_sip_registrations", ConstLabels: prometheus.Labels{"state": state},
			Help: "Trunk registrations this server keeps, by state.",
		}, func() float64 { return float64(keeper.States()[state]) }))
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "parley_sip_legs", Help: "SIP call legs up or being set up on this server.",
	}, func() float64 { return float64(ua.Active()) }))
	for _, result := range []string{"admitted", "refused"} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "parley_sip_admission_total", ConstLabels: prometheus.Labels{"result": result},
			Help: "SIP requests that start something (INVITE outside a dialog, REGISTER, OPTIONS) admitted or refused 503 by the per-source limit (--sip-invite-rate).",
		}, func() float64 {
			admitted, refused := ua.AdmissionCounts()
			if result == "refused" {
				return float64(refused)
			}
			return float64(admitted)
		}))
	}
	for _, result := range []string{"hung_up", "failed", "ignored"} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "parley_sip_stray_answers_total", ConstLabels: prometheus.Labels{"result": result},
			Help: "2xx answers to INVITEs no call of this server waits for (sent before a restart): hung up (ACK, then BYE answered), failed (the BYE was not answered) or ignored (a live leg's, not addressed to this server, or too many at once).",
		}, func() float64 {
			hungUp, failed, ignored := ua.StrayAnswers()
			return float64(map[string]uint64{"hung_up": hungUp, "failed": failed, "ignored": ignored}[result])
		}))
	}
}

// registerCapacity registers parley_capacity_free: what this server can
// still take, for a proxy or load balancer that weighs servers. Lines are
// calls (a call holds one line here whatever its legs); SIP dialogs are
// legs (a call over the loopback trunk holds two). Both count down from
// --sip-max-dialogs, where new INVITEs get 503, and are 0 while draining.
func registerCapacity(reg prometheus.Registerer, ua *sipua.UA, calls interface{ Live() int }, maxDialogs int) {
	free := func(used int) float64 {
		if ua.Draining() {
			return 0
		}
		return float64(max(0, maxDialogs-used))
	}
	for resource, used := range map[string]func() int{"lines": calls.Live, "sip_dialogs": ua.Active} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "parley_capacity_free", ConstLabels: prometheus.Labels{"resource": resource},
			Help: "What this server can still take (0 while draining): lines, calls it can start (--sip-max-dialogs minus its live calls), and sip_dialogs, legs (--sip-max-dialogs minus its SIP legs).",
		}, func() float64 { return free(used()) }))
	}
}
