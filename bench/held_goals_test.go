package bench

import (
	"fmt"
	"slices"
	"strings"
)

// Issue 32's goals for calls held, as `make bench-calls` measures them.
const (
	goalRatio      = 1.5 // Parley's CPU per call-second over rtpengine's, the same streams
	goalLatePct    = 0.1 // late agent frames, percent, below
	goalLateAt     = 500 // ... at this many calls
	goalRSSKiB     = 256 // RSS per call, at most
	goalGoroutines = 4   // goroutines per call, at most
)

// verdict is "met" or "missed".
func verdict(met bool) string {
	if met {
		return "met"
	}
	return "missed"
}

// heldSummary is one line per N: each figure beside its goal and whether
// it was met, or INVALID and why.
func heldSummary(rows []heldResult) string {
	var b strings.Builder
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b heldResult) int { return a.Calls - b.Calls })
	for _, r := range rows {
		fmt.Fprintf(&b, "%d calls: %s\n", r.Calls, r.goals())
		if len(r.Invalid) == 0 && len(r.Profile) > 0 {
			fmt.Fprintf(&b, "  profile at %.0f live calls (%s), top by self time:\n", r.ProfileLive, r.ProfileFile)
			for _, line := range r.Profile[:min(len(r.Profile), 10)] {
				fmt.Fprintf(&b, "    %s\n", line)
			}
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// goals is r's figures beside issue 32's goals.
func (r heldResult) goals() string {
	if len(r.Invalid) > 0 {
		return "INVALID: " + strings.Join(r.Invalid, "; ")
	}
	late := fmt.Sprintf("late agent frames %.3f %% (goal < %g %% at %d calls", r.AgentLatePct, goalLatePct, goalLateAt)
	if r.Calls == goalLateAt {
		late += ": " + verdict(r.AgentLatePct < goalLatePct)
	}
	late += ")"
	return strings.Join([]string{
		fmt.Sprintf("CPU %.2f ms per call-s = %.1f× rtpengine's %.2f (goal ≤ %g×: %s)", r.CPUPerCallS, r.MediaCPURatio, r.Relay.CPUPerCallS, goalRatio, verdict(r.MediaCPURatio <= goalRatio)),
		late,
		fmt.Sprintf("RSS %.0f KiB per call (goal ≤ %d KiB: %s)", r.RSSPerCallKiB, goalRSSKiB, verdict(r.RSSPerCallKiB <= goalRSSKiB)),
		fmt.Sprintf("%.1f goroutines per call (goal ≤ %d: %s)", r.GoroutinesPerCall, goalGoroutines, verdict(r.GoroutinesPerCall <= goalGoroutines)),
	}, " · ")
}
