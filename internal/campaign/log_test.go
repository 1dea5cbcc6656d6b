package campaign

import (
	"slices"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/logtest"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// TestCampaignLogLines: a campaign's life is in the log, one line a step
// with its ids and counts: started, paused, resumed and canceled through
// the service, completed by the dispatcher; a pause the dispatcher makes
// (its agent disabled) is a WARN line with the reason. On both engines.
func TestCampaignLogLines(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		var log logtest.Log
		r := newRig(t, st, 10)
		r.d.Logger = log.Logger()
		s := &Service{Store: st, Logger: log.Logger()}
		events := func(c model.Campaign) ([]string, []map[string]any) {
			lines := log.Where(t, "campaign_id", c.ID)
			return logtest.Events(lines), lines
		}
		paused := func(c *model.Campaign) { c.Status = model.CampaignPaused }

		// Started from a draft, paused, resumed, and run to its end.
		c := r.campaign(numbers(3, "+1415558"), paused)
		r.must(r.st.Update(r.ctx, func(tx store.Tx) error {
			cur, err := tx.GetCampaignForUpdate(r.ctx, r.org.ID, c.ID)
			if err != nil {
				return err
			}
			cur.Status = model.CampaignDraft
			return tx.UpdateCampaign(r.ctx, &cur)
		}))
		for _, move := range []func() (model.Campaign, error){
			func() (model.Campaign, error) { return s.Start(r.ctx, r.org.ID, c.ID) },
			func() (model.Campaign, error) { return s.Pause(r.ctx, r.org.ID, c.ID) },
			func() (model.Campaign, error) { return s.Resume(r.ctx, r.org.ID, c.ID) },
		} {
			if _, err := move(); err != nil {
				t.Fatal(err)
			}
		}
		for round := 0; round < 20 && r.get(c.ID).Status == model.CampaignRunning; round++ {
			r.d.pass(r.ctx)
			r.settled(0)
			r.clock.Add(10 * time.Second)
		}
		got, lines := events(c)
		want := []string{"INFO campaign started", "INFO campaign paused", "INFO campaign resumed", "INFO campaign completed"}
		if !slices.Equal(got, want) {
			t.Fatalf("lines %q, want %q", got, want)
		}
		for i, status := range []string{model.CampaignRunning, model.CampaignPaused, model.CampaignRunning, model.CampaignCompleted} {
			m := lines[i]
			if m["status"] != status || m["org_id"] != r.org.ID || m["agent_id"] != r.agent.ID || m["total"] != 3.0 {
				t.Errorf("%s: %v", m["msg"], m)
			}
		}
		if end := lines[3]; end["completed"] != 3.0 || end["pending"] != 0.0 || end["failed"] != 0.0 {
			t.Errorf("completed line's counts: %v", end)
		}

		// Canceled while paused: its recipients are counted canceled.
		c2 := r.campaign(numbers(2, "+1415559"), paused)
		if _, err := s.Cancel(r.ctx, r.org.ID, c2.ID); err != nil {
			t.Fatal(err)
		}
		if got, lines := events(c2); !slices.Equal(got, []string{"INFO campaign canceled"}) || lines[0]["canceled"] != 2.0 || lines[0]["status"] != model.CampaignCanceled {
			t.Errorf("canceled campaign: %v", lines)
		}

		// A refused move writes nothing, and no line.
		if _, err := s.Pause(r.ctx, r.org.ID, c2.ID); err == nil {
			t.Fatal("a canceled campaign was paused")
		}
		if got, _ := events(c2); len(got) != 1 {
			t.Errorf("a refused pause was logged: %q", got)
		}

		// Its agent disabled, the dispatcher pauses it: WARN, with why.
		c3 := r.campaign(numbers(2, "+1415557"), nil)
		r.agent.Status = model.AgentDisabled
		r.must(r.st.Update(r.ctx, func(tx store.Tx) error { return tx.UpdateAgent(r.ctx, &r.agent) }))
		r.d.pass(r.ctx)
		got, lines = events(c3)
		if !slices.Equal(got, []string{"WARN campaign paused"}) || lines[0]["reason"] == nil || lines[0]["reason"] == "" || lines[0]["status"] != model.CampaignPaused {
			t.Errorf("halted campaign: %v", lines)
		}
	})
}
