package bench

import (
	"strings"
	"testing"
)

// validHeld is a run with nothing wrong with it.
func validHeld() heldResult {
	return heldResult{
		Calls: 500, Inbound: 400, Outbound: 100, AllUp: true, PeakLive: 500, PeakLegs: 500, AllUpSeconds: 30,
		CallerOK: 500, Records: 500,
		CPUPerCallS: 2, ServerCPUSeconds: 30, MachineBusySeconds: 50, MachineSeconds: 60,
		RSSPerCallKiB: 200, GoroutinesPerCall: 3, MediaCPURatio: 1.25,
		CaptureReceived: 100000, AgentFrames: 40000, CallerFrames: 40000, AgentLatePct: 0.05,
		Profile: []string{"12.00% parley [.] runtime.futex"}, ProfileFile: "results/calls-500.perf", ProfileLive: 500,
		Relay: relayResult{Calls: 500, Sent: 1000, Received: 1000, CPUPerCallS: 1.6, MachineBusySeconds: 40, MachineSeconds: 60},
	}
}

func TestHeldInvalid(t *testing.T) {
	if why := validHeld().invalid(); len(why) != 0 {
		t.Fatalf("a valid run found invalid: %q", why)
	}
	for _, tc := range []struct {
		name  string
		spoil func(*heldResult)
		want  string
	}{
		{"calls not all up", func(r *heldResult) { r.AllUp, r.PeakLive = false, 304 }, "not all 500 calls up for half the hold (peak 304 live"},
		{"SIPp failed calls", func(r *heldResult) { r.CallerOK, r.CallerFailed = 304, 196 }, "SIPp counted 304 of 500 calls successful, 196 failed"},
		{"SIPp exited badly", func(r *heldResult) { r.SippError = "exit status 1" }, "SIPp counted 500 of 500"},
		{"server failed calls", func(r *heldResult) { r.ServerFailed = 3 }, "3 of them not COMPLETED"},
		{"calls never recorded", func(r *heldResult) { r.Records = 304 }, "the server recorded 304 of 500 calls"},
		{"records by direction", func(r *heldResult) { r.RecordsAmiss = "records by direction map[INBOUND:500]" }, "records by direction"},
		{"no profile", func(r *heldResult) { r.Profile, r.ProfileFile, r.ProfileError = nil, "", "perf is not installed" }, "no profile at the plateau: perf is not installed"},
		{"profile empty", func(r *heldResult) { r.Profile = nil }, "no profile at the plateau"},
		{"capture dropped", func(r *heldResult) { r.CaptureDropped = 7 }, "the capture dropped 7 of 100007 packets"},
		{"nothing captured", func(r *heldResult) { r.AgentFrames = 0 }, "the capture holds 0 agent"},
		{"machine saturated", func(r *heldResult) { r.MachineBusySeconds = 57 }, "the machine was saturated: CPUs busy 95 %"},
		{"no machine window", func(r *heldResult) { r.MachineBusySeconds, r.MachineSeconds = 0, 0 }, "no window"},
		{"no baseline", func(r *heldResult) { r.Relay = relayResult{} }, "rtpengine relayed nothing"},
		{"baseline lost packets", func(r *heldResult) { r.Relay.Received = 980 }, "rtpengine relayed 980 of 1000 packets"},
		{"baseline saturated", func(r *heldResult) { r.Relay.MachineBusySeconds = 58 }, "saturated while rtpengine relayed"},
	} {
		r := validHeld()
		tc.spoil(&r)
		why := r.invalid()
		if len(why) != 1 || !strings.Contains(why[0], tc.want) {
			t.Errorf("%s: invalid() = %q, want one reason with %q", tc.name, why, tc.want)
		}
	}
}

func TestHeldTableAndSummarySayInvalid(t *testing.T) {
	good, bad := validHeld(), validHeld()
	good.Calls, good.Inbound, good.Outbound = 250, 200, 50
	bad.AllUp, bad.PeakLive, bad.CPUPerCallS = false, 304, 3.14159
	bad.Invalid = bad.invalid()
	table := heldTable([]heldResult{bad, good})
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "| 250 ") || !strings.HasPrefix(lines[3], "| 500 ") {
		t.Fatalf("table:\n%s", table)
	}
	if !strings.Contains(lines[3], "INVALID: not all 500 calls up") || strings.Contains(lines[3], "3.14") {
		t.Errorf("the invalid run's row shows figures or no reason: %s", lines[3])
	}
	if strings.Contains(lines[2], "INVALID") || !strings.Contains(lines[2], "| 2.00 |") {
		t.Errorf("the valid run's row: %s", lines[2])
	}
	sum := heldSummary([]heldResult{bad, good})
	if !strings.Contains(sum, "500 calls: INVALID: not all 500 calls up") || strings.Contains(sum, "3.14") {
		t.Errorf("summary of the invalid run:\n%s", sum)
	}
	if !strings.Contains(sum, "250 calls: CPU 2.00 ms per call-s") || !strings.Contains(sum, "runtime.futex") {
		t.Errorf("summary of the valid run:\n%s", sum)
	}
}

func TestHeldGoals(t *testing.T) {
	r := validHeld()
	got := r.goals()
	for _, want := range []string{
		"1.2× rtpengine's 1.60 (goal ≤ 1.5×: met)", "late agent frames 0.050 % (goal < 0.1 % at 500 calls: met)",
		"RSS 200 KiB per call (goal ≤ 256 KiB: met)", "3.0 goroutines per call (goal ≤ 4: met)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("goals %q lack %q", got, want)
		}
	}
	r.MediaCPURatio, r.AgentLatePct, r.RSSPerCallKiB, r.GoroutinesPerCall = 3.2, 0.27, 370, 7.4
	got = r.goals()
	for _, want := range []string{"(goal ≤ 1.5×: missed)", "(goal < 0.1 % at 500 calls: missed)", "(goal ≤ 256 KiB: missed)", "(goal ≤ 4: missed)"} {
		if !strings.Contains(got, want) {
			t.Errorf("goals %q lack %q", got, want)
		}
	}
	// The late-frames goal is set at 500 calls: other Ns show it, unjudged.
	r.Calls = 1000
	if got = r.goals(); !strings.Contains(got, "late agent frames 0.270 % (goal < 0.1 % at 500 calls)") {
		t.Errorf("goals at 1,000 calls: %q", got)
	}
}
