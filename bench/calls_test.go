package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/stt/deepgram/deepgramtest"
	"github.com/parley-voice/parley/internal/provider/tts/openai/openaitest"
	"github.com/parley-voice/parley/internal/siptest"
)

// loadConfig is a run's shape, from the environment.
type loadConfig struct {
	calls int           // PARLEY_BENCH_LOAD_CALLS: concurrent calls (default 300)
	hold  time.Duration // PARLEY_BENCH_LOAD_HOLD: how long all of them are up at once (default 60s)
	rate  int           // PARLEY_BENCH_LOAD_RATE: new calls per second while ramping up (default 20)
}

func readLoadConfig(tb testing.TB) loadConfig {
	tb.Helper()
	c := loadConfig{calls: 300, hold: 60 * time.Second, rate: 20}
	positive := func(name string, set func(string) error) {
		if v := os.Getenv(name); v != "" {
			if err := set(v); err != nil {
				tb.Fatalf("%s=%q: %v", name, v, err)
			}
		}
	}
	positive("PARLEY_BENCH_LOAD_CALLS", func(v string) (err error) {
		c.calls, err = strconv.Atoi(v)
		if err == nil && c.calls < 1 {
			err = fmt.Errorf("want at least 1")
		}
		return err
	})
	positive("PARLEY_BENCH_LOAD_HOLD", func(v string) (err error) {
		c.hold, err = time.ParseDuration(v)
		if err == nil && c.hold < time.Second {
			err = fmt.Errorf("want at least 1s")
		}
		return err
	})
	positive("PARLEY_BENCH_LOAD_RATE", func(v string) (err error) {
		c.rate, err = strconv.Atoi(v)
		if err == nil && c.rate < 1 {
			err = fmt.Errorf("want at least 1")
		}
		return err
	})
	return c
}

// The agent's side of every conversation.
const (
	agentNumber  = "+15550100300"
	greeting     = "Luigi's restaurant, how can I help you?"
	agentReply   = "Certainly, a table for four tonight. Would you like a quiet corner?"
	callSummary  = "A caller booked a quiet table for four tonight."
	heardCaller  = "I would like to book a table for four tonight."
	modelDelay   = 200 * time.Millisecond // the model's time to first token
	speechDelay  = 100 * time.Millisecond // speech synthesis' time to first audio
	recognizeLag = 50 * time.Millisecond  // the recognizer's final result after Finalize
)

// metricKeys are the metrics every ended call reports.
var metricKeys = []string{"llm_prompt_tokens", "llm_completion_tokens", "llm_prompt_cached_tokens", "llm_input_audio_tokens",
	"llm_output_audio_tokens", "stt_audio_duration", "tts_audio_duration", "tts_characters_count",
	"turn_latency", "interruption_stop_ms", "knowledge_retrievals"}

// BenchmarkCallsWithAudio holds PARLEY_BENCH_LOAD_CALLS (300) SIPp calls
// with speech both ways for PARLEY_BENCH_LOAD_HOLD (60 s) against the real
// binary with the conversation engine on, and reports what it cost. It
// fails on a crash, a failed call, fewer calls up at once than asked, a
// record without its post-call outcome, or legs and live calls left over.
// Each iteration is a whole run on a fresh server: use -benchtime 1x.
func BenchmarkCallsWithAudio(b *testing.B) {
	siptest.RequireSipp(b)
	cfg := readLoadConfig(b)
	bin := buildParley(b)
	wav, loop, speech := speechWAV(b)
	b.Logf("caller audio: %v loop, %v of it speech; %d calls, all up for %v, ramp %d calls/s", loop.Round(time.Millisecond),
		speech.Round(time.Millisecond), cfg.calls, cfg.hold, cfg.rate)
	b.ResetTimer()
	for range b.N {
		r := runLoad(b, bin, wav, cfg)
		r.report(b)
	}
}

// loadResult is what one run measured.
type loadResult struct {
	cfg                     loadConfig
	peakLegs, peakLive      float64
	allUp                   time.Duration // how long every call was up at once (as polled)
	sippOK, sippFailed      int
	records                 int
	callSeconds             float64 // the calls' durations, summed
	cpu                     float64 // server CPU seconds over the run (process_cpu_seconds_total)
	peakRSS                 float64 // bytes, VmHWM
	baseGoroutines, peakGor float64
	endGoroutines           float64
	turns, interruptions    float64 // from the Prometheus counts
	firstAudio, overhead    []float64
	stopMs                  []float64
	answerMs                []float64     // INVITE admitted (createdAt) to answered (startedAt)
	benchCPU                time.Duration // this process (the fakes, the poller) over the run
	sippCPU                 time.Duration // sipp, the callers
	machineBusy, machineAll float64       // CPU seconds the machine was busy and had, over the run
	wall                    time.Duration // from the first INVITE to the last record settled
	loadBefore, loadAfter   string
}

func runLoad(b *testing.B, bin string, wav []byte, cfg loadConfig) loadResult {
	b.StopTimer()
	res := loadResult{cfg: cfg, loadBefore: loadAvg()}

	rtpLo := 42000
	srv, hooks, _ := startAgentServer(b, bin, cfg.calls, rtpLo)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before, err := srv.scrape(ctx)
	if err != nil {
		b.Fatal(err)
	}
	res.baseGoroutines = before["go_goroutines"]
	var ruBefore, kidsBefore syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ruBefore)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kidsBefore) // sipp counts once waited for
	busyBefore, allBefore := machineCPU()
	began := time.Now()

	// Poll the server while the calls run.
	type sample struct {
		at                        time.Time
		legs, live, gor, rss, cpu float64
	}
	var (
		pollMu  sync.Mutex
		samples []sample
		pollErr error
	)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			m, err := srv.scrape(ctx)
			pollMu.Lock()
			if err == nil {
				samples = append(samples, sample{time.Now(), m["parley_sip_legs"], m["parley_calls_live"], m["go_goroutines"],
					m["process_resident_memory_bytes"], m["process_cpu_seconds_total"]})
			} else if ctx.Err() == nil && pollErr == nil {
				pollErr = err
			}
			pollMu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	stopPolling := func() { cancel(); <-polled }
	defer stopPolling()

	// The callers: all up within the ramp, then each holds long enough that
	// all of them are up together for cfg.hold.
	ramp := time.Duration(cfg.calls) * time.Second / time.Duration(cfg.rate)
	perCall := cfg.hold + ramp + 3*time.Second
	b.StartTimer()
	uac := siptest.UAC(b, "uac_talk", srv.sipAddr, siptest.Options{
		Calls: cfg.calls, Limit: cfg.calls, Rate: cfg.rate, Service: agentNumber,
		Keys:    map[string]string{"hold": strconv.Itoa(int(perCall.Milliseconds())), "from": "+15550001000"},
		Timeout: perCall + ramp + 60*time.Second,
		Files:   map[string][]byte{"speech.wav": wav},
	})
	sippDone := make(chan error, 1)
	go func() { sippDone <- uac.Wait() }()
	var sippErr error
	select {
	case sippErr = <-sippDone:
	case <-srv.exited:
		b.Fatalf("parley serve died during the run (%v):\n%s", srv.exitErr, crashReport(srv))
	}
	b.StopTimer()
	res.sippOK, res.sippFailed, _ = uac.Counts()
	if sippErr != nil {
		b.Errorf("sipp: %v (sipp counted %d successful, %d failed calls)", sippErr, res.sippOK, res.sippFailed)
	}
	if c := srv.Crashed(); c != "" || srv.Exited() {
		b.Fatalf("parley serve crashed (exited: %v):\n%s", srv.Exited(), crashReport(srv))
	}

	// Every call ends with its post-call outcome; legs and live calls go
	// back to zero.
	deadline := time.Now().Add(2 * time.Minute)
	var records []map[string]any
	for {
		records = srv.calls()
		final, sent := 0, 0
		for _, c := range records {
			if c["endedAt"] != nil {
				final++
			}
			if c["postCallWebhookStatus"] == "sent" {
				sent++
			}
		}
		m, err := srv.scrape(context.Background())
		if err == nil && len(records) == cfg.calls && final == cfg.calls && sent == cfg.calls &&
			hooks.count() == cfg.calls && m["parley_sip_legs"] == 0 && m["parley_calls_live"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("2 minutes after the callers hung up: %d records, %d ended, %d webhooks sent (%d received), legs %v, live %v (%v)",
				len(records), final, sent, hooks.count(), m["parley_sip_legs"], m["parley_calls_live"], err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	after, err := srv.scrape(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var ruAfter, kidsAfter syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ruAfter)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kidsAfter)
	busyAfter, allAfter := machineCPU()
	res.wall = time.Since(began)
	res.benchCPU = cpuTime(ruAfter) - cpuTime(ruBefore)
	res.sippCPU = cpuTime(kidsAfter) - cpuTime(kidsBefore)
	res.machineBusy, res.machineAll = busyAfter-busyBefore, allAfter-allBefore
	res.cpu = after["process_cpu_seconds_total"] - before["process_cpu_seconds_total"]
	res.peakRSS = peakRSS(srv.pid())
	res.turns = after[`parley_turn_latency_seconds_count{stage="first_audio"}`]
	res.interruptions = after["parley_interruption_stop_seconds_count"]
	res.endGoroutines = after["go_goroutines"]
	stopPolling()
	pollMu.Lock()
	if pollErr != nil {
		b.Errorf("polling /metrics: %v", pollErr)
	}
	var upSince time.Time
	for _, s := range samples {
		res.peakLegs = max(res.peakLegs, s.legs)
		res.peakLive = max(res.peakLive, s.live)
		res.peakGor = max(res.peakGor, s.gor)
		res.peakRSS = max(res.peakRSS, s.rss)
		if s.legs >= float64(cfg.calls) && s.live >= float64(cfg.calls) {
			if upSince.IsZero() {
				upSince = s.at
			}
			res.allUp = max(res.allUp, s.at.Sub(upSince))
		} else {
			upSince = time.Time{}
		}
	}
	pollMu.Unlock()

	// The records, one by one.
	res.records = len(records)
	bad := 0
	for _, c := range records {
		var problems []string
		if c["direction"] != "INBOUND" || c["status"] != "COMPLETED" || c["hangupCause"] != "USER_ENDED" {
			problems = append(problems, fmt.Sprintf("%v %v %v (%v)", c["direction"], c["status"], c["hangupCause"], c["errorMessage"]))
		}
		if c["summary"] != callSummary {
			problems = append(problems, fmt.Sprintf("summary %q", c["summary"]))
		}
		m, _ := c["metrics"].(map[string]any)
		for _, k := range metricKeys {
			if _, ok := m[k]; !ok {
				problems = append(problems, "no metrics."+k)
			}
		}
		if sent := hooks.got(fmt.Sprint(c["id"])); sent == nil || sent["summary"] != callSummary || sent["status"] != c["status"] {
			problems = append(problems, "post-call webhook not as recorded")
		}
		if created, started, ok := times(c["createdAt"], c["startedAt"]); ok {
			res.answerMs = append(res.answerMs, float64(started.Sub(created).Microseconds())/1000)
		}
		d, _ := c["durationSeconds"].(float64)
		res.callSeconds += d
		turns, _ := m["turn_latency"].([]any)
		for _, t := range turns {
			t, _ := t.(map[string]any)
			fa, _ := t["first_audio_ms"].(float64)
			oh, _ := t["overhead_ms"].(float64)
			res.firstAudio = append(res.firstAudio, fa)
			res.overhead = append(res.overhead, oh)
		}
		stops, _ := m["interruption_stop_ms"].([]any)
		for _, s := range stops {
			v, _ := s.(float64)
			res.stopMs = append(res.stopMs, v)
		}
		if len(problems) > 0 {
			if bad++; bad <= 10 {
				b.Errorf("call %v: %s", c["id"], strings.Join(problems, "; "))
			}
		}
	}
	if bad > 10 {
		b.Errorf("... %d calls in all had problems", bad)
	}
	if len(records) != cfg.calls {
		b.Errorf("%d call records, want %d", len(records), cfg.calls)
	}
	if res.peakLegs < float64(cfg.calls) || res.peakLive < float64(cfg.calls) {
		b.Errorf("at most %v legs and %v live calls were up at once, want %d", res.peakLegs, res.peakLive, cfg.calls)
	}
	if res.allUp < cfg.hold-time.Second {
		b.Errorf("all %d calls were up together for %v, want %v", cfg.calls, res.allUp, cfg.hold)
	}
	if res.sippOK != cfg.calls || res.sippFailed != 0 {
		b.Errorf("sipp counted %d successful and %d failed calls, want %d and 0", res.sippOK, res.sippFailed, cfg.calls)
	}
	if res.turns == 0 || res.interruptions == 0 {
		b.Errorf("%v turns answered and %v interruptions: the conversations did not run", res.turns, res.interruptions)
	}

	// A clean stop, and still no crash in the log.
	if err := srv.stop(60 * time.Second); err != nil {
		b.Errorf("parley serve after SIGTERM: %v\n%s", err, tail(srv.Log(), 4000))
	}
	if c := srv.Crashed(); c != "" {
		b.Fatalf("parley serve crashed:\n%s", c)
	}
	res.loadAfter = loadAvg()
	return res
}

// startAgentServer starts the binary with the conversation engine on and
// its providers behind the loopback fakes (the delays above), RTP on ports
// from rtpLo (two per leg), room for calls legs, and one agent answering
// agentNumber whose post-call webhooks go to the returned receiver; it
// returns the agent's id too, for outbound calls.
func startAgentServer(b *testing.B, bin string, calls, rtpLo int, args ...string) (*server, *receiver, string) {
	llm := llmtest.New(b, func(r llmtest.Request) llmtest.Reply {
		if system, _ := r.Messages[0]["content"].(string); strings.HasPrefix(system, "Summarize") {
			return llmtest.Reply{Text: []string{callSummary}}
		}
		return llmtest.Reply{Delay: modelDelay, Text: []string{"Certainly, ", "a table for four tonight. ", "Would you like ", "a quiet corner?"}}
	})
	stt := deepgramtest.New(b, deepgramtest.Options{
		FinalDelay: recognizeLag,
		Transcript: func(deepgramtest.StreamInfo) string { return heardCaller },
	})
	var voiced sync.Map // input text -> its audio, made once: the fake's tone costs the fake, not Parley
	speechFake := openaitest.New(b, func(r openaitest.Request) openaitest.Reply {
		pcm, ok := voiced.Load(r.Input)
		if !ok {
			pcm, _ = voiced.LoadOrStore(r.Input, openaitest.Speech(r.Input))
		}
		return openaitest.Reply{Delay: speechDelay, PCM: pcm.([]int16)}
	})
	hooks := newReceiver(b)

	// Two RTP ports per leg, from a range of our own; legs over the limit get 503.
	// SIPp ramps every call from 127.0.0.1, as a carrier's SBC sends a
	// trunk's: exempt that source from the per-source INVITE limit, as an
	// operator exempts the SBC, and only it.
	srv := startServer(b, bin, append([]string{
		"--allow-private-webhooks", "--sip-max-dialogs", strconv.Itoa(calls + 50), "--sip-invite-exempt", "127.0.0.1",
		"--rtp-ports", fmt.Sprintf("%d-%d", rtpLo, rtpLo+4*calls+200),
		"--llm-base-url", llm.URL, "--llm-api-key", "bench-key", "--llm-model", "fake-model",
		"--stt", "deepgram", "--deepgram-api-key", deepgramtest.DefaultAPIKey, "--deepgram-base-url", stt.URL,
		"--tts", "openai", "--openai-base-url", speechFake.URL, "--openai-api-key", "bench-key"}, args...)...)
	srv.do("PATCH", "/v1/organization", map[string]any{"concurrencyLimit": calls + 10}, 200, nil)
	var agent struct{ Data map[string]any }
	srv.do("POST", "/v1/agents", map[string]any{"name": "Front desk", "promptTemplate": "You are the front desk of Luigi's restaurant.",
		"firstMessage": greeting, "firstMessageMode": "static", "postCallWebhookUrl": hooks.URL}, 201, &agent)
	srv.do("POST", "/v1/phone-numbers", map[string]any{"e164": agentNumber, "agentId": agent.Data["id"]}, 201, nil)

	return srv, hooks, fmt.Sprint(agent.Data["id"])
}

// crashReport is the panic and its stack from the server's log, or the
// log's end; the whole log goes to a file that outlives the run.
func crashReport(s *server) string {
	f, err := os.CreateTemp("", "parley-bench-load-*.log")
	where := ""
	if err == nil {
		_, _ = f.WriteString(s.Log())
		_ = f.Close()
		where = "\n(the whole server log: " + f.Name() + ")"
	}
	if c := s.Crashed(); c != "" {
		return c + where
	}
	return tail(s.Log(), 8000) + where
}

func (r loadResult) report(b *testing.B) {
	perCallSecond := 0.0
	if r.callSeconds > 0 {
		perCallSecond = r.cpu / r.callSeconds
	}
	b.ReportMetric(r.peakLegs, "calls_up")
	b.ReportMetric(r.allUp.Seconds(), "s_all_up")
	b.ReportMetric(float64(r.sippFailed), "failed")
	b.ReportMetric(r.cpu, "cpu_s")
	b.ReportMetric(perCallSecond*1000, "cpu_ms/call_s")
	b.ReportMetric(r.peakRSS/(1<<20), "peak_rss_MiB")
	b.ReportMetric(r.peakGor, "peak_goroutines")
	b.ReportMetric(r.turns, "turns")
	b.ReportMetric(r.interruptions, "interruptions")
	b.ReportMetric(percentile(r.firstAudio, 50), "first_audio_p50_ms")
	b.ReportMetric(percentile(r.firstAudio, 99), "first_audio_p99_ms")
	b.ReportMetric(percentile(r.overhead, 50), "overhead_p50_ms")
	b.ReportMetric(percentile(r.overhead, 99), "overhead_p99_ms")
	b.ReportMetric(percentile(r.stopMs, 99), "stop_p99_ms")
	b.ReportMetric(percentile(r.answerMs, 99), "answer_p99_ms")
	b.ReportMetric(0, "ns/op")
	b.Logf("%d calls (ramp %d/s): %v legs and %v live calls at the peak, all %d up together for %v (polled every 250 ms); sipp: %d successful, %d failed",
		r.cfg.calls, r.cfg.rate, r.peakLegs, r.peakLive, r.cfg.calls, r.allUp.Round(time.Second), r.sippOK, r.sippFailed)
	b.Logf("records: %d, every one COMPLETED/USER_ENDED with its summary, metrics and post-call webhook; %.0f call-seconds; answered after the INVITE (createdAt to startedAt) p50 %.0f ms, p99 %.0f ms, max %.0f ms",
		r.records, r.callSeconds, percentile(r.answerMs, 50), percentile(r.answerMs, 99), percentile(r.answerMs, 100))
	b.Logf("server CPU %.1f s over the run = %.2f ms per call-second (%.1f%% of a core per call); peak RSS %.0f MiB; goroutines %v before, %v at the peak, %v after",
		r.cpu, perCallSecond*1000, perCallSecond*100, r.peakRSS/(1<<20), r.baseGoroutines, r.peakGor, r.endGoroutines)
	b.Logf("turns answered %v, interruptions %v; first audio after the caller's speech p50 %.0f ms, p99 %.0f ms (providers: model %v, speech %v, recognizer %v; endpointing 300 ms); Parley's overhead p50 %.1f ms, p99 %.1f ms, max %.1f ms; interruption stop p50 %.3f ms, p99 %.3f ms",
		r.turns, r.interruptions, percentile(r.firstAudio, 50), percentile(r.firstAudio, 99), modelDelay, speechDelay, recognizeLag,
		percentile(r.overhead, 50), percentile(r.overhead, 99), percentile(r.overhead, 100), percentile(r.stopMs, 50), percentile(r.stopMs, 99))
	b.Logf("over the run's %v: the machine's CPUs were busy %.0f of %.0f s; Parley %.1f s, sipp %.1f s, the fakes and poller (this process) %.1f s, everything else %.1f s; load average before %s, after %s",
		r.wall.Round(time.Second), r.machineBusy, r.machineAll, r.cpu, r.sippCPU.Seconds(), r.benchCPU.Seconds(),
		r.machineBusy-r.cpu-r.sippCPU.Seconds()-r.benchCPU.Seconds(), r.loadBefore, r.loadAfter)
}

// times parses two of a record's timestamps.
func times(a, b any) (time.Time, time.Time, bool) {
	as, _ := a.(string)
	bs, _ := b.(string)
	ta, errA := time.Parse(time.RFC3339Nano, as)
	tb, errB := time.Parse(time.RFC3339Nano, bs)
	return ta, tb, errA == nil && errB == nil
}

func cpuTime(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// machineCPU is /proc/stat's CPU time in seconds, all CPUs: busy (neither
// idle nor waiting for I/O) and in all; zeros when /proc does not say.
func machineCPU() (busy, all float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	const userHZ = 100 // the kernel's USER_HZ on Linux
	for i, v := range f[1:] {
		n, _ := strconv.ParseFloat(v, 64)
		if i >= 8 { // guest time is already counted in user
			break
		}
		all += n / userHZ
		if i != 3 && i != 4 { // idle, iowait
			busy += n / userHZ
		}
	}
	return busy, all
}

// percentile is the p-th percentile (nearest rank) of xs; NaN when empty.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// loadAvg is /proc/loadavg's first three fields: what else the machine ran.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// receiver records post-call webhook deliveries by call id.
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	calls map[string]map[string]any
}

func newReceiver(tb testing.TB) *receiver {
	r := &receiver{calls: map[string]map[string]any{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var rec map[string]any
		if err := json.NewDecoder(req.Body).Decode(&rec); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.calls[fmt.Sprint(rec["id"])] = rec
		r.mu.Unlock()
	}))
	tb.Cleanup(r.Close)
	return r
}

func (r *receiver) got(id string) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[id]
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}
