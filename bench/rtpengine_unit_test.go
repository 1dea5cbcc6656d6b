package bench

import (
	"testing"
	"time"
)

func TestSendOrderSpreadsPhases(t *testing.T) {
	for _, calls := range []int{1, 7, 40, 500, 1000} {
		order := sendOrder(calls, frameDur)
		if len(order) != 2*calls {
			t.Fatalf("%d calls: %d slots", calls, len(order))
		}
		seen := map[[2]int]time.Duration{}
		var perMs [2][frameDur / time.Millisecond]int // by side
		for k, s := range order {
			if s.call < 0 || s.call >= calls || s.side < 0 || s.side > 1 {
				t.Fatalf("%d calls: slot %d is %+v", calls, k, s)
			}
			if _, dup := seen[[2]int{s.call, s.side}]; dup {
				t.Fatalf("%d calls: call %d side %d sends twice a period", calls, s.call, s.side)
			}
			seen[[2]int{s.call, s.side}] = s.phase
			if s.phase < 0 || s.phase >= frameDur || (k > 0 && s.phase < order[k-1].phase) {
				t.Fatalf("%d calls: slot %d's phase %v out of order or period", calls, k, s.phase)
			}
			perMs[s.side][s.phase/time.Millisecond]++
		}
		// Each side alone is spread evenly: every millisecond of the
		// period sends calls/20 of its packets, give or take one.
		if calls >= 40 {
			for side, bins := range perMs {
				for ms, n := range bins {
					if want := calls / len(bins); n < want-1 || n > want+1 {
						t.Errorf("%d calls, side %d: %d streams send in ms %d, want %d±1", calls, side, n, ms, want)
					}
				}
			}
			// A call's two ends keep clocks of their own: B about half a
			// period after A.
			for i := range calls {
				gap := (seen[[2]int{i, 1}] - seen[[2]int{i, 0}] + frameDur) % frameDur
				if d, tol := gap-frameDur/2, frameDur/time.Duration(calls)+time.Microsecond; d < -tol || d > tol {
					t.Errorf("%d calls: call %d's sides %v apart, want about %v", calls, i, gap, frameDur/2)
				}
			}
		}
	}
}

func TestBusiestShare(t *testing.T) {
	even := make([]int64, 20)
	for i := range even {
		even[i] = 100
	}
	if got := busiestShare(even); got != 5 {
		t.Errorf("even: %v %%, want 5", got)
	}
	aligned := make([]int64, 20)
	aligned[3] = 2000
	if got := busiestShare(aligned); got != 100 {
		t.Errorf("aligned: %v %%, want 100", got)
	}
	if got := busiestShare(make([]int64, 20)); got != 0 {
		t.Errorf("none: %v, want 0", got)
	}
}
