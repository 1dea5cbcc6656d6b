package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/pipeline/vad"
)

// heldResult is one N of BenchmarkCallsHeld, as written to calls-N.json.
type heldResult struct {
	Calls       int     `json:"calls"`
	HoldSeconds float64 `json:"hold_seconds"`
	Date        string  `json:"date"`
	Inbound     int     `json:"inbound"`  // SIPp callers calling the agent's number
	Outbound    int     `json:"outbound"` // calls Parley placed to a SIPp callee

	PeakLive, PeakLegs float64 `json:"-"`
	CallsHeld          float64 `json:"calls_held"`     // live calls at the peak (parley_calls_live)
	AllUpSeconds       float64 `json:"all_up_seconds"` // every call up at once, as polled (or the plateau's length when !AllUp)
	AllUp              bool    `json:"all_up"`         // false: past capacity, figures are over the plateau at 95 % of the peak
	CallerOK           int     `json:"sipp_ok"`
	CallerFailed       int     `json:"sipp_failed"`   // SIPp's count, callers and callees
	ServerFailed       int     `json:"server_failed"` // records not COMPLETED

	SippError    string `json:"sipp_error,omitempty"`    // SIPp's exit, when not clean
	Records      int    `json:"records"`                 // call records the server kept
	RecordsAmiss string `json:"records_amiss,omitempty"` // records by direction, when not as placed

	// Over the steady window (every call up): whole-server CPU, the
	// conversation engine on.
	CPUPerCallS      float64 `json:"cpu_ms_per_call_second"`
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
	// The machine's CPU over the same window: what else ran (SIPp, the
	// fakes, dumpcap, and anything sharing the machine).
	MachineBusySeconds float64 `json:"machine_busy_seconds"`
	MachineSeconds     float64 `json:"machine_seconds"`
	IdleRSS            float64 `json:"idle_rss_bytes"`
	RSSPerCallKiB      float64 `json:"rss_kib_per_call"`      // median over the window, less idle
	PeakRSSPerCallKiB  float64 `json:"peak_rss_kib_per_call"` // VmHWM, less idle
	IdleGoroutines     float64 `json:"idle_goroutines"`
	GoroutinesPerCall  float64 `json:"goroutines_per_call"`

	Relay         relayResult `json:"rtpengine"`
	MediaCPURatio float64     `json:"media_cpu_ratio"` // CPUPerCallS / rtpengine's

	// On the wire, from the capture.
	CapturedCalls     int     `json:"captured_calls"`
	CaptureReceived   int     `json:"capture_received"`
	CaptureDropped    int     `json:"capture_dropped"`
	DumpcapCPUSeconds float64 `json:"dumpcap_cpu_seconds"`
	AgentFrames       int     `json:"agent_frames"`
	AgentLatePct      float64 `json:"agent_late_pct"`
	AgentLostPct      float64 `json:"agent_lost_pct"`
	CallerFrames      int     `json:"caller_frames"`
	CallerLatePct     float64 `json:"caller_late_pct"` // SIPp's own stream, for reference
	CallerLostPct     float64 `json:"caller_lost_pct"`
	WireTurns         int     `json:"wire_turns"`
	WireShareP50      float64 `json:"wire_share_p50_ms"` // last voiced caller packet → first voiced agent packet, less the old fixed 650 ms (fixedEndpointing and providerDelays)
	WireShareP99      float64 `json:"wire_share_p99_ms"`
	// The wire's turns matched to the engine's (turns_test.go) and split
	// into the silence the turn-taking policy chose for each
	// (endpointing_wait_ms) and the rest: the turn less that wait and
	// providerDelays, p50 and p99 of the whole and of each of its parts
	// (definition: the engine's end of the caller's speech after the
	// wire's; grid: endpointing_ms beyond the wait; providers: their
	// measured time beyond the fakes' delays; overhead: overhead_ms; line:
	// the first audio handed to the line → its packet on the wire).
	WireMatched   int                   `json:"wire_matched_turns"`
	WireUnmatched int                   `json:"wire_unmatched_turns"`
	WireWaitP50   float64               `json:"wire_policy_wait_p50_ms"`
	WireWaitP99   float64               `json:"wire_policy_wait_p99_ms"`
	WireWaits     map[string]int        `json:"wire_policy_waits"` // matched turns by the wait in ms
	WireRestP50   float64               `json:"wire_rest_p50_ms"`
	WireRestP99   float64               `json:"wire_rest_p99_ms"`
	WireRestParts map[string][2]float64 `json:"wire_rest_parts_ms"` // part: [p50, p99]
	// Parley's own share of the turn on the wire: the rest less the
	// providers' part (everything but the policy's wait and the
	// providers' measured time; the goal is p99 ≤ 10 ms).
	WireOwnP50 float64 `json:"wire_own_share_p50_ms"`
	WireOwnP99 float64 `json:"wire_own_share_p99_ms"`
	// Where the engine's VAD (run here on the captured caller audio) puts
	// the end of the same speech, less where the wire's energy threshold
	// does: how far the two definitions of "the caller stopped" differ.
	VADOffsetTurns    int            `json:"vad_offset_turns"`
	VADOffsetP50      float64        `json:"vad_offset_p50_ms"`
	VADOffsetP99      float64        `json:"vad_offset_p99_ms"`
	EngineTurns       int            `json:"engine_turns"`
	EngineShareP50    float64        `json:"engine_share_p50_ms"` // metrics.turn_latency first_audio_ms, less its endpointing_wait_ms and providerDelays
	EngineShareP99    float64        `json:"engine_share_p99_ms"`
	EngineWaits       map[string]int `json:"engine_policy_waits"` // every record's turns by endpointing_wait_ms
	EngineOverheadP50 float64        `json:"engine_overhead_p50_ms"`
	EngineOverheadP99 float64        `json:"engine_overhead_p99_ms"`

	engine []engineTurn // the server's "turn" log lines, for the wire's split

	Profile      []string `json:"profile,omitempty"`      // perf's top symbols (self time) at the plateau
	ProfileFile  string   `json:"profile_file,omitempty"` // perf.data: perf report -i calls-N.perf
	ProfileLive  float64  `json:"profile_live_calls"`     // live calls when the profile started
	ProfileError string   `json:"profile_error,omitempty"`

	// Invalid says why the figures mean nothing (empty: a valid run).
	Invalid []string `json:"invalid,omitempty"`

	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
}

// analyze reads the capture of the server's RTP ports lo..hi: per stream
// late and lost frames, per call the turns on the wire.
func (r *heldResult) analyze(tb testing.TB, path string, lo, hi int) {
	tb.Helper()
	pkts, err := readPcap(path)
	if err != nil {
		tb.Fatal(err)
	}
	type key struct {
		port uint16
		ssrc uint32
	}
	agent, caller := map[key][]rtpPacket{}, map[key][]rtpPacket{}
	agentByCall, callerByCall := map[uint16][]rtpPacket{}, map[uint16][]rtpPacket{}
	callerPCM := map[uint16][][]int16{} // each caller packet's decoded samples, as callerByCall
	in := func(p uint16) bool { return int(p) >= lo && int(p) <= hi }
	for _, p := range pkts {
		rp, ssrc, ok := parseRTP(p)
		if !ok {
			continue
		}
		switch {
		case in(p.src) && !in(p.dst):
			agent[key{p.src, ssrc}] = append(agent[key{p.src, ssrc}], rp)
			agentByCall[p.src] = append(agentByCall[p.src], rp)
		case in(p.dst) && !in(p.src):
			caller[key{p.dst, ssrc}] = append(caller[key{p.dst, ssrc}], rp)
			callerByCall[p.dst] = append(callerByCall[p.dst], rp)
			callerPCM[p.dst] = append(callerPCM[p.dst], decodeG711(p))
		}
	}
	sum := func(streams map[key][]rtpPacket) (frames int, latePct, lostPct float64) {
		var late, lost int
		for _, s := range streams {
			st := measureStream(s)
			frames += st.received
			late += st.late
			lost += st.lost
		}
		if frames > 0 {
			latePct = 100 * float64(late) / float64(frames)
			lostPct = 100 * float64(lost) / float64(frames+lost)
		}
		return frames, latePct, lostPct
	}
	r.AgentFrames, r.AgentLatePct, r.AgentLostPct = sum(agent)
	r.CallerFrames, r.CallerLatePct, r.CallerLostPct = sum(caller)
	var shares, vadOffsets []float64
	vadEnds := vadSpeechEnds(callerByCall, callerPCM)
	captured := map[uint16][]capturedTurn{}
	for port, a := range agentByCall {
		c := callerByCall[port]
		if len(c) == 0 {
			continue
		}
		r.CapturedCalls++
		ends := vadEnds[port]
		for _, t := range turnsOnWire(c, a) {
			shares = append(shares, float64((t.agentStart-t.callerEnd-fixedEndpointing-providerDelays).Microseconds())/1000)
			ct := capturedTurn{wireTurn: t}
			// The engine's VAD's own end of that speech, if it found one near.
			i, _ := slices.BinarySearch(ends, t.callerEnd-time.Second)
			for ; i < len(ends) && ends[i] <= t.callerEnd+time.Second; i++ {
				if i+1 == len(ends) || ends[i+1] > t.callerEnd+time.Second || absDur(ends[i+1]-t.callerEnd) > absDur(ends[i]-t.callerEnd) {
					vadOffsets = append(vadOffsets, float64((ends[i]-t.callerEnd).Microseconds())/1000)
					ct.vadEnd = ends[i]
					break
				}
			}
			captured[port] = append(captured[port], ct)
		}
	}
	r.setSplit(splitTurns(captured, r.engine))
	r.WireTurns = len(shares)
	r.WireShareP50, r.WireShareP99 = percentile(shares, 50), percentile(shares, 99)
	r.VADOffsetP50, r.VADOffsetP99 = percentile(vadOffsets, 50), percentile(vadOffsets, 99)
	r.VADOffsetTurns = len(vadOffsets)
	if r.WireTurns < 200 {
		tb.Logf("only %d turns on the wire (want ≥ 200 for a p99): capture more calls or hold longer", r.WireTurns)
	}
}

// write saves the result as dir/calls-N.json.
func (r heldResult) write(tb testing.TB, dir string) {
	tb.Helper()
	r.CallsHeld = r.PeakLive
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("calls-%d.json", r.Calls))
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("wrote %s", path)
}

func (r heldResult) log(tb testing.TB) {
	tb.Logf("%d calls (%d in, %d out): %v live and %v legs at the peak, all up for %.0f s; failed: %d callers (SIPp), %d records",
		r.Calls, r.Inbound, r.Outbound, r.PeakLive, r.PeakLegs, r.AllUpSeconds, r.CallerFailed, r.ServerFailed)
	tb.Logf("server: %.2f ms CPU per call-second (whole server, engine on); RSS %.0f KiB per call (peak %.0f) over %.0f MiB idle; %.1f goroutines per call over %v idle",
		r.CPUPerCallS, r.RSSPerCallKiB, r.PeakRSSPerCallKiB, r.IdleRSS/(1<<20), r.GoroutinesPerCall, r.IdleGoroutines)
	tb.Logf("over the steady window the machine's CPUs were busy %.0f of %.0f s: the server %.0f s, everything else %.0f s",
		r.MachineBusySeconds, r.MachineSeconds, r.ServerCPUSeconds, r.MachineBusySeconds-r.ServerCPUSeconds)
	tb.Logf("rtpengine (userspace) relaying %d calls both ways for %.0f s, send phases spread over the 20 ms (busiest ms %.1f %% of the packets; 5 %% is even, 100 %% aligned): %.2f ms CPU per call-second, %d of %d packets relayed, machine busy %.0f of %.0f CPU-s; Parley / rtpengine = %.1f×",
		r.Relay.Calls, r.Relay.Seconds, r.Relay.BusiestMsPct, r.Relay.CPUPerCallS, r.Relay.Received, r.Relay.Sent, r.Relay.MachineBusySeconds, r.Relay.MachineSeconds, r.MediaCPURatio)
	tb.Logf("wire (%d calls captured, %d packets, %d dropped by the capture, dumpcap %.1f s CPU): agent frames %d, late %.3f%%, lost %.3f%%; caller (SIPp) frames %d, late %.3f%%, lost %.3f%%",
		r.CapturedCalls, r.CaptureReceived, r.CaptureDropped, r.DumpcapCPUSeconds, r.AgentFrames, r.AgentLatePct, r.AgentLostPct, r.CallerFrames, r.CallerLatePct, r.CallerLostPct)
	tb.Logf("the engine's VAD on the captured caller audio ends speech %.1f ms (p50), %.1f ms (p99) after the wire's last voiced packet, over %d turns",
		r.VADOffsetP50, r.VADOffsetP99, r.VADOffsetTurns)
	tb.Logf("turn on the wire less the old fixed %v: p50 %.1f ms, p99 %.1f ms over %d turns", fixedEndpointing+providerDelays, r.WireShareP50, r.WireShareP99, r.WireTurns)
	tb.Logf("turn on the wire split (%d turns matched to the engine's, %d not): the policy's wait p50 %.0f, p99 %.0f ms (%s); the rest (less the wait and %v of provider delays) p50 %.1f, p99 %.1f ms; its parts p50 / p99 ms: %s; Parley's own share (the rest less the providers' part) p50 %.1f, p99 %.1f ms",
		r.WireMatched, r.WireUnmatched, r.WireWaitP50, r.WireWaitP99, waitsText(r.WireWaits), providerDelays, r.WireRestP50, r.WireRestP99, restPartsText(r.WireRestParts), r.WireOwnP50, r.WireOwnP99)
	tb.Logf("engine (every record): first_audio less its wait and %v p50 %.1f ms, p99 %.1f ms over %d turns (waits %s); overhead_ms p50 %.1f, p99 %.1f",
		providerDelays, r.EngineShareP50, r.EngineShareP99, r.EngineTurns, waitsText(r.EngineWaits), r.EngineOverheadP50, r.EngineOverheadP99)
	if len(r.Profile) > 0 {
		tb.Logf("server profile at %.0f live calls (perf, self time; %s):\n  %s", r.ProfileLive, r.ProfileFile, strings.Join(r.Profile, "\n  "))
	} else {
		tb.Logf("no server profile: %s", r.ProfileError)
	}
	if len(r.Invalid) > 0 {
		tb.Logf("INVALID: %s", strings.Join(r.Invalid, "; "))
	}
	tb.Logf("load average before %s, after %s", r.LoadBefore, r.LoadAfter)
}

// heldTable is the runs as the markdown table docs/benchmarks.md shows.
func heldTable(rows []heldResult) string {
	var b strings.Builder
	b.WriteString("| calls | held | failed (SIPp / server) | CPU ms per call-s | rtpengine ms per call-s | ratio | RSS KiB per call (peak) | goroutines per call | late agent frames (SIPp's) | lost | policy's wait on the wire p50 / p99 (turns at each) | turn on the wire less the wait and provider delays p50 / p99 (turns matched) | Parley's own share on the wire p50 / p99 | engine's first_audio less the same p50 / p99 | overhead_ms p50 / p99 | machine busy (server) in the window |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b heldResult) int { return a.Calls - b.Calls })
	for _, r := range rows {
		if len(r.Invalid) > 0 {
			fmt.Fprintf(&b, "| %d (%d in, %d out) | INVALID: %s |\n", r.Calls, r.Inbound, r.Outbound, strings.Join(r.Invalid, "; "))
			continue
		}
		held := fmt.Sprintf("%.0f for %.0f s", r.PeakLive, r.AllUpSeconds)
		if !r.AllUp {
			held = fmt.Sprintf("not all up for half the hold: peak %.0f, ≥ 95 %% of it for %.0f s", r.PeakLive, r.AllUpSeconds)
		}
		fmt.Fprintf(&b, "| %d (%d in, %d out) | %s | %d / %d | %.2f | %.2f | %.1f× | %.0f (%.0f) | %.1f | %.3f %% (%.3f %%) | %.3f %% | %.0f / %.0f ms (%s) | %.1f / %.1f ms (%d of %d) | %.1f / %.1f ms | %.1f / %.1f ms | %.1f / %.1f ms | %.0f of %.0f CPU-s (%.0f) |\n",
			r.Calls, r.Inbound, r.Outbound, held, r.CallerFailed, r.ServerFailed, r.CPUPerCallS, r.Relay.CPUPerCallS, r.MediaCPURatio,
			r.RSSPerCallKiB, r.PeakRSSPerCallKiB, r.GoroutinesPerCall, r.AgentLatePct, r.CallerLatePct, r.AgentLostPct,
			r.WireWaitP50, r.WireWaitP99, waitsText(r.WireWaits), r.WireRestP50, r.WireRestP99, r.WireMatched, r.WireTurns, r.WireOwnP50, r.WireOwnP99, r.EngineShareP50, r.EngineShareP99, r.EngineOverheadP50, r.EngineOverheadP99,
			r.MachineBusySeconds, r.MachineSeconds, r.ServerCPUSeconds)
	}
	return b.String()
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// vadSpeechEnds runs the engine's VAD (defaults, 8 kHz) over each call's
// caller audio and returns, per call in time order, the capture time just
// after the last speech frame of each utterance it ended.
func vadSpeechEnds(pkts map[uint16][]rtpPacket, pcm map[uint16][][]int16) map[uint16][]time.Duration {
	out := map[uint16][]time.Duration{}
	for port, ps := range pkts {
		d := vad.New(vad.Config{Rate: 8000})
		var last time.Duration
		for i, p := range ps {
			f := d.Process(pcm[port][i])
			if f.Speech {
				last = p.at + frameDur
			}
			if f.End {
				out[port] = append(out[port], last)
			}
		}
	}
	return out
}
