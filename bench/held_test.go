package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/pipeline/vad"
	"github.com/parley-voice/parley/internal/siptest"
)

// heldConfig is the shape of a BenchmarkCallsHeld run, from the
// environment.
type heldConfig struct {
	sizes    []int         // PARLEY_BENCH_HELD_CALLS: concurrent calls, one run each (default 250,500,1000)
	hold     time.Duration // PARLEY_BENCH_HELD_HOLD: how long all of them are up at once (default 30s)
	rate     int           // PARLEY_BENCH_HELD_RATE: new calls per second while ramping up (default 50)
	outbound int           // PARLEY_BENCH_HELD_OUTBOUND: percent of the calls placed by Parley (POST /v1/calls) to a SIPp callee (default 20)
	nice     int           // PARLEY_BENCH_HELD_SIPP_NICE: SIPp's niceness (default 19; on a machine busy with other work at nice 0, 19 starves it)
	capture  int           // PARLEY_BENCH_HELD_CAPTURE: calls whose RTP is captured, about (default 100; 0: all)
	out      string        // PARLEY_BENCH_HELD_OUT: directory for calls-N.json (default results)
	keep     bool          // PARLEY_BENCH_HELD_KEEP_PCAP=1: keep the capture there too, as calls-N.pcap
}

func readHeldConfig(tb testing.TB) heldConfig {
	tb.Helper()
	c := heldConfig{sizes: []int{250, 500, 1000}, hold: 30 * time.Second, rate: 50, outbound: 20, nice: 19, capture: 100, out: "results"}
	bad := func(name string, err error) { tb.Fatalf("%s=%q: %v", name, os.Getenv(name), err) }
	if v := os.Getenv("PARLEY_BENCH_HELD_CALLS"); v != "" {
		c.sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				bad("PARLEY_BENCH_HELD_CALLS", fmt.Errorf("want a comma-separated list of positive counts"))
			}
			c.sizes = append(c.sizes, n)
		}
	}
	if v := os.Getenv("PARLEY_BENCH_HELD_HOLD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 5*time.Second {
			bad("PARLEY_BENCH_HELD_HOLD", fmt.Errorf("want a duration of at least 5s"))
		}
		c.hold = d
	}
	for name, p := range map[string]*int{"PARLEY_BENCH_HELD_RATE": &c.rate, "PARLEY_BENCH_HELD_CAPTURE": &c.capture, "PARLEY_BENCH_HELD_OUTBOUND": &c.outbound, "PARLEY_BENCH_HELD_SIPP_NICE": &c.nice} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || (n == 0 && p == &c.rate) || (n > 100 && p == &c.outbound) || (n > 19 && p == &c.nice) {
				bad(name, fmt.Errorf("want a count"))
			}
			*p = n
		}
	}
	if v := os.Getenv("PARLEY_BENCH_HELD_OUT"); v != "" {
		c.out = v
	}
	c.keep = os.Getenv("PARLEY_BENCH_HELD_KEEP_PCAP") == "1"
	return c
}

// providerDelays is the fixed part of every turn the fakes impose: the
// recognizer's final result, the model's first token, speech synthesis'
// first audio. The silence the turn-taking policy waits is per turn
// (endpointing_wait_ms in the engine's records): see turns_test.go.
const providerDelays = recognizeLag + modelDelay + speechDelay

// fixedEndpointing is the endpointing window the harness once subtracted
// from every turn, the VAD's fixed hangover before the end of turn became
// word-adaptive: kept for the wire_share figures, comparable with runs
// before the split.
const fixedEndpointing = vad.DefaultHangover

// BenchmarkCallsHeld measures, from the outside, what holding N concurrent
// calls costs (`make bench-calls`; see docs/benchmarks.md): for each N of
// PARLEY_BENCH_HELD_CALLS it starts a fresh server with the conversation
// engine on and fake providers, has SIPp (at nice 19) call its number N
// times with espeak speech and pauses, holds every call up for
// PARLEY_BENCH_HELD_HOLD, and captures the RTP of about
// PARLEY_BENCH_HELD_CAPTURE of the calls with dumpcap. From the capture it
// computes late and lost frames at the receiver and the platform's share
// of each turn on the wire; from /proc and /metrics the server's CPU per
// call-second, RSS (the window's median) and goroutines per call less the
// idle server's, and the calls held; and it profiles the server (perf) at
// each N's plateau, kept as calls-N.perf. Then rtpengine relays N streams
// of the same shape, their send phases spread over the 20 ms as SIPp's
// are, for the same time as the CPU baseline. It writes calls-N.json and
// prints a markdown table and each N's figures beside issue 32's goals. It
// fails when the server dies, and marks a run INVALID (and fails) when its
// figures would not mean what they say: not every call up for half the
// hold, a call failed on either side, no profile, packets the capture
// dropped, a saturated machine (heldResult.invalid). Goals missed are
// reported, not failed. Use -benchtime 1x.
func BenchmarkCallsHeld(b *testing.B) {
	siptest.RequireSipp(b)
	cfg := readHeldConfig(b)
	bin := buildParley(b)
	wav, loop, speech := speechWAV(b)
	b.Logf("caller audio: %v loop, %v of it speech; calls %v, all up for %v, ramp %d calls/s, RTP of ~%d calls captured (0: all)",
		loop.Round(time.Millisecond), speech.Round(time.Millisecond), cfg.sizes, cfg.hold, cfg.rate, cfg.capture)
	b.ResetTimer()
	for range b.N {
		var rows []heldResult
		for _, n := range cfg.sizes {
			r := runHeld(b, bin, wav, cfg, n)
			r.Relay = relayThroughRtpengine(b, n, cfg.hold, wav)
			if r.Relay.CPUPerCallS > 0 {
				r.MediaCPURatio = r.CPUPerCallS / r.Relay.CPUPerCallS
			}
			r.Invalid = r.invalid()
			r.write(b, cfg.out)
			r.log(b)
			if len(r.Invalid) > 0 {
				b.Errorf("%d calls: INVALID run, its figures mean nothing: %s", n, strings.Join(r.Invalid, "; "))
			}
			rows = append(rows, r)
		}
		fmt.Println(heldTable(rows))
		fmt.Println(heldSummary(rows))
	}
}

func runHeld(b *testing.B, bin string, wav []byte, cfg heldConfig, calls int) heldResult {
	b.StopTimer()
	res := heldResult{Calls: calls, HoldSeconds: cfg.hold.Seconds(), Date: time.Now().UTC().Format(time.RFC3339), LoadBefore: loadAvg()}
	// Below the kernel's ephemeral ports (32768 up), so no client socket
	// (SIPp's, the fakes') lands inside the captured range.
	const rtpLo = 20000
	outbound := calls * cfg.outbound / 100
	inbound := calls - outbound
	res.Inbound, res.Outbound = inbound, outbound
	ramp := time.Duration(calls) * time.Second / time.Duration(cfg.rate)
	perCall := cfg.hold + ramp + 3*time.Second
	holdKey := map[string]string{"hold": strconv.Itoa(int(perCall.Milliseconds())), "from": "+15550001000"}
	files := map[string][]byte{"speech.wav": wav}

	// The callees of the outbound calls: Parley's default trunk.
	var uas *siptest.Sipp
	var trunk []string
	if outbound > 0 {
		uas = siptest.UAS(b, "uas_talk", siptest.Options{Calls: outbound, Limit: outbound, Nice: cfg.nice, Keys: holdKey,
			Timeout: perCall + 2*ramp + 90*time.Second, Files: files})
		_, port, _ := strings.Cut(uas.Addr(), ":")
		trunk = []string{"--sip-trunk-host", "127.0.0.1", "--sip-trunk-port", port}
	}
	srv, _, agentID := startAgentServer(b, bin, calls, rtpLo, trunk...)
	pid := srv.pid()

	// The calls' RTP: a sample of the server's port range, as a kernel
	// filter. The server takes two ports per leg from the bottom of its
	// range up, so the lowest 2×capture ports are about capture calls.
	width := 4*calls + 200
	if cfg.capture > 0 && cfg.capture < calls {
		width = 2 * cfg.capture
	}
	pcap := ""
	if cfg.keep {
		if err := os.MkdirAll(cfg.out, 0o755); err != nil {
			b.Fatal(err)
		}
		pcap = filepath.Join(cfg.out, fmt.Sprintf("calls-%d.pcap", calls))
	}
	filter := fmt.Sprintf("udp and portrange %d-%d", rtpLo, rtpLo+width-1)
	if uas != nil { // and the callees' SIP, to see how an outbound call went
		_, port, _ := strings.Cut(uas.Addr(), ":")
		filter = fmt.Sprintf("udp and (portrange %d-%d or port %s)", rtpLo, rtpLo+width-1, port)
	}
	capt := startCapture(b, filter, pcap)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idle, err := srv.scrape(ctx)
	if err != nil {
		b.Fatal(err)
	}
	res.IdleRSS, res.IdleGoroutines = procRSS(pid), idle["go_goroutines"]

	// Poll the server while the calls run.
	type sample struct {
		at              time.Time
		legs, live, gor float64
		rss             float64
		cpu             time.Duration
		busy, all       float64 // the machine's CPU seconds, busy and in all
		allUp           bool
	}
	var (
		mu         sync.Mutex
		samples    []sample
		polledLive []float64 // samples' live calls
		profiling  bool      // a profile was started, and will be sent on profiled
	)
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		b.Fatal(err)
	}
	profilePath, _ := filepath.Abs(filepath.Join(cfg.out, fmt.Sprintf("calls-%d.perf", calls)))
	_ = os.Remove(profilePath) // a stale profile of an earlier run is no profile of this one
	profileFor := min(cfg.hold/2, 15*time.Second)
	// The profile starts at the plateau: once every call is up, or past
	// capacity once the ramp is over and the live calls stop rising (at
	// the latest a quarter of the hold later: the highest count reached).
	rampEnd := time.Now().Add(ramp + 2*time.Second)
	profiled := make(chan serverProfile, 1)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			m, err := srv.scrape(ctx)
			s := sample{at: time.Now(), cpu: procCPU(pid), rss: procRSS(pid)}
			s.busy, s.all = machineCPU()
			if err == nil {
				s.legs, s.live, s.gor = m["parley_sip_legs"], m["parley_calls_live"], m["go_goroutines"]
				s.allUp = s.legs >= float64(calls) && s.live >= float64(calls)
			}
			mu.Lock()
			samples = append(samples, s)
			polledLive = append(polledLive, s.live)
			now := s.at
			plateau := s.allUp || (now.After(rampEnd) && (atPlateau(polledLive) || now.After(rampEnd.Add(cfg.hold/4))))
			if plateau && !profiling && err == nil {
				profiling = true
				live := s.live
				go func() {
					p := profileServer(pid, profileFor, profilePath)
					p.Live = live
					profiled <- p
				}()
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	b.StartTimer()
	// The two sides ramp together, each at its share of the rate.
	var peers []*siptest.Sipp
	if inbound > 0 {
		peers = append(peers, siptest.UAC(b, "uac_talk", srv.sipAddr, siptest.Options{
			Calls: inbound, Limit: inbound, Rate: max(cfg.rate*inbound/calls, 1), Service: agentNumber, Nice: cfg.nice,
			Keys: holdKey, Timeout: perCall + ramp + 60*time.Second, Files: files,
		}))
	}
	placed := make(chan error, 1)
	go func() { placed <- placeCalls(ctx, srv, agentID, outbound, max(cfg.rate*outbound/calls, 1)) }()
	if outbound > 0 {
		peers = append(peers, uas)
	}
	sippDone := make(chan error, 1)
	go func() {
		var errs []error
		for _, p := range peers {
			if err := p.Wait(); err != nil {
				errs = append(errs, err)
			}
		}
		sippDone <- errors.Join(errs...)
	}()
	var sippErr error
	select {
	case sippErr = <-sippDone:
	case <-srv.exited:
		b.Fatalf("parley serve died during the run (%v):\n%s", srv.exitErr, crashReport(srv))
	}
	b.StopTimer()
	if err := <-placed; err != nil {
		b.Fatalf("placing the outbound calls: %v", err)
	}
	for _, p := range peers {
		ok, failed, _ := p.Counts()
		res.CallerOK += ok
		res.CallerFailed += failed
	}
	if c := srv.Crashed(); c != "" || srv.Exited() {
		b.Fatalf("parley serve crashed (exited: %v):\n%s", srv.Exited(), crashReport(srv))
	}
	// A call SIPp failed fails the run once the records say how it ended.
	sippFailed := sippErr != nil || res.CallerFailed != 0 || res.CallerOK != calls
	if sippErr != nil {
		res.SippError = tail(sippErr.Error(), 3000)
	}
	if sippFailed {
		b.Logf("calls failed on SIPp's side: it counted %d successful, %d failed of %d (%v)", res.CallerOK, res.CallerFailed, calls, tail(fmt.Sprint(sippErr), 3000))
	}
	received, dropped, dumpcapCPU := capt.stop(b)
	res.CaptureReceived, res.CaptureDropped, res.DumpcapCPUSeconds = received, dropped, dumpcapCPU.Seconds()
	cancel()
	<-polled
	if profiling {
		p := <-profiled
		res.Profile, res.ProfileError, res.ProfileLive = p.Top, p.Err, p.Live
		if p.Err == "" {
			res.ProfileFile = p.File
		}
	} else {
		res.ProfileError = "no plateau was reached while the calls were up"
	}

	// The steady window: every call up, by the polls.
	var first, last *sample
	var rssUp, gorUp []float64
	for i := range samples {
		s := &samples[i]
		res.PeakLive = max(res.PeakLive, s.live)
		res.PeakLegs = max(res.PeakLegs, s.legs)
		if !s.allUp {
			continue
		}
		if first == nil {
			first = s
		}
		last = s
		rssUp, gorUp = append(rssUp, s.rss), append(gorUp, s.gor)
	}
	// All up for a moment is not held: a starved machine brings the last
	// calls up as the first ones hang up.
	res.AllUp = first != nil && last.at.Sub(first.at) >= cfg.hold/2
	up := float64(calls) // calls up over the window, the per-call figures' divisor
	if !res.AllUp {
		// Past the machine's capacity: report the plateau (polls at 95 % of
		// the peak or more) rather than nothing, so the row says how many
		// calls the machine held and at what cost; the run still fails if
		// calls failed.
		b.Logf("the %d calls were not all up together for half the hold (peak %v legs, %v live): reporting the plateau at 95 %% of the peak", calls, res.PeakLegs, res.PeakLive)
		first, last, rssUp, gorUp = nil, nil, nil, nil
		var lives []float64
		for i := range samples {
			s := &samples[i]
			if s.live < 0.95*res.PeakLive {
				continue
			}
			if first == nil {
				first = s
			}
			last = s
			rssUp, gorUp, lives = append(rssUp, s.rss), append(gorUp, s.gor), append(lives, s.live)
		}
		if first == nil || last == first {
			b.Fatalf("no plateau of live calls to measure (peak %v live)", res.PeakLive)
		}
		up = percentile(lives, 50)
	}
	res.AllUpSeconds = last.at.Sub(first.at).Seconds()
	res.CPUPerCallS = (last.cpu - first.cpu).Seconds() * 1000 / (up * res.AllUpSeconds)
	res.ServerCPUSeconds = (last.cpu - first.cpu).Seconds()
	res.MachineBusySeconds, res.MachineSeconds = last.busy-first.busy, last.all-first.all
	res.RSSPerCallKiB = (percentile(rssUp, 50) - res.IdleRSS) / 1024 / up
	res.PeakRSSPerCallKiB = (procStatusKB(pid, "VmHWM:")*1024 - res.IdleRSS) / 1024 / up
	res.GoroutinesPerCall = (percentile(gorUp, 50) - res.IdleGoroutines) / up

	// Every call ends COMPLETED on the server's side.
	waited := time.Now()
	deadline := waited.Add(2 * time.Minute)
	var records []map[string]any
	for {
		records = srv.calls()
		ended := 0
		for _, c := range records {
			if c["endedAt"] != nil {
				ended++
			}
		}
		if len(records) == calls && ended == calls {
			break
		}
		// Calls SIPp failed may never have reached the server: once the
		// records it has are all ended, they are all there will be.
		if sippFailed && ended == len(records) && time.Since(waited) > 10*time.Second {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("2 minutes after the callers hung up: %d records, %d ended, want %d", len(records), ended, calls)
		}
		time.Sleep(500 * time.Millisecond)
	}
	var engineFirst, engineOverhead, engineWaits []float64
	directions := map[any]int{}
	causes := map[string]int{} // direction, status and hangup cause: how many calls ended so
	for _, c := range records {
		directions[c["direction"]]++
		if c["status"] != "COMPLETED" {
			if res.ServerFailed++; res.ServerFailed <= 3 {
				b.Logf("call %v %v: %v %v: %v", c["id"], c["direction"], c["status"], c["hangupCause"], c["errorMessage"])
			}
		}
		causes[fmt.Sprintf("%v %v %v", c["direction"], c["status"], c["hangupCause"])]++
		m, _ := c["metrics"].(map[string]any)
		turns, _ := m["turn_latency"].([]any)
		for _, t := range turns {
			t, _ := t.(map[string]any)
			fa, _ := t["first_audio_ms"].(float64)
			oh, _ := t["overhead_ms"].(float64)
			wait, _ := t["endpointing_wait_ms"].(float64)
			engineFirst = append(engineFirst, fa-wait)
			engineOverhead = append(engineOverhead, oh)
			engineWaits = append(engineWaits, wait)
		}
	}
	res.Records = len(records)
	if directions["INBOUND"] != inbound || directions["OUTBOUND"] != outbound {
		res.RecordsAmiss = fmt.Sprintf("records by direction %v, want %d INBOUND and %d OUTBOUND", directions, inbound, outbound)
	}
	b.Logf("calls by how they ended: %v", causes)
	res.EngineTurns = len(engineFirst)
	ms := float64(providerDelays.Milliseconds())
	res.EngineShareP50, res.EngineShareP99 = percentile(engineFirst, 50)-ms, percentile(engineFirst, 99)-ms
	res.EngineOverheadP50, res.EngineOverheadP99 = percentile(engineOverhead, 50), percentile(engineOverhead, 99)
	res.EngineWaits = countWaits(engineWaits)
	res.engine = engineTurns(srv.Log())

	if err := srv.stop(60 * time.Second); err != nil {
		b.Errorf("parley serve after SIGTERM: %v\n%s", err, tail(srv.Log(), 4000))
	}
	if c := srv.Crashed(); c != "" {
		b.Fatalf("parley serve crashed:\n%s", c)
	}
	res.analyze(b, capt.path, rtpLo, rtpLo+width-1)
	res.LoadAfter = loadAvg()
	return res
}

// placeCalls asks the server for n outbound calls from the agent, rate a
// second (POST /v1/calls), and returns the first refusal.
func placeCalls(ctx context.Context, srv *server, agentID string, n, rate int) error {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := range n {
		body, _ := json.Marshal(map[string]any{"agentId": agentID, "fromNumber": agentNumber, "toNumber": fmt.Sprintf("+1555020%04d", i)})
		req, err := http.NewRequestWithContext(ctx, "POST", srv.api+"/v1/calls", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("x-api-key", srv.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.client.Do(req)
		if err != nil {
			return err
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("POST /v1/calls = %d: %s", resp.StatusCode, msg)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
