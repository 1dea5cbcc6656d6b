package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// endedCall makes a completed call of orgID that ended at end, with a
// recording and a transcript line.
func endedCall(t *testing.T, b *bundle, orgID, agentID string, end time.Time) model.Call {
	t.Helper()
	c := newCall(t, b, orgID, agentID, func(c *model.Call) {
		c.StartedAt, c.EndedAt = ptr(end.Add(-time.Minute)), ptr(end)
		c.RecordingURL = ptr("https://parley.example.com/v1/calls/x/recording")
	})
	b.update(t, func(tx store.Tx) error {
		return tx.AppendTranscript(b.ctx, orgID, c.ID, []map[string]any{{"role": "agent", "text": "Hello."}}, end)
	})
	return getCall(t, b, orgID, c.ID)
}

func endedCallsAfter(t *testing.T, b *bundle, orgID, kind string, before time.Time, n int) []string {
	t.Helper()
	calls := read(t, b, func(tx store.Tx) ([]store.EndedCall, error) {
		return tx.EndedCallsAfter(b.ctx, orgID, kind, before, n)
	})
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ID
	}
	return ids
}

var retentionTests = []test{
	{"OrgFieldsRoundTrip", func(t *testing.T, b *bundle) {
		o := newOrg(t, b, "initech", func(o *model.Organization) { o.RecordingRetentionDays = ptr(30) })
		wantEqual(t, o, read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) }))
		o.RecordingRetentionDays, o.TranscriptRetentionDays = nil, ptr(model.MaxRetentionDays)
		b.update(t, func(tx store.Tx) error { return tx.UpdateOrg(b.ctx, &o) })
		wantEqual(t, o, read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) }))

		// Only organizations with a period set are swept.
		got := read(t, b, func(tx store.Tx) ([]model.Organization, error) { return tx.RetainingOrgs(b.ctx) })
		wantEqual(t, []model.Organization{o}, got)
		o.TranscriptRetentionDays = nil
		b.update(t, func(tx store.Tx) error { return tx.UpdateOrg(b.ctx, &o) })
		got = read(t, b, func(tx store.Tx) ([]model.Organization, error) { return tx.RetainingOrgs(b.ctx) })
		wantEqual(t, []model.Organization{}, got)

		// The schema refuses a period out of bounds, whoever writes it.
		o.RecordingRetentionDays = ptr(0)
		if err := b.writeErr(func(tx store.Tx) error { return tx.UpdateOrg(b.ctx, &o) }); err == nil {
			t.Fatal("a retention of 0 days was stored")
		}
	}},
	{"EndedCallsAfterCursor", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		first := endedCall(t, b, b.org.ID, a.ID, at(10))
		tieA, tieB := endedCall(t, b, b.org.ID, a.ID, at(20)), endedCall(t, b, b.org.ID, a.ID, at(20))
		if tieB.ID < tieA.ID {
			tieA, tieB = tieB, tieA
		}
		late := endedCall(t, b, b.org.ID, a.ID, at(40)) // not expired at the cutoff
		newCall(t, b, b.org.ID, a.ID, func(c *model.Call) { c.Status = model.CallInProgress; c.StartedAt = ptr(at(1)) })
		newCall(t, b, b.org.ID, a.ID, func(c *model.Call) { c.Status = model.CallQueued })
		other := newAgent(t, b, b.other.ID)
		endedCall(t, b, b.other.ID, other.ID, at(5))
		noRecording := newCall(t, b, b.org.ID, a.ID, func(c *model.Call) {
			c.Status, c.EndedAt = model.CallFailed, ptr(at(15))
		})

		cutoff := at(30)
		wantEqual(t, []string{first.ID, noRecording.ID, tieA.ID, tieB.ID},
			endedCallsAfter(t, b, b.org.ID, store.RetainRecording, cutoff, 10))
		calls := read(t, b, func(tx store.Tx) ([]store.EndedCall, error) {
			return tx.EndedCallsAfter(b.ctx, b.org.ID, store.RetainRecording, cutoff, 2)
		})
		wantEqual(t, []store.EndedCall{{ID: first.ID, EndedAt: at(10), HasRecording: true}, {ID: noRecording.ID, EndedAt: at(15)}}, calls)

		// The cursor moves past a batch, kind by kind, and never back.
		b.update(t, func(tx store.Tx) error {
			return tx.AdvanceRetentionCursor(b.ctx, b.org.ID, store.RetainRecording, tieA.EndedAt.UTC(), tieA.ID)
		})
		wantEqual(t, []string{tieB.ID}, endedCallsAfter(t, b, b.org.ID, store.RetainRecording, cutoff, 10))
		wantEqual(t, []string{first.ID}, endedCallsAfter(t, b, b.org.ID, store.RetainTranscript, cutoff, 1))
		b.update(t, func(tx store.Tx) error {
			return tx.AdvanceRetentionCursor(b.ctx, b.org.ID, store.RetainRecording, first.EndedAt.UTC(), first.ID)
		})
		wantEqual(t, []string{tieB.ID, late.ID}, endedCallsAfter(t, b, b.org.ID, store.RetainRecording, at(50), 10))
		wantEqual(t, []string{}, endedCallsAfter(t, b, b.other.ID, store.RetainRecording, at(1), 10))
	}},
	{"ClearRecordingsEmptyTranscripts", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		swept, kept := endedCall(t, b, b.org.ID, a.ID, at(10)), endedCall(t, b, b.org.ID, a.ID, at(11))
		other := endedCall(t, b, b.other.ID, newAgent(t, b, b.other.ID).ID, at(10))
		clear := func(orgID string, ids ...string) (n int) {
			b.update(t, func(tx store.Tx) (err error) { n, err = tx.ClearRecordingURLs(b.ctx, orgID, ids); return })
			return n
		}
		empty := func(orgID string, ids ...string) (n int) {
			b.update(t, func(tx store.Tx) (err error) { n, err = tx.EmptyTranscripts(b.ctx, orgID, ids); return })
			return n
		}
		// Three ids (a list padded to four) count the one call changed.
		if n := clear(b.org.ID, swept.ID, other.ID, "not-a-uuid", model.NewID()); n != 1 {
			t.Fatalf("cleared %d recording urls, want 1 (another organization's call is not touched)", n)
		}
		if n := clear(b.org.ID, swept.ID); n != 0 {
			t.Fatalf("cleared %d recording urls a second time", n)
		}
		want := swept
		want.RecordingURL = nil // and nothing else: updatedAt stays
		wantEqual(t, want, getCall(t, b, b.org.ID, swept.ID))

		if n := empty(b.org.ID, swept.ID, other.ID); n != 1 {
			t.Fatalf("emptied %d transcripts, want 1", n)
		}
		if n := empty(b.org.ID, swept.ID); n != 0 {
			t.Fatalf("emptied %d transcripts a second time", n)
		}
		want.Transcript = []map[string]any{}
		wantEqual(t, want, getCall(t, b, b.org.ID, swept.ID))
		wantEqual(t, kept, getCall(t, b, b.org.ID, kept.ID))
		wantEqual(t, other, getCall(t, b, b.other.ID, other.ID))
	}},
	{"SingletonLease", func(t *testing.T, b *bundle) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		claim := func(name, owner string, at time.Time) (ok bool) {
			b.update(t, func(tx store.Tx) (err error) {
				ok, err = tx.ClaimSingleton(b.ctx, name, owner, at, at.Add(time.Minute))
				return err
			})
			return ok
		}
		release := func(name, owner string) {
			b.update(t, func(tx store.Tx) error { return tx.ReleaseSingleton(b.ctx, name, owner) })
		}
		if !claim("retention", "node-a", now) {
			t.Fatal("a free lease was not claimed")
		}
		if claim("retention", "node-b", now.Add(30*time.Second)) {
			t.Fatal("node-b took a lease node-a holds")
		}
		if !claim("other-work", "node-b", now) {
			t.Fatal("a lease of another name was not free")
		}
		if !claim("retention", "node-a", now.Add(50*time.Second)) {
			t.Fatal("node-a could not renew its lease")
		}
		if claim("retention", "node-b", now.Add(100*time.Second)) {
			t.Fatal("node-b took a renewed lease before it ran out")
		}
		if !claim("retention", "node-b", now.Add(111*time.Second)) {
			t.Fatal("node-b could not take a lease that ran out")
		}
		release("retention", "node-a") // no longer its: nothing happens
		if claim("retention", "node-a", now.Add(112*time.Second)) {
			t.Fatal("node-a's release gave node-b's lease away")
		}
		release("retention", "node-b")
		if !claim("retention", "node-a", now.Add(113*time.Second)) {
			t.Fatal("a released lease was not free")
		}

		// Claimants racing for a free lease: exactly one wins.
		var wg sync.WaitGroup
		wins := make(chan string, 8)
		for i := range 8 {
			owner := "racer-" + string(rune('a'+i))
			wg.Go(func() {
				var ok bool
				err := b.st.Update(b.ctx, func(tx store.Tx) (err error) {
					ok, err = tx.ClaimSingleton(b.ctx, "race", owner, now, now.Add(time.Minute))
					return err
				})
				if err != nil {
					t.Errorf("%s: %v", owner, err)
				}
				if ok {
					wins <- owner
				}
			})
		}
		wg.Wait()
		close(wins)
		if n := len(wins); n != 1 {
			t.Fatalf("%d claimants won a free lease at once, want 1", n)
		}
	}},
}
