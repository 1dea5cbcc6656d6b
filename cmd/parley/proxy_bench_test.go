package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
	"github.com/parley-voice/parley/internal/siptest"
)

// BenchmarkServersBehindKamailio measures what a call costs a server, for
// sizing (docs/operations.md, "Several servers behind a SIP proxy"): the
// proxy rig's two servers take PARLEY_BENCH_PROXY_CALLS (default 20)
// talking calls through Kamailio, each caller looping two spoken lines
// (espeak-ng) that the server recognizes (local pocketsphinx) and answers
// (the model says a short line, espeak-ng speaks it), and hold them
// PARLEY_BENCH_PROXY_HOLD (default 30 s). Each server's CPU and resident
// memory are read from its /metrics (process_cpu_seconds_total,
// process_resident_memory_bytes) idle and then over the time all calls
// are up. Run with -benchtime 1x.
func BenchmarkServersBehindKamailio(b *testing.B) {
	calls := envInt(b, "PARLEY_BENCH_PROXY_CALLS", 20)
	hold := 30 * time.Second
	if v := os.Getenv("PARLEY_BENCH_PROXY_HOLD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		hold = d
	}
	wav := callerSpeech(b)
	var cpuPerCallSecond, rssPerCall, legs float64
	for b.Loop() {
		r := startProxyRig(b, func(req llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Text: []string{"Certainly, one moment."}}
		})
		type sample struct{ cpu, rss, legs float64 }
		read := func(n *node) sample {
			m := scrape(b, "http://"+n.srv.addr+"/metrics")
			return sample{m["process_cpu_seconds_total"], m["process_resident_memory_bytes"], m["parley_sip_legs"]}
		}
		// Idle: what a server costs with no call, over 10 s.
		idle, idleEnd := map[string]sample{}, map[string]sample{}
		for _, n := range r.nodes {
			idle[n.name] = read(n)
		}
		idleFrom := time.Now()
		time.Sleep(10 * time.Second)
		idleFor := time.Since(idleFrom).Seconds()
		for _, n := range r.nodes {
			idleEnd[n.name] = read(n)
		}
		// The ramp: 10 calls a second; the window starts once all are up.
		ramp := time.Duration(calls/10+1) * time.Second
		talk := siptest.UAC(b, "uac_talk", r.proxy.Addr(), siptest.Options{Service: "+14155559999", Calls: calls, Limit: calls, Rate: 10,
			Timeout: ramp + hold + time.Minute, Nice: 10, Files: map[string][]byte{"speech.wav": wav},
			Keys: map[string]string{"from": "+14155558888", "hold": strconv.Itoa(int((ramp + hold).Milliseconds()))}})
		deadline := time.Now().Add(ramp + 30*time.Second)
		for {
			up := 0.0
			for _, n := range r.nodes {
				up += read(n).legs
			}
			if int(up) == calls {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%v of %d calls up", up, calls)
			}
			time.Sleep(100 * time.Millisecond)
		}
		from := map[string]sample{}
		for _, n := range r.nodes {
			from[n.name] = read(n)
		}
		began := time.Now()
		window := hold - 5*time.Second // ends before the first caller hangs up
		time.Sleep(window)
		elapsed := time.Since(began).Seconds()
		for _, n := range r.nodes {
			to := read(n)
			f := from[n.name]
			if to.legs != f.legs || f.legs == 0 {
				b.Fatalf("server %s held %v then %v calls in the window", n.name, f.legs, to.legs)
			}
			idleRate := (idleEnd[n.name].cpu - idle[n.name].cpu) / idleFor // CPU-s per s
			cps := ((to.cpu-f.cpu)/elapsed - idleRate) / f.legs * 1000
			rss := (to.rss - idleEnd[n.name].rss) / f.legs / 1024
			b.Logf("server %s: %v calls, %.2f ms CPU per call-second above idle (idle %.1f%% of a core, with the calls %.1f%%), RSS %.0f MiB idle, %.0f MiB with the calls (%.0f KiB a call); load average %s",
				n.name, f.legs, cps, idleRate*100, (to.cpu-f.cpu)/elapsed*100, idleEnd[n.name].rss/(1<<20), to.rss/(1<<20), rss, loadAverage())
			cpuPerCallSecond = max(cpuPerCallSecond, cps)
			rssPerCall = max(rssPerCall, rss)
			legs += f.legs
		}
		if err := talk.Wait(); err != nil {
			b.Fatalf("callers: %v", err)
		}
	}
	b.ReportMetric(cpuPerCallSecond, "cpu-ms/call-s")
	b.ReportMetric(rssPerCall, "rss-KiB/call")
	b.ReportMetric(legs/float64(b.N), "calls")
}

// callerSpeech is two spoken lines and pauses (espeak-ng at 8 kHz) as the
// μ-law WAV uac_talk loops.
func callerSpeech(tb testing.TB) []byte {
	tb.Helper()
	requireLocalSpeech(tb)
	const rate = 8000
	synth := espeak.New(espeak.Config{})
	var pcm []int16
	for _, line := range []string{"Hello, I would like to book a table for two tonight.", "Around eight o'clock, please."} {
		_, err := synth.Synthesize(context.Background(), tts.Request{Text: line, Language: "en"}, rate, func(p []int16) error {
			pcm = append(pcm, p...)
			return nil
		})
		if err != nil {
			tb.Fatalf("espeak-ng: %v", err)
		}
		pcm = append(pcm, audio.Silence(rate, 2500*time.Millisecond)...)
	}
	return siptest.ULawWAV(pcm)
}

func envInt(tb testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// loadAverage is the machine's 1-minute load average, to judge a run by.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
