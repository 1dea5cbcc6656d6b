package callqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/model"
)

// TestPlacementsAreDecidedTogether: calls placed while an admission of
// their organization is under way are decided together, in one
// transaction, exactly as one by one: the limit holds (with a call that
// reserves a second line among them), the queue stays FIFO (no call is
// admitted behind a queued one), a skipQueue call at the limit is refused
// and stores nothing. On both engines.
func TestPlacementsAreDecidedTogether(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			base := open(t)
			st := &signalStore{Store: base, updates: make(chan struct{}, 64), hold: make(chan struct{}, 1), held: make(chan struct{}), release: make(chan struct{})}
			h := &harness{t: t, store: base, posts: newPosts()}
			h.org, h.agent = seedOrg(t, base, 4)
			q := quietQueue(t, st, &calltest.Dialer{}, h.posts)
			h.queue = q
			free := sync.OnceFunc(func() { close(st.release) })
			t.Cleanup(func() {
				free()
				q.stop()
			})
			newCall := func(i int) *model.Call {
				return &model.Call{ID: model.NewID(), OrgID: h.org.ID, AgentID: h.agent.ID, AgentName: h.agent.Name, Direction: model.Outbound,
					FromNumber: "+14155550100", ToNumber: fmt.Sprintf("+1415555%04d", i), Variables: map[string]any{}, Prompt: "P",
					Transcript: []map[string]any{}, Metrics: map[string]any{}}
			}
			// The first admission is held before its transaction begins;
			// the others arrive meanwhile, in a known order.
			st.hold <- struct{}{}
			first := newCall(0)
			errs := make([]error, 8)
			calls := []*model.Call{first}
			var wg sync.WaitGroup
			wg.Go(func() { errs[0] = q.Place(context.Background(), first, false) })
			<-st.held
			for i := 1; i < 8; i++ {
				c := newCall(i)
				// The third reserves a line for its far end; the sixth
				// jumps the queue, with every line taken by then.
				c.ReservesLine = i == 2
				calls = append(calls, c)
				wg.Go(func() { errs[i] = q.Place(context.Background(), c, i == 5) })
				waitFor(t, "the call to wait for the next batch", func() bool {
					q.placeMu.Lock()
					defer q.placeMu.Unlock()
					return len(q.placements[h.org.ID].next) == i
				})
			}
			free()
			wg.Wait()
			if n := len(st.updates); n != 2 {
				t.Errorf("%d transactions decided 8 calls; want 2 (the first, then the seven that waited)", n)
			}
			// Lines: 1 (first) + 1 + 2 (reserves) = 4, the limit: the rest
			// queue behind, and the skipQueue call is refused.
			want := []string{model.CallInitiated, model.CallInitiated, model.CallInitiated, model.CallQueued, model.CallQueued, "", model.CallQueued, model.CallQueued}
			for i, c := range calls {
				if i == 5 {
					if !errors.Is(errs[i], ErrConcurrencyLimit) {
						t.Errorf("skipQueue call at the limit: %v, want ErrConcurrencyLimit", errs[i])
					}
					continue
				}
				if errs[i] != nil {
					t.Fatalf("call %d: %v", i, errs[i])
				}
				if got := h.get(c.ID).Status; got != want[i] {
					t.Errorf("call %d is %s, want %s", i, got, want[i])
				}
			}
			if n := h.countStatus(model.CallQueued) + h.countStatus(model.CallInitiated); n != 7 {
				t.Errorf("%d calls stored, want 7 (the refused one is not)", n)
			}
		})
	}
}
