package bench

import "fmt"

// saturated is the share of the machine's CPU time, busy, past which a
// window measured a queue for the CPU rather than the work: the server's
// figures (and late frames) then say how crowded the machine was.
const saturated = 0.95

// invalid is why r's figures would not mean what they say, one reason
// each; empty when the run is valid. A reason is not a goal missed: a
// valid run may miss every goal.
func (r heldResult) invalid() []string {
	var why []string
	if !r.AllUp {
		why = append(why, fmt.Sprintf("not all %d calls up for half the hold (peak %.0f live, %.0f legs)", r.Calls, r.PeakLive, r.PeakLegs))
	}
	if r.CallerFailed > 0 || r.CallerOK != r.Calls || r.SippError != "" {
		why = append(why, fmt.Sprintf("SIPp counted %d of %d calls successful, %d failed", r.CallerOK, r.Calls, r.CallerFailed))
	}
	if r.ServerFailed > 0 || r.Records != r.Calls {
		why = append(why, fmt.Sprintf("the server recorded %d of %d calls, %d of them not COMPLETED", r.Records, r.Calls, r.ServerFailed))
	}
	if r.RecordsAmiss != "" {
		why = append(why, r.RecordsAmiss)
	}
	if r.ProfileFile == "" || len(r.Profile) == 0 {
		why = append(why, "no profile at the plateau: "+r.ProfileError)
	}
	if r.CaptureDropped > 0 {
		why = append(why, fmt.Sprintf("the capture dropped %d of %d packets", r.CaptureDropped, r.CaptureReceived+r.CaptureDropped))
	}
	if r.AgentFrames == 0 || r.CallerFrames == 0 {
		why = append(why, fmt.Sprintf("the capture holds %d agent and %d caller frames: no late frames to count", r.AgentFrames, r.CallerFrames))
	}
	if r.MachineSeconds > 0 && r.MachineBusySeconds >= saturated*r.MachineSeconds {
		why = append(why, fmt.Sprintf("the machine was saturated: CPUs busy %.0f %% of the window (the server %.0f of %.0f CPU-s)",
			100*r.MachineBusySeconds/r.MachineSeconds, r.ServerCPUSeconds, r.MachineSeconds))
	}
	if r.MachineSeconds <= 0 {
		why = append(why, "no window to measure the machine's CPU over")
	}
	why = append(why, r.Relay.invalid()...)
	return why
}

// invalid is why the rtpengine baseline would not be one.
func (r relayResult) invalid() []string {
	var why []string
	switch {
	case r.Sent == 0 || r.CPUPerCallS <= 0:
		why = append(why, "rtpengine relayed nothing: no baseline")
	case float64(r.Received) < 0.99*float64(r.Sent):
		why = append(why, fmt.Sprintf("rtpengine relayed %d of %d packets (< 99 %%)", r.Received, r.Sent))
	}
	if r.MachineSeconds > 0 && r.MachineBusySeconds >= saturated*r.MachineSeconds {
		why = append(why, fmt.Sprintf("the machine was saturated while rtpengine relayed: CPUs busy %.0f %% of the window", 100*r.MachineBusySeconds/r.MachineSeconds))
	}
	return why
}
