package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// fullCall sets every field of a call, with documents that survive JSON
// unchanged (numbers are float64) and times that are not yet what the store
// keeps (another zone, sub-millisecond digits).
func fullCall(orgID, agentID, trunkID string) model.Call {
	paris := time.FixedZone("CET", 3600)
	off := func(i int) *time.Time { v := at(i).In(paris).Add(1500 * time.Microsecond); return &v }
	return model.Call{
		OrgID:             orgID,
		AgentID:           agentID,
		AgentName:         "Receptionist ☎",
		AgentCallerIDName: ptr("ACME Corp"),
		SIPTrunkID:        &trunkID,
		Direction:         model.Inbound,
		Status:            model.CallCompleted,
		FromNumber:        "+15550001111",
		ToNumber:          "+15550002222",
		DialedAgentID:     &agentID,
		Variables: map[string]any{
			"name": "Ada", "count": 3.0, "vip": true, "none": nil, "nul": "a\x00b",
			"nested": map[string]any{"list": []any{"x", 1.5}},
		},
		Prompt:       "You are Receptionist. Greet Ada.",
		FirstMessage: ptr("Hello Ada!"),
		RecordingURL: ptr("https://parley.example.com/recordings/1.wav"),
		HangupCause:  ptr("USER_ENDED"),
		ErrorMessage: ptr("none really"),
		Transcript: []map[string]any{
			{"at": 0.5, "seq": 1.0, "role": "assistant", "text": "Hello Ada!", "type": "message", "turnId": "t1", "isFinal": true},
			{"at": 2.25, "seq": 2.0, "role": "user", "text": "Hi — ünïcødé", "type": "message", "turnId": "t2", "isFinal": true, "language": "en"},
			{"at": 3.0, "seq": 3.0, "role": "tool", "type": "tool_call", "turnId": "t3",
				"tool": map[string]any{"name": "end_call", "args": `{"reason":"done"}`}, "result": map[string]any{"output": "ok"}},
		},
		Summary:               ptr("Ada called; all good."),
		Metrics:               map[string]any{"llm_prompt_tokens": 120.0, "stt_audio_duration": 12.5},
		InitiatedAt:           off(1),
		StartedAt:             off(2),
		EndedAt:               off(62),
		DurationSeconds:       ptr(60),
		PreCallWebhookStatus:  ptr(model.WebhookSent),
		PostCallWebhookStatus: ptr(model.WebhookFailed),
		PostCallWebhookURL:    ptr("https://example.com/post"),
		LeaseOwner:            ptr("node-a"),
		LeaseExpiresAt:        off(90),
		CreatedAt:             at(0).In(paris).Add(700 * time.Microsecond),
		UpdatedAt:             at(62).In(paris),
	}
}

// withStatus sets a call's status.
func withStatus(status string) func(*model.Call) { return func(c *model.Call) { c.Status = status } }

// leased makes a call live, held by owner until the lease ends.
func leased(status, owner string, until time.Time) func(*model.Call) {
	return func(c *model.Call) { c.Status, c.LeaseOwner, c.LeaseExpiresAt = status, &owner, &until }
}

func callIDs(calls []model.Call) []string {
	return ids(calls, func(c model.Call) string { return c.ID })
}

var callTests = []test{
	{"CRUD", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		s := newSIPTrunk(t, b, b.org.ID)
		c := fullCall(b.org.ID, a.ID, s.ID)
		b.update(t, func(tx store.Tx) error { return tx.CreateCall(b.ctx, &c) })
		// The caller's struct now holds what the store keeps.
		if !model.IsUUID(c.ID) {
			t.Fatalf("id = %q, want a UUID", c.ID)
		}
		if want := at(2).Add(time.Millisecond); *c.StartedAt != want || c.StartedAt.Location() != time.UTC {
			t.Fatalf("started at = %v, want %v", *c.StartedAt, want)
		}
		wantEqual(t, c, getCall(t, b, b.org.ID, c.ID))

		u := model.Call{
			ID: c.ID, OrgID: c.OrgID, AgentID: model.NewID(), AgentName: "renamed",
			Direction: model.Outbound, Status: model.CallFailed, FromNumber: "+15550003333", ToNumber: "+15550004444",
			Variables: map[string]any{"k": "v"}, Prompt: "p2",
			Transcript: []map[string]any{{"role": "user", "text": "bye"}},
			Metrics:    map[string]any{"tts_characters_count": 9.0},
			CreatedAt:  c.CreatedAt, UpdatedAt: at(100),
		}
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &u) })
		u.Transcript = c.Transcript // UpdateCall never writes the transcript
		wantEqual(t, u, getCall(t, b, b.org.ID, c.ID))

		// Back to every field set, through UpdateCall this time.
		c2 := fullCall(b.org.ID, a.ID, s.ID)
		c2.ID, c2.CreatedAt = c.ID, c.CreatedAt
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &c2) })
		wantEqual(t, c2, getCall(t, b, b.org.ID, c.ID))
	}},
	{"AppendTranscript", func(t *testing.T, b *bundle) {
		c := newCall(t, b, b.org.ID, model.NewID())
		first := []map[string]any{{"seq": 0.0, "role": "assistant", "text": "Hello"}}
		second := []map[string]any{{"seq": 1.0, "role": "user", "text": "Hi"}, {"seq": 2.0, "role": "tool", "type": "tool_call"}}
		b.update(t, func(tx store.Tx) error { return tx.AppendTranscript(b.ctx, b.org.ID, c.ID, first, at(10)) })
		b.update(t, func(tx store.Tx) error { return tx.AppendTranscript(b.ctx, b.org.ID, c.ID, second, at(11)) })
		got := getCall(t, b, b.org.ID, c.ID)
		wantEqual(t, append(append([]map[string]any{}, first...), second...), got.Transcript)
		if !got.UpdatedAt.Equal(at(11)) {
			t.Errorf("updatedAt %v, want %v", got.UpdatedAt, at(11))
		}
		// A status change after an append keeps the entries.
		got.Status, got.Transcript = model.CallCompleted, nil
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &got) })
		if n := len(getCall(t, b, b.org.ID, c.ID).Transcript); n != 3 {
			t.Errorf("%d entries after UpdateCall, want 3", n)
		}
		for _, k := range []struct{ org, id string }{{b.other.ID, c.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "nope"}} {
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.AppendTranscript(b.ctx, k.org, k.id, first, at(12)) }), store.ErrNotFound)
		}
	}},
	{"ConcurrentAppendsAllLand", func(t *testing.T, b *bundle) {
		c := newCall(t, b, b.org.ID, model.NewID())
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				entry := []map[string]any{{"n": float64(i)}}
				if err := b.st.Update(b.ctx, func(tx store.Tx) error { return tx.AppendTranscript(b.ctx, b.org.ID, c.ID, entry, at(20)) }); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		got := getCall(t, b, b.org.ID, c.ID).Transcript
		if len(got) != 10 {
			t.Errorf("%d entries after 10 concurrent appends", len(got))
		}
		for i, e := range got {
			if e["seq"] != float64(i) {
				t.Errorf("entry %d has seq %v", i, e["seq"])
			}
		}
	}},
	{"UpdateKeepsCreatedAt", func(t *testing.T, b *bundle) {
		c := newCall(t, b, b.org.ID, model.NewID(), func(c *model.Call) { c.CreatedAt = at(5) })
		u := c
		u.CreatedAt, u.UpdatedAt = at(50), at(60)
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &u) })
		u.CreatedAt = at(5)
		wantEqual(t, u, getCall(t, b, b.org.ID, c.ID))
	}},
	{"FillsIDAndTimes", func(t *testing.T, b *bundle) {
		c := model.Call{OrgID: b.org.ID, AgentID: model.NewID(), Direction: model.Outbound, Status: model.CallQueued}
		before := model.Now()
		b.update(t, func(tx store.Tx) error { return tx.CreateCall(b.ctx, &c) })
		if !model.IsUUID(c.ID) || c.CreatedAt.Before(before) || c.UpdatedAt.Before(before) {
			t.Fatalf("id %q, times %v %v: want a UUID and now (>= %v)", c.ID, c.CreatedAt, c.UpdatedAt, before)
		}
		wantEqual(t, c, getCall(t, b, b.org.ID, c.ID))
	}},
	{"EmptyDocuments", func(t *testing.T, b *bundle) {
		// nil and empty documents are both stored empty and read back as
		// empty, non-nil values; CreateCall and UpdateCall say so in the
		// caller's struct.
		for _, empty := range []bool{false, true} {
			c := newCall(t, b, b.org.ID, model.NewID(), func(c *model.Call) {
				if empty {
					c.Variables, c.Transcript, c.Metrics = map[string]any{}, []map[string]any{}, map[string]any{}
				}
			})
			got := getCall(t, b, b.org.ID, c.ID)
			for _, v := range []*model.Call{&c, &got} {
				if v.Variables == nil || v.Transcript == nil || v.Metrics == nil {
					t.Fatalf("empty=%v: documents %#v %#v %#v, want empty non-nil", empty, v.Variables, v.Transcript, v.Metrics)
				}
			}
			wantEqual(t, c, got)

			u := got
			u.Variables, u.Transcript, u.Metrics = nil, nil, nil
			b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &u) })
			wantEqual(t, c, u)
			wantEqual(t, c, getCall(t, b, b.org.ID, c.ID))
		}
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		c := newCall(t, b, b.org.ID, model.NewID())
		for _, k := range []struct{ org, id string }{
			{b.other.ID, c.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "not-a-uuid"}, {"not-a-uuid", c.ID},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.Call, error) { return tx.GetCall(b.ctx, k.org, k.id) }), store.ErrNotFound)
			u := c
			u.OrgID, u.ID, u.Status = k.org, k.id, model.CallFailed
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &u) }), store.ErrNotFound)
		}
		wantEqual(t, c, getCall(t, b, b.org.ID, c.ID))
	}},
	{"GetCalls", func(t *testing.T, b *bundle) {
		c1 := newCall(t, b, b.org.ID, model.NewID())
		c2 := newCall(t, b, b.org.ID, model.NewID())
		theirs := newCall(t, b, b.other.ID, model.NewID())
		got := read(t, b, func(tx store.Tx) ([]model.Call, error) {
			return tx.GetCalls(b.ctx, b.org.ID, []string{c2.ID, theirs.ID, model.NewID(), "not-a-uuid", c1.ID, c2.ID})
		})
		slices.SortFunc(got, func(x, y model.Call) int { return strings.Compare(x.ID, y.ID) })
		want := []model.Call{c1, c2}
		slices.SortFunc(want, func(x, y model.Call) int { return strings.Compare(x.ID, y.ID) })
		wantEqual(t, want, got)
		for _, k := range []struct {
			org string
			ids []string
		}{{b.other.ID, []string{c1.ID}}, {"not-a-uuid", []string{c1.ID}}, {b.org.ID, nil}} {
			got := read(t, b, func(tx store.Tx) ([]model.Call, error) { return tx.GetCalls(b.ctx, k.org, k.ids) })
			if got == nil || len(got) != 0 {
				t.Fatalf("GetCalls(%s, %v) = %v, want an empty slice", k.org, k.ids, got)
			}
		}
	}},
	{"CreateRefuses", func(t *testing.T, b *bundle) {
		for name, mod := range map[string]func(*model.Call){
			"unknown organization":   func(c *model.Call) { c.OrgID = model.NewID() },
			"malformed organization": func(c *model.Call) { c.OrgID = "acme" },
			"malformed agent":        func(c *model.Call) { c.AgentID = "agent-1" },
			"malformed trunk":        func(c *model.Call) { c.SIPTrunkID = ptr("trunk") },
			"malformed dialed agent": func(c *model.Call) { c.DialedAgentID = ptr("agent-x") },
		} {
			t.Run(name, func(t *testing.T) {
				c := model.Call{OrgID: b.org.ID, AgentID: model.NewID(), Direction: model.Inbound, Status: model.CallRinging}
				mod(&c)
				wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateCall(b.ctx, &c) }), store.ErrNotFound)
			})
		}
		c := newCall(t, b, b.org.ID, model.NewID())
		dup := c
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateCall(b.ctx, &dup) }), store.ErrConflict)
	}},
	{"OutlivesAgentAndTrunk", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name = "Gone Soon" })
		s := newSIPTrunk(t, b, b.org.ID)
		c := newCall(t, b, b.org.ID, a.ID, func(c *model.Call) {
			c.AgentName, c.SIPTrunkID, c.DialedAgentID = a.Name, &s.ID, &a.ID
		})
		b.update(t, func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, b.org.ID, a.ID) })
		b.update(t, func(tx store.Tx) error { return tx.DeleteSIPTrunk(b.ctx, b.org.ID, s.ID) })
		got := getCall(t, b, b.org.ID, c.ID)
		wantEqual(t, c, got)
		if got.AgentID != a.ID || got.AgentName != "Gone Soon" || *got.SIPTrunkID != s.ID {
			t.Fatalf("call lost its agent or trunk: %+v", got)
		}
		rows, total := listCalls(t, b, store.CallFilter{AgentID: a.ID})
		wantEqual(t, []string{c.ID}, rows)
		wantEqual(t, 1, total)
	}},
	{"DeleteOrgCascades", func(t *testing.T, b *bundle) {
		type orgDeleter interface {
			DeleteOrg(ctx context.Context, id string) error
		}
		var can bool
		_ = b.view(func(tx store.Tx) error { _, can = tx.(orgDeleter); return nil })
		if !can {
			t.Skip("the store cannot delete organizations")
		}
		c := newCall(t, b, b.org.ID, model.NewID())
		theirs := newCall(t, b, b.other.ID, model.NewID())
		b.update(t, func(tx store.Tx) error { return tx.(orgDeleter).DeleteOrg(b.ctx, b.org.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.Call, error) { return tx.GetCall(b.ctx, b.org.ID, c.ID) }), store.ErrNotFound)
		wantEqual(t, theirs, getCall(t, b, b.other.ID, theirs.ID))
	}},
	{"CountLiveCalls", func(t *testing.T, b *bundle) {
		count := func(orgID string) int {
			return read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, orgID) })
		}
		wantEqual(t, 0, count(b.org.ID))
		for _, s := range []string{
			model.CallQueued, model.CallInitiated, model.CallRinging, model.CallInProgress, model.CallInProgress,
			model.CallCompleted, model.CallTransferred, model.CallFailed, model.CallCanceled,
		} {
			newCall(t, b, b.org.ID, model.NewID(), withStatus(s))
		}
		newCall(t, b, b.other.ID, model.NewID(), withStatus(model.CallInProgress))
		wantEqual(t, 4, count(b.org.ID))
		wantEqual(t, 1, count(b.other.ID))
		wantEqual(t, 0, count(model.NewID()))
		wantEqual(t, 0, count("not-a-uuid"))
	}},
	{"LockOrg", func(t *testing.T, b *bundle) {
		for _, inWrite := range []bool{true, false} {
			var got model.Organization
			fn := func(tx store.Tx) (err error) { got, err = tx.LockOrg(b.ctx, b.org.ID); return }
			if inWrite {
				b.update(t, fn)
			} else if err := b.view(fn); err != nil {
				t.Fatalf("LockOrg in View: %v", err)
			}
			wantEqual(t, b.org, got)
			for _, id := range []string{model.NewID(), "not-a-uuid"} {
				fn := func(tx store.Tx) error { _, err := tx.LockOrg(b.ctx, id); return err }
				if inWrite {
					wantIs(t, b.writeErr(fn), store.ErrNotFound)
				} else {
					wantIs(t, b.view(fn), store.ErrNotFound)
				}
			}
		}
	}},
	{"OldestQueuedCalls", func(t *testing.T, b *bundle) {
		var queued []created
		for _, sec := range []int{5, 2, 9, 2, 7} {
			c := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallQueued), func(c *model.Call) { c.CreatedAt = at(sec) })
			queued = append(queued, created{c.ID, c.CreatedAt})
		}
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInitiated), func(c *model.Call) { c.CreatedAt = at(1) })
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallCanceled), func(c *model.Call) { c.CreatedAt = at(1) })
		newCall(t, b, b.other.ID, model.NewID(), withStatus(model.CallQueued), func(c *model.Call) { c.CreatedAt = at(1) })
		want := oldestFirst(queued)
		for _, n := range []int{1, 3, 5, 10} {
			for _, inWrite := range []bool{true, false} {
				var got []model.Call
				fn := func(tx store.Tx) (err error) { got, err = tx.OldestQueuedCalls(b.ctx, b.org.ID, n); return }
				if inWrite {
					b.update(t, fn)
				} else if err := b.view(fn); err != nil {
					t.Fatal(err)
				}
				wantEqual(t, want[:min(n, len(want))], callIDs(got))
			}
		}
		for _, k := range []struct {
			org string
			n   int
		}{{b.org.ID, 0}, {b.org.ID, -1}, {model.NewID(), 5}, {"not-a-uuid", 5}} {
			got := read(t, b, func(tx store.Tx) ([]model.Call, error) { return tx.OldestQueuedCalls(b.ctx, k.org, k.n) })
			if got == nil || len(got) != 0 {
				t.Fatalf("OldestQueuedCalls(%s, %d) = %v, want an empty slice", k.org, k.n, got)
			}
		}
		// Full records come back.
		head := read(t, b, func(tx store.Tx) ([]model.Call, error) { return tx.OldestQueuedCalls(b.ctx, b.org.ID, 1) })
		wantEqual(t, getCall(t, b, b.org.ID, want[0]), head[0])
	}},
	{"OrgsWithQueuedCalls", func(t *testing.T, b *bundle) {
		orgs := func() []string {
			return read(t, b, func(tx store.Tx) ([]string, error) { return tx.OrgsWithQueuedCalls(b.ctx) })
		}
		wantEqual(t, []string{}, orgs())
		third := newOrg(t, b, "initech")
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInitiated))
		newCall(t, b, b.other.ID, model.NewID(), withStatus(model.CallQueued))
		newCall(t, b, b.other.ID, model.NewID(), withStatus(model.CallQueued))
		newCall(t, b, third.ID, model.NewID(), withStatus(model.CallQueued))
		want := []string{b.other.ID, third.ID}
		slices.Sort(want)
		wantEqual(t, want, orgs())
	}},
	{"RenewLeases", func(t *testing.T, b *bundle) {
		mine := []model.Call{
			newCall(t, b, b.org.ID, model.NewID(), leased(model.CallInitiated, "node-a", at(10))),
			newCall(t, b, b.org.ID, model.NewID(), leased(model.CallRinging, "node-a", at(10))),
			newCall(t, b, b.other.ID, model.NewID(), leased(model.CallInProgress, "node-a", at(10))),
		}
		untouched := []model.Call{
			newCall(t, b, b.org.ID, model.NewID(), leased(model.CallInProgress, "node-b", at(10))),
			newCall(t, b, b.org.ID, model.NewID(), leased(model.CallCompleted, "node-a", at(10))), // final: not live
			newCall(t, b, b.org.ID, model.NewID(), leased(model.CallQueued, "node-a", at(10))),
			newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress)), // no owner
		}
		renew := func(owner string, ids []string, until time.Time) int {
			var n int
			b.update(t, func(tx store.Tx) (err error) { n, err = tx.RenewLeases(b.ctx, owner, ids, until); return })
			return n
		}
		all := callIDs(append(slices.Clone(mine), untouched...))
		// Only the calls named are renewed: a server renews the calls it runs.
		wantEqual(t, 1, renew("node-a", []string{mine[1].ID, "not-a-uuid", model.NewID()}, at(20)))
		wantEqual(t, ptr(at(20)), getCall(t, b, mine[1].OrgID, mine[1].ID).LeaseExpiresAt)
		wantEqual(t, ptr(at(10)), getCall(t, b, mine[0].OrgID, mine[0].ID).LeaseExpiresAt)
		wantEqual(t, 3, renew("node-a", all, at(40)))
		for _, c := range mine {
			c.LeaseExpiresAt = ptr(at(40)) // and updated_at stays
			wantEqual(t, c, getCall(t, b, c.OrgID, c.ID))
		}
		for _, c := range untouched {
			wantEqual(t, c, getCall(t, b, c.OrgID, c.ID))
		}
		wantEqual(t, 0, renew("node-z", all, at(50)))
		wantEqual(t, 0, renew("", all, at(50)))
		wantEqual(t, 0, renew("node-a", nil, at(50)))
		// More ids than one statement takes.
		many := make([]string, 0, 1201)
		for range 1200 {
			many = append(many, model.NewID())
		}
		wantEqual(t, 3, renew("node-a", append(many, callIDs(mine)...), at(60)))
	}},
	{"ExpiredLiveCalls", func(t *testing.T, b *bundle) {
		now := at(100)
		// Created out of order, so the result's order is by creation time.
		expired1 := newCall(t, b, b.org.ID, model.NewID(), leased(model.CallInProgress, "node-b", at(99)), func(c *model.Call) { c.CreatedAt = at(3) })
		expired2 := newCall(t, b, b.other.ID, model.NewID(), leased(model.CallRinging, "node-c", at(50)), func(c *model.Call) { c.CreatedAt = at(1) })
		unleased := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInitiated), func(c *model.Call) { c.CreatedAt = at(2) })
		mineFresh := newCall(t, b, b.org.ID, model.NewID(), leased(model.CallInitiated, "node-a", at(130)), func(c *model.Call) { c.CreatedAt = at(4) })
		bNow := newCall(t, b, b.org.ID, model.NewID(), leased(model.CallInProgress, "node-b", now), func(c *model.Call) { c.CreatedAt = at(5) }) // expires at now: not before it
		bFresh := newCall(t, b, b.org.ID, model.NewID(), leased(model.CallInProgress, "node-b", at(130)), func(c *model.Call) { c.CreatedAt = at(6) })
		newCall(t, b, b.org.ID, model.NewID(), leased(model.CallCompleted, "node-a", at(50))) // final
		newCall(t, b, b.org.ID, model.NewID(), leased(model.CallQueued, "node-a", at(50)))    // not live
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallFailed))                  // final, no lease

		expired := func(owner string, n int, inWrite bool, running ...string) []string {
			var got []model.Call
			fn := func(tx store.Tx) (err error) { got, err = tx.ExpiredLiveCalls(b.ctx, owner, running, now, n); return }
			if inWrite {
				b.update(t, fn)
			} else if err := b.view(fn); err != nil {
				t.Fatal(err)
			}
			return callIDs(got)
		}
		for _, inWrite := range []bool{true, false} {
			wantEqual(t, []string{expired2.ID, unleased.ID, expired1.ID}, expired("", 10, inWrite))
			wantEqual(t, []string{expired2.ID, unleased.ID, expired1.ID, mineFresh.ID}, expired("node-a", 10, inWrite))
			// A call its owner runs is not lost while its lease holds...
			wantEqual(t, []string{expired2.ID, unleased.ID, expired1.ID}, expired("node-a", 10, inWrite, mineFresh.ID, model.NewID(), "not-a-uuid"))
			// ...and one whose lease lapsed is, running or not (another server reaps it).
			wantEqual(t, []string{expired2.ID, unleased.ID, expired1.ID, bNow.ID}, expired("node-b", 10, inWrite, expired1.ID, bFresh.ID))
			wantEqual(t, []string{expired2.ID, unleased.ID}, expired("node-a", 2, inWrite))
			wantEqual(t, []string{expired2.ID, unleased.ID, expired1.ID}, expired("node-z", 10, inWrite))
			wantEqual(t, []string{}, expired("", 0, inWrite))
		}
		got := read(t, b, func(tx store.Tx) ([]model.Call, error) { return tx.ExpiredLiveCalls(b.ctx, "", nil, now, 1) })
		wantEqual(t, []model.Call{expired2}, got)
	}},
	{"PendingPostCallWebhooks", func(t *testing.T, b *bundle) {
		url := ptr("https://example.com/post")
		ended := func(sec int) func(*model.Call) {
			return func(c *model.Call) { c.EndedAt, c.PostCallWebhookURL = ptr(at(sec)), url }
		}
		p1 := newCall(t, b, b.org.ID, model.NewID(), ended(30))
		p2 := newCall(t, b, b.other.ID, model.NewID(), ended(10))
		p3 := newCall(t, b, b.org.ID, model.NewID(), ended(30)) // ties p1: by id
		newCall(t, b, b.org.ID, model.NewID(), ended(5), func(c *model.Call) { c.PostCallWebhookStatus = ptr(model.WebhookSent) })
		newCall(t, b, b.org.ID, model.NewID(), ended(5), func(c *model.Call) { c.PostCallWebhookStatus = ptr(model.WebhookFailed) })
		newCall(t, b, b.org.ID, model.NewID(), ended(5), func(c *model.Call) { c.PostCallWebhookURL = nil })
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress), func(c *model.Call) { c.PostCallWebhookURL = url })
		want := oldestFirst([]created{{p1.ID, at(30)}, {p2.ID, at(10)}, {p3.ID, at(30)}})
		for _, inWrite := range []bool{true, false} {
			for _, n := range []int{0, 2, 10} {
				var got []model.Call
				fn := func(tx store.Tx) (err error) { got, err = tx.PendingPostCallWebhooks(b.ctx, n); return }
				if inWrite {
					b.update(t, fn)
				} else if err := b.view(fn); err != nil {
					t.Fatal(err)
				}
				wantEqual(t, want[:min(n, len(want))], callIDs(got), cmpopts.EquateEmpty())
			}
		}
		// Once its status is recorded, a call leaves the outbox.
		p2.PostCallWebhookStatus = ptr(model.WebhookSent)
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &p2) })
		got := read(t, b, func(tx store.Tx) ([]model.Call, error) { return tx.PendingPostCallWebhooks(b.ctx, 10) })
		wantEqual(t, []model.Call{getCall(t, b, p1.OrgID, want[1]), getCall(t, b, p1.OrgID, want[2])}, got)
	}},
	{"Admission", func(t *testing.T, b *bundle) {
		// Each request locks the organization, counts its live calls and
		// admits one more only below the limit: however many race, exactly
		// the limit get in, and none fails.
		const requests, limit = 50, 5
		var wg sync.WaitGroup
		errs := make([]error, requests)
		admitted := make([]bool, requests)
		for i := range requests {
			wg.Go(func() {
				errs[i] = b.st.Update(b.ctx, func(tx store.Tx) error {
					admitted[i] = false
					if _, err := tx.LockOrg(b.ctx, b.org.ID); err != nil {
						return err
					}
					n, err := tx.CountLiveCalls(b.ctx, b.org.ID)
					if err != nil || n >= limit {
						return err
					}
					// Widen the window between the count and the insert, so
					// that without the lock the race would be lost every time.
					time.Sleep(2 * time.Millisecond)
					c := model.Call{
						OrgID: b.org.ID, AgentID: model.NewID(), Direction: model.Outbound, Status: model.CallInitiated,
						FromNumber: "+15550001000", ToNumber: fmt.Sprintf("+1555100%04d", i),
					}
					admitted[i] = true
					return tx.CreateCall(b.ctx, &c)
				})
			})
		}
		wg.Wait()
		n := 0
		for i, err := range errs {
			if err != nil {
				t.Errorf("request %d: %v", i, err)
			}
			if admitted[i] {
				n++
			}
		}
		wantEqual(t, limit, n)
		wantEqual(t, limit, read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, b.org.ID) }))
	}},
	{"ReapersTakeDifferentCalls", func(t *testing.T, b *bundle) {
		// On PostgreSQL two servers reaping at once skip each other's locked
		// calls instead of waiting or taking the same ones. SQLite runs one
		// write transaction at a time, so there is nothing to skip.
		if b.st.Engine() != "postgres" {
			t.Skip("SQLite serialises write transactions")
		}
		for range 4 {
			newCall(t, b, b.org.ID, model.NewID(), leased(model.CallInProgress, "node-b", at(1)))
			newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallQueued))
			newCall(t, b, b.org.ID, model.NewID(), func(c *model.Call) {
				c.EndedAt, c.PostCallWebhookURL = ptr(at(1)), ptr("https://example.com/post")
			})
		}
		takes := []func(ctx context.Context, tx store.Tx) ([]model.Call, error){
			func(ctx context.Context, tx store.Tx) ([]model.Call, error) {
				return tx.ExpiredLiveCalls(ctx, "", nil, at(2), 2)
			},
			func(ctx context.Context, tx store.Tx) ([]model.Call, error) {
				return tx.OldestQueuedCalls(ctx, b.org.ID, 2)
			},
			func(ctx context.Context, tx store.Tx) ([]model.Call, error) {
				return tx.PendingPostCallWebhooks(ctx, 2)
			},
		}
		for _, take := range takes {
			var first, second []model.Call
			b.update(t, func(tx store.Tx) (err error) {
				if first, err = take(b.ctx, tx); err != nil {
					return err
				}
				// Another server, while this transaction holds its rows: it must
				// neither wait for them nor take them.
				ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
				defer cancel()
				return b.st.Update(ctx, func(tx store.Tx) (err error) { second, err = take(ctx, tx); return })
			})
			if len(first) != 2 || len(second) != 2 {
				t.Fatalf("took %d then %d calls, want 2 and 2", len(first), len(second))
			}
			for _, c := range second {
				if slices.Contains(callIDs(first), c.ID) {
					t.Fatalf("both transactions took call %s", c.ID)
				}
			}
		}
	}},
}
