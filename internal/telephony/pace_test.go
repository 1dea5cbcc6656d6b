package telephony

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/store/enginetest"
)

func TestPaceSlot(t *testing.T) {
	now := time.Unix(1000, 0)
	never := time.Unix(0, 0)
	// One a second: no burst; slots one second apart from now.
	at, next := paceSlot(never, now, 1)
	if !at.Equal(now) || !next.Equal(now.Add(time.Second)) {
		t.Fatalf("first at 1/s: at %v next %v", at, next)
	}
	at, next = paceSlot(next, now, 1)
	if !at.Equal(now.Add(time.Second)) || !next.Equal(now.Add(2*time.Second)) {
		t.Fatalf("second at 1/s: at %v next %v", at, next)
	}
	// Ten a second: ten at once, the eleventh 100 ms later.
	next = never
	for i := range 10 {
		if at, next = paceSlot(next, now, 10); !at.Equal(now) {
			t.Fatalf("INVITE %d of the burst at %v, want now", i+1, at)
		}
	}
	if at, _ = paceSlot(next, now, 10); !at.Equal(now.Add(100 * time.Millisecond)) {
		t.Fatalf("the eleventh at %v, want 100ms on", at)
	}
	// Idle time saves up no more than the burst.
	at, _ = paceSlot(now.Add(-time.Hour), now, 2)
	if !at.Equal(now) {
		t.Fatalf("after idling: %v", at)
	}
	// A half call a second: one every two seconds.
	if _, next = paceSlot(never, now, 0.5); !next.Equal(now.Add(2 * time.Second)) {
		t.Fatalf("0.5/s: next %v", next)
	}
}

// Two servers sending through one trunk share its limit: 40 INVITEs at 20
// a second, claimed from both at once, take at least a second past the
// burst of 20. The trunk's own callsPerSecond wins over the servers'
// default (--sip-trunk-cps); a trunk without a limit waits for nothing.
func TestTwoServersShareTheTrunkRate(t *testing.T) {
	for engine, open := range enginetest.Engines(t, "telephony") {
		t.Run(engine, func(t *testing.T) {
			st := open(t)
			trunkID := "11111111-1111-4111-8111-111111111111"
			own := 20.0
			servers := []*Phone{{Store: st, TrunkCPS: 1000}, {Store: st, TrunkCPS: 1000}}
			tr := Trunk{ID: &trunkID, Host: "carrier.example", Port: 5060, Transport: "udp", CallsPerSecond: &own}
			start := time.Now()
			var wg sync.WaitGroup
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := servers[i%2].awaitInviteSlot(context.Background(), tr); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if took := time.Since(start); took < 950*time.Millisecond {
				t.Errorf("40 INVITEs at 20/s with a burst of 20 took %v, want at least 1s", took)
			}
			// A waiting call that ends gives up its wait.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := servers[0].awaitInviteSlot(ctx, tr); err == nil {
				t.Error("a canceled call got a slot a second away")
			}
			unlimited := 0.0
			tr.CallsPerSecond = &unlimited // whatever the default
			slow := &Phone{Store: st, TrunkCPS: 1}
			begin := time.Now()
			for range 100 {
				if err := slow.awaitInviteSlot(context.Background(), tr); err != nil {
					t.Fatal(err)
				}
			}
			if took := time.Since(begin); took > 500*time.Millisecond {
				t.Errorf("100 INVITEs without a limit took %v", took)
			}
		})
	}
}
