package main

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/siptest"
)

// An INVITE flood is absorbed before it costs work: 2,000 INVITEs from
// one address in 10 s, to a number whose organization is at its
// concurrency limit. The per-source bucket (defaults: 20/s, bursts of
// 100) answers most of them 503 before any handler runs; the ones it
// admits are refused 486 and recorded once (one record and one webhook
// per source and number a minute), so the flood leaves at most one
// record. The API's latency during the flood and the server's memory are
// measured and logged (BenchmarkINVITEFlood reports their distribution
// for docs/benchmarks.md; a test does not assert a timing a loaded
// machine could miss), and the server's memory must come back within
// bounds.
func TestINVITEFloodIsAbsorbed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	f := runFlood(t)
	t.Logf("API p50/p99 without the flood %v/%v, during it %v/%v (%d and %d requests); RSS %d kB before, %d kB after; bucket: %v refused, %v admitted",
		percentile(f.quiet, 0.5), percentile(f.quiet, 0.99), percentile(f.during, 0.5), percentile(f.during, 0.99), len(f.quiet), len(f.during),
		f.rssBefore, f.rssAfter, f.refused, f.admitted)
	if f.refused < 1500 {
		t.Errorf("%v INVITEs refused by the bucket and %v admitted of 2,000; want at least 1,500 refused (20/s, bursts of 100)", f.refused, f.admitted)
	}
	if f.busy != 1 {
		t.Errorf("%d BUSY records from the flood, want 1 (one per source and number a minute)", f.busy)
	}
	if f.rssAfter > 2*f.rssBefore+64<<10 {
		t.Errorf("RSS %d kB after the flood, %d kB before: the flood's memory was kept", f.rssAfter, f.rssBefore)
	}
}

// BenchmarkINVITEFlood measures what issue 19 asks of a flood: the API's
// p99 during 2,000 INVITEs in 10 s against its p99 without them, in the
// same run (docs/benchmarks.md, "An INVITE flood"). Run it with
// -benchtime 1x; each iteration is a whole server and flood.
func BenchmarkINVITEFlood(b *testing.B) {
	var quiet, during []time.Duration
	var rssGrowth float64
	for b.Loop() {
		f := runFlood(b)
		quiet, during = append(quiet, f.quiet...), append(during, f.during...)
		rssGrowth = max(rssGrowth, float64(f.rssAfter)/float64(f.rssBefore))
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentile(quiet, 0.5)), "quiet-p50-ms")
	b.ReportMetric(ms(percentile(quiet, 0.99)), "quiet-p99-ms")
	b.ReportMetric(ms(percentile(during, 0.5)), "flood-p50-ms")
	b.ReportMetric(ms(percentile(during, 0.99)), "flood-p99-ms")
	b.ReportMetric(ms(percentile(during, 0.99))/ms(percentile(quiet, 0.99)), "p99-ratio")
	b.ReportMetric(rssGrowth, "rss-after/before")
}

// floodRun is what one flood measured.
type floodRun struct {
	quiet, during       []time.Duration // GET /v1/calls latencies without and during the flood
	rssBefore, rssAfter int             // the server's resident memory, kB
	refused, admitted   float64         // the admission bucket's counters
	busy                int             // BUSY call records the flood left
}

// runFlood starts a server whose organization is held at its limit of one
// call, samples the API, floods it with 2,000 INVITEs from one address
// while sampling again, and reads the counters, records and memory.
func runFlood(t testing.TB) floodRun {
	siptest.RequireSipp(t)
	requireLocalSpeech(t)
	hooks := newReceiver(t)
	srv := startServer(t, build(t), []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "32000-32099",
		"--rate-limit", "0") // the latency sampler asks faster than a key's 50 a second
	sipAddr := regexp.MustCompile(`"sip":\{"listen":"([^"]+)"`).FindStringSubmatch(srv.logs.String())
	if sipAddr == nil {
		t.Fatalf("no SIP address in the configuration line:\n%s", srv.logs)
	}
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	a.do("PATCH", "/organization", `{"concurrencyLimit":1}`, 200)
	agent := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Desk","promptTemplate":"You are a front desk.","firstMessage":"Hello.",
		"firstMessageMode":"static","postCallWebhookUrl":%q}`, hooks.URL), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230000","agentId":%q}`, agent["id"]), 201)

	// One caller holds the organization's only line through the flood.
	holder := siptest.UAC(t, "uac_call", sipAddr[1], siptest.Options{Service: "+15551230000", Timeout: 2 * time.Minute,
		Keys: map[string]string{"from": "+15559870000", "hold": "40000"}})
	deadline := time.Now().Add(30 * time.Second)
	for len(a.do("GET", "/calls?status=IN_PROGRESS", "", 200)["data"].([]any)) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the holding call was not answered:\n%s", srv.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}

	var f floodRun
	f.quiet = sampleAPI(t, a, 200, nil)
	f.rssBefore = rss(t, srv.cmd.Process.Pid)

	flood := siptest.UAC(t, "uac_flood", sipAddr[1], siptest.Options{Service: "+15551230000", Calls: 2000, Rate: 200, Limit: 2000,
		Timeout: 90 * time.Second, Nice: 10, Keys: map[string]string{"from": "+15559870001"}})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { f.during = sampleAPI(t, a, 0, stop) })
	if err := flood.Wait(); err != nil {
		t.Logf("flood: %v", err)
	}
	// a mix of 503 (over the bucket) and 486 (admitted, at the limit): its verdict is not the point
	close(stop)
	wg.Wait()

	metrics := scrape(t, "http://"+srv.addr+"/metrics")
	f.refused, f.admitted = metrics[`parley_sip_admission_total{result="refused"}`], metrics[`parley_sip_admission_total{result="admitted"}`]
	for _, c := range a.do("GET", "/calls?status=FAILED&pageSize=100", "", 200)["data"].([]any) {
		if c.(map[string]any)["hangupCause"] == "BUSY" {
			f.busy++
		}
	}
	holder.Wait()
	f.rssAfter = rss(t, srv.cmd.Process.Pid)
	return f
}

// sampleAPI times GET /v1/calls: n requests, or until stop is closed.
func sampleAPI(t testing.TB, a api, n int, stop <-chan struct{}) []time.Duration {
	var out []time.Duration
	for i := 0; n == 0 || i < n; i++ {
		if stop != nil {
			select {
			case <-stop:
				return out
			default:
			}
		}
		req, _ := http.NewRequest("GET", a.base+"/calls?pageSize=20", nil)
		req.Header.Set("x-api-key", a.key)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("GET /calls: %v", err)
			return out
		}
		resp.Body.Close()
		out = append(out, time.Since(start))
		if resp.StatusCode != 200 {
			t.Errorf("GET /calls = %d", resp.StatusCode)
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
	return out
}

// rss is a process's resident memory in kB.
func rss(t testing.TB, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// scrape reads a Prometheus text page into series → value.
func scrape(t testing.TB, url string) map[string]float64 {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		l := lines.Text()
		if strings.HasPrefix(l, "#") {
			continue
		}
		if i := strings.LastIndexByte(l, ' '); i > 0 {
			if v, err := strconv.ParseFloat(l[i+1:], 64); err == nil {
				out[l[:i]] = v
			}
		}
	}
	return out
}

// percentile p (0..1) of ds, nearest rank (0 when empty).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, max(0, int(math.Ceil(p*float64(len(s))))-1))]
}
