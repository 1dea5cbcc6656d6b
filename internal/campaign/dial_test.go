package campaign

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// A pass dials what the pace allows and stops there, without placing a
// call the gate would refuse for the pace (a call created and undone in
// every pass, and the one a pass at the same instant would make again).
func TestPassTriesNoDialThePaceRefuses(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 100)
		c := r.campaign(numbers(40, "+1415558"), func(c *model.Campaign) { c.Config.CallsPerMinute = 600 })
		paced := func() float64 {
			var m dto.Metric
			r.must(r.d.Metrics.dials.WithLabelValues("paced").Write(&m))
			return m.GetCounter().GetValue()
		}
		r.d.pass(r.ctx)
		if n := len(r.campaignCalls(c.ID)); n != 10 {
			t.Fatalf("%d dials in the first instant at 600/min, want 10", n)
		}
		r.d.pass(r.ctx)
		if n := len(r.campaignCalls(c.ID)); n != 10 {
			t.Fatalf("%d dials after a second pass at the same instant, want 10", n)
		}
		r.clock.Add(time.Second)
		r.d.pass(r.ctx)
		if n := len(r.campaignCalls(c.ID)); n != 20 {
			t.Fatalf("%d dials a second later, want 20", n)
		}
		if p := paced(); p != 0 {
			t.Errorf("the gate refused %v dials for the pace: the pass tried them", p)
		}
	})
}
