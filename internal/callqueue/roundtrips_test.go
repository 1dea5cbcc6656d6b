package callqueue

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// roundTripper is a store that counts the statements it sends
// (sqlstore.Store.RoundTrips).
type roundTripper interface {
	RoundTrips() uint64
}

// signalStore tells, after each Update, that one has ended; with hold set,
// the next Update waits for release before its transaction begins (a
// database slow to take a write).
type signalStore struct {
	store.Store
	updates chan struct{}
	hold    chan struct{} // the next Update takes it and waits for release; nil: none
	held    chan struct{} // closed once that Update waits
	release chan struct{}
}

func (s *signalStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	select {
	case <-s.hold:
		close(s.held)
		<-s.release
	default:
	}
	err := s.Store.Update(ctx, fn)
	s.updates <- struct{}{}
	return err
}

// quietQueue is a queue over st with none of Run's loops (no dispatcher,
// heartbeat, reaper or sweep), so every statement the store counts is one
// a call's own path sent.
func quietQueue(t *testing.T, st store.Store, d call.Dialer, p *posts) *Queue {
	q := New(Options{Store: st, Dialer: d, Webhooks: p, Secret: func(context.Context, string) (string, error) { return "", nil },
		Node: "node-a", LeaseTTL: time.Hour, Logger: slog.New(slog.NewTextHandler(testLog(), nil))})
	close(q.recovered)
	t.Cleanup(func() {
		q.workers.Wait()
		q.sends.Wait()
	})
	return q
}

// TestRoundTripsPerCall counts the statements an answered outbound call
// costs the database, from its admission to its post-call webhook's
// status: admission, the agent's check, RINGING (with the ringing leg's
// state), IN_PROGRESS (with the answered leg's), the end, the webhook's
// status. Two shapes: the ringing written before the answer (a real
// carrier: seconds apart), and an answer that comes before the ringing
// write began (folded into the answer's write). Not counted here: the
// dispatcher's look at the queue each ended call wakes (one read) and the
// heartbeat's lease renewal (one write per LeaseTTL/3 for all of a
// server's calls).
func TestRoundTripsPerCall(t *testing.T) {
	// The most each shape may cost; the figures are logged. Rang first:
	// admission 5 (BEGIN, LockOrg, CountLines, INSERT, COMMIT), the agent's
	// check 3, RINGING 4 (the leg, UPDATE … RETURNING), IN_PROGRESS 4 (the
	// ringing leg deleted), the end 4 (the agent's webhook URL), the
	// webhook's status 3. Answered at once: no RINGING, IN_PROGRESS 3, and
	// the held ringing write's BEGIN and ROLLBACK (2), which it spares when
	// the answer came before it reached the store. Before this work: 27.
	const rangFirst, answeredAtOnce = 23, 20
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			base := open(t)
			rt, ok := base.(roundTripper)
			if !ok {
				t.Fatalf("%T does not count its round trips", base)
			}
			st := &signalStore{Store: base, updates: make(chan struct{}, 16), hold: make(chan struct{}, 1), held: make(chan struct{}), release: make(chan struct{})}
			h := &harness{t: t, store: base, dialer: &calltest.Dialer{}, posts: newPosts()}
			h.org, h.agent = seedOrg(t, base, 10)
			q := quietQueue(t, st, h.dialer, h.posts)
			h.queue = q
			free := sync.OnceFunc(func() { close(st.release) })
			t.Cleanup(func() { // on failure: nothing may stay blocked
				free()
				q.stop()
			})
			// next waits for the next Update to end.
			next := func(what string) {
				t.Helper()
				select {
				case <-st.updates:
				case <-time.After(15 * time.Second):
					t.Fatalf("no write of %s", what)
				}
			}

			place := func() (model.Call, uint64) {
				t.Helper()
				c := model.Call{ID: model.NewID(), OrgID: h.org.ID, AgentID: h.agent.ID, AgentName: h.agent.Name, Direction: model.Outbound,
					FromNumber: "+14155550100", ToNumber: "+14155559999", Variables: map[string]any{}, Prompt: "P",
					Transcript: []map[string]any{}, Metrics: map[string]any{}}
				before := rt.RoundTrips()
				if err := q.Place(context.Background(), &c, false); err != nil {
					t.Fatal(err)
				}
				next("the admission")
				return c, before
			}
			finish := func(c model.Call, before uint64, line *calltest.Line) uint64 {
				t.Helper()
				line.RemoteHangup()
				q.workers.Wait()
				q.sends.Wait()
				n := rt.RoundTrips() - before
				for len(st.updates) > 0 { // the end's and the webhook status's
					<-st.updates
				}
				if got := h.get(c.ID); got.Status != model.CallCompleted || got.PostCallWebhookStatus == nil {
					t.Fatalf("call %s, webhook %v; want COMPLETED with its webhook's status", got.Status, got.PostCallWebhookStatus)
				}
				return n
			}

			// Rang first: the ringing write lands, then the answer.
			c, before := place()
			dc := h.dialed()
			dc.RingWith([]byte("INVITE sip:+14155559999@carrier"))
			next("RINGING")
			line := dc.Answer()
			next("IN_PROGRESS")
			rang := finish(c, before, line)
			t.Logf("%s: %d statements for a call that rang first", name, rang)

			// Answered at once: the ringing write is held before it begins
			// and the answer comes meanwhile; the call must go on without
			// waiting for it.
			c, before = place()
			dc = h.dialed()
			st.hold <- struct{}{}
			dc.RingWith([]byte("INVITE sip:+14155559999@carrier"))
			<-st.held
			line = dc.Answer()
			next("IN_PROGRESS while the ringing write waits")
			if got := h.get(c.ID); got.Status != model.CallInProgress {
				t.Fatalf("answered while its ringing write waited: %s, want IN_PROGRESS", got.Status)
			}
			free()
			next("the ringing write, which finds the call answered")
			folded := finish(c, before, line)
			// h.get read the call once: a read-only transaction of one query.
			folded -= 3

			t.Logf("%s: %d statements for a call answered before its ringing was written", name, folded)
			if rang > rangFirst || folded > answeredAtOnce {
				t.Errorf("%d and %d statements per call; want at most %d and %d", rang, folded, rangFirst, answeredAtOnce)
			}
		})
	}
}
