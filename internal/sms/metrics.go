package sms

import "github.com/prometheus/client_golang/prometheus"

// Metrics are messaging's Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	messages *prometheus.CounterVec
	replies  *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_messages_total",
			Help: "Text messages recorded, by direction and the status they reached here: sent or failed (outbound), received (inbound).",
		}, []string{"direction", "status"}),
		replies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_message_replies_total",
			Help: "Inbound texts an agent owned, by how they were dealt with: answered, taken_over (by the inboundWebhookUrl), not_answered.",
		}, []string{"result"}),
	}
	if reg != nil {
		reg.MustRegister(m.messages, m.replies)
	}
	return m
}

func (m *Metrics) message(direction, status string) {
	if m != nil {
		m.messages.WithLabelValues(direction, status).Inc()
	}
}

func (m *Metrics) reply(result string) {
	if m != nil {
		m.replies.WithLabelValues(result).Inc()
	}
}
