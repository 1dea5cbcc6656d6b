package campaign

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/enginetest"
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

// A campaign held back by its pace is looked at again when the pace
// allows its next dial, so it dials at its rate: looked at once a second,
// 45 a minute dialed 30 (the part of each interval already passed was
// lost) and 250 a minute 240.
func TestPaceKeepsItsRate(t *testing.T) {
	for _, perMinute := range []int{45, 90, 250} {
		t.Run(fmt.Sprint(perMinute), func(t *testing.T) {
			r := newRig(t, enginetest.Engines(t, "campaign")["sqlite"](t), 1000)
			c := r.campaign(numbers(300, "+1415"), func(c *model.Campaign) { c.Config.CallsPerMinute = perMinute })
			start := r.clock.Now()
			end := start.Add(time.Minute)
			// Run's schedule: the next tick, or sooner when the pace allows.
			for now := start; now.Before(end); now = r.clock.Now() {
				next := now.Add(time.Second)
				if again := r.d.pass(r.ctx); !again.IsZero() && again.Before(next) {
					next = again
					if !next.After(now) {
						next = now.Add(time.Millisecond)
					}
				}
				r.clock.Set(next)
			}
			if n := len(r.campaignCallsAll(c.ID)); n < perMinute || n > perMinute+perMinute/60+1 {
				t.Errorf("%d dials in a minute at %d a minute", n, perMinute)
			}
		})
	}
}
