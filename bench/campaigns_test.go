package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// campConfig is how the campaign benchmarks run, from the environment.
type campConfig struct {
	rows  int           // PARLEY_BENCH_CAMPAIGN_ROWS: recipients uploaded (default 100,000, the CSV limit)
	run   time.Duration // PARLEY_BENCH_CAMPAIGN_FOR: the measured dispatch window, and the idle baseline's (default 60s)
	rate  int           // PARLEY_BENCH_CAMPAIGN_RATE: the campaign's callsPerMinute (default 1000)
	hold  time.Duration // PARLEY_BENCH_CAMPAIGN_HOLD: how long a simulated call lasts once answered (default 1s)
	dbURL string        // PARLEY_BENCH_DATABASE_URL, else PARLEY_TEST_DATABASE_URL: PostgreSQL too when set
}

func readCampConfig(b *testing.B) campConfig {
	cfg := campConfig{rows: 100_000, run: time.Minute, rate: 1000, hold: time.Second,
		dbURL: cmpOr(os.Getenv("PARLEY_BENCH_DATABASE_URL"), os.Getenv("PARLEY_TEST_DATABASE_URL"))}
	for name, n := range map[string]*int{"PARLEY_BENCH_CAMPAIGN_ROWS": &cfg.rows, "PARLEY_BENCH_CAMPAIGN_RATE": &cfg.rate} {
		if v := os.Getenv(name); v != "" {
			x, err := strconv.Atoi(v)
			if err != nil || x < 2 {
				b.Fatalf("%s=%q: want an integer above 1", name, v)
			}
			*n = x
		}
	}
	for name, d := range map[string]*time.Duration{"PARLEY_BENCH_CAMPAIGN_FOR": &cfg.run, "PARLEY_BENCH_CAMPAIGN_HOLD": &cfg.hold} {
		if v := os.Getenv(name); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x <= 0 {
				b.Fatalf("%s=%q: want a positive duration", name, v)
			}
			*d = x
		}
	}
	return cfg
}

// campaignCSV is a recipients file of n rows: a number, three variables,
// and a timezone column that tz fills per row ("" leaves it empty).
func campaignCSV(n int, tz func(i int) string) []byte {
	var buf bytes.Buffer
	buf.Grow(n * 64)
	buf.WriteString("toNumber,firstName,plan,accountId,timezone\n")
	plans := []string{"gold", "silver", "bronze"}
	for i := range n {
		fmt.Fprintf(&buf, "+1415%07d,Customer %d,%s,ACC-%06d,%s\n", 2000000+i, i, plans[i%3], i, tz(i))
	}
	return buf.Bytes()
}

// campaignSetup gives srv's organization room for every call
// (concurrencyLimit 10,000) and creates an agent and a draft campaign with
// the given extra fields; it returns the campaign's id.
func campaignSetup(srv *server, fields map[string]any) string {
	srv.do("PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 10000}, 200, nil)
	var agent struct{ Data struct{ ID string } }
	srv.do("POST", "/v1/agents", map[string]any{"name": "Bench", "promptTemplate": "You are a benchmark."}, 201, &agent)
	body := map[string]any{"name": "Bench list", "agentId": agent.Data.ID, "fromNumbers": []string{"+14155550100", "+12125550100"}}
	for k, v := range fields {
		body[k] = v
	}
	var camp struct{ Data struct{ ID string } }
	srv.do("POST", "/v1/campaigns", body, 201, &camp)
	return camp.Data.ID
}

// uploadCSV POSTs csv as the campaign's recipients and checks that every
// row was added.
func uploadCSV(b *testing.B, srv *server, id string, csv []byte, rows int) {
	req, err := http.NewRequest("POST", srv.api+"/v1/campaigns/"+id+"/recipients", bytes.NewReader(csv))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("x-api-key", srv.key)
	req.Header.Set("Content-Type", "text/csv")
	client := &http.Client{Timeout: 10 * time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		b.Fatalf("upload: %v", err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	var out struct {
		Data struct{ Added, Duplicates, Suppressed int }
	}
	if resp.StatusCode != 201 || json.Unmarshal(got, &out) != nil || out.Data.Added != rows {
		b.Fatalf("upload = %d %s, want 201 with %d added", resp.StatusCode, got, rows)
	}
}

// BenchmarkCampaignUpload measures one CSV upload of
// PARLEY_BENCH_CAMPAIGN_ROWS recipients (default 100,000, the limit) to a
// draft campaign from outside: the real binary (--dialer none) on SQLite,
// and on PostgreSQL in a fresh schema when a database URL is set, a fresh
// server per run. Each row has three variables; every tenth names its
// timezone. It reports the request's wall time, rows per second, the
// server's peak resident set (VmHWM) and its growth over the resident set
// before the request, and the server's CPU seconds for the request.
func BenchmarkCampaignUpload(b *testing.B) {
	cfg := readCampConfig(b)
	bin := buildParley(b)
	csv := campaignCSV(cfg.rows, func(i int) string {
		if i%10 == 0 {
			return "America/Chicago"
		}
		return ""
	})
	b.Logf("%d rows, %.1f MiB of CSV", cfg.rows, float64(len(csv))/(1<<20))
	b.Run("sqlite", func(b *testing.B) {
		for range b.N {
			runUpload(b, bin, cfg, csv)
		}
	})
	b.Run("postgres", func(b *testing.B) {
		if cfg.dbURL == "" {
			b.Skip("set PARLEY_BENCH_DATABASE_URL or PARLEY_TEST_DATABASE_URL to measure PostgreSQL too")
		}
		for range b.N {
			runUpload(b, bin, cfg, csv, "--database-url", freshSchema(b, cfg.dbURL))
		}
	})
}

func runUpload(b *testing.B, bin string, cfg campConfig, csv []byte, args ...string) {
	srv := startServer(b, bin, append([]string{"--dialer", "none", "--rate-limit", "0"}, args...)...)
	id := campaignSetup(srv, nil)
	pid := srv.pid()
	rss0, cpu0, t0 := procRSS(pid), procCPU(pid), time.Now()
	uploadCSV(b, srv, id, csv, cfg.rows)
	wall := time.Since(t0)
	cpu, peak, rss1 := procCPU(pid)-cpu0, peakRSS(pid), procRSS(pid)
	var camp struct {
		Data struct{ Counts struct{ Total, Pending int } }
	}
	srv.do("GET", "/v1/campaigns/"+id, nil, 200, &camp)
	if camp.Data.Counts.Total != cfg.rows || camp.Data.Counts.Pending != cfg.rows {
		b.Errorf("counts after the upload: %+v, want %d total and pending", camp.Data.Counts, cfg.rows)
	}
	if crash := srv.Crashed(); crash != "" {
		b.Fatalf("the server crashed:\n%s", crash)
	}
	if err := srv.stop(30 * time.Second); err != nil {
		b.Errorf("stop: %v", err)
	}
	const mib = 1 << 20
	b.ReportMetric(wall.Seconds(), "upload_s")
	b.ReportMetric(float64(cfg.rows)/wall.Seconds(), "rows/s")
	b.ReportMetric(peak/mib, "peak_rss_MiB")
	b.ReportMetric((peak-rss0)/mib, "rss_growth_MiB")
	b.ReportMetric(cpu.Seconds(), "server_cpu_s")
	b.Logf("%d rows in %v (%.0f rows/s); server RSS %.0f MiB before, peak %.0f MiB, %.0f MiB after; server CPU %.2f s; load average %s",
		cfg.rows, wall.Round(time.Millisecond), float64(cfg.rows)/wall.Seconds(), rss0/mib, peak/mib, rss1/mib, cpu.Seconds(), loadAvg())
}

// BenchmarkCampaignDispatch measures the dispatcher from outside: the real
// binary with the simulated dialer (every call is answered at once and
// hangs up PARLEY_BENCH_CAMPAIGN_HOLD later), the organization's limit at
// 10,000 so lines never run short, and a campaign of
// PARLEY_BENCH_CAMPAIGN_ROWS pending recipients (default 100,000) paced at
// PARLEY_BENCH_CAMPAIGN_RATE calls a minute (default 1,000). First the
// server idles, the campaign uploaded but not started, for
// PARLEY_BENCH_CAMPAIGN_FOR (default 60 s): the baseline. Then the
// campaign starts and, after a warm-up, runs for as long again. Each dial's
// cost is the whole of a campaign call: the dispatcher's passes, the gate
// and the call's admission, the call's ringing, answer and end, and the
// settling of its outcome.
//
// Case "open": no calling windows. Case "half_closed": a 09:00–17:00
// window every day; the first half of the list (in dial order) has a
// timezone where it is night now, the second half one where it is midday,
// so the dispatcher must park 50,000 recipients before it reaches one it
// may dial; the warm-up lasts until they are parked, and the window then
// shows whether they still cost anything per dial.
//
// It reports dials a minute; per dial, net of the idle baseline: the
// server's CPU milliseconds, database milliseconds (the sum of
// parley_store_transaction_seconds: time inside transactions, waiting for
// a connection included) and round trips (parley_store_round_trips_total);
// and, for half_closed, how long parking took.
func BenchmarkCampaignDispatch(b *testing.B) {
	cfg := readCampConfig(b)
	bin := buildParley(b)
	b.Logf("%d recipients at %d calls a minute, %v idle then %v dialing; each call lasts %v",
		cfg.rows, cfg.rate, cfg.run, cfg.run, cfg.hold)
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, closed := range []bool{false, true} {
			name := engine + "/open"
			if closed {
				name = engine + "/half_closed"
			}
			b.Run(name, func(b *testing.B) {
				var args []string
				if engine == "postgres" {
					if cfg.dbURL == "" {
						b.Skip("set PARLEY_BENCH_DATABASE_URL or PARLEY_TEST_DATABASE_URL to measure PostgreSQL too")
					}
				}
				for range b.N {
					if engine == "postgres" {
						args = []string{"--database-url", freshSchema(b, cfg.dbURL)}
					}
					runDispatch(b, bin, cfg, closed, args...).report(b, closed)
				}
			})
		}
	}
}

// etcZone is an IANA zone whose clock is now at the given local hour
// (Etc/GMT names carry the offset with its sign inverted).
func etcZone(now time.Time, hour int) string {
	off := ((hour-now.UTC().Hour())%24+36)%24 - 12 // in [-12, 11]
	if off == 0 {
		return "UTC"
	}
	return fmt.Sprintf("Etc/GMT%+d", -off)
}

// dispatchSample is what the server has spent so far.
type dispatchSample struct {
	at                      time.Time
	cpu                     time.Duration
	trips, txSeconds        float64
	updates, views          float64 // transactions
	updateSec, viewSec      float64 // their time
	placed, refused, parked float64
}

func sampleDispatch(b *testing.B, srv *server) dispatchSample {
	m, err := srv.scrape(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	s := dispatchSample{at: time.Now(), cpu: procCPU(srv.pid()), trips: m["parley_store_round_trips_total"],
		updates: m[`parley_store_transaction_seconds_count{kind="update"}`], views: m[`parley_store_transaction_seconds_count{kind="view"}`],
		updateSec: m[`parley_store_transaction_seconds_sum{kind="update"}`], viewSec: m[`parley_store_transaction_seconds_sum{kind="view"}`],
		placed: m[`parley_campaign_dials_total{result="placed"}`], parked: m["parley_campaign_recipients_parked_total"]}
	s.txSeconds = s.updateSec + s.viewSec
	for _, r := range []string{"no_line", "at_concurrency", "paced", "not_running"} {
		s.refused += m[`parley_campaign_dials_total{result="`+r+`"}`]
	}
	if _, ok := m[`parley_store_transaction_seconds_count{kind="update"}`]; !ok {
		b.Fatal("the server has no parley_store_transaction_seconds")
	}
	return s
}

func (s dispatchSample) sub(o dispatchSample) dispatchSample {
	return dispatchSample{at: time.Unix(0, int64(s.at.Sub(o.at))), cpu: s.cpu - o.cpu, trips: s.trips - o.trips,
		txSeconds: s.txSeconds - o.txSeconds, updates: s.updates - o.updates, views: s.views - o.views,
		updateSec: s.updateSec - o.updateSec, viewSec: s.viewSec - o.viewSec, placed: s.placed - o.placed, refused: s.refused - o.refused, parked: s.parked - o.parked}
}

// wall is a delta's duration (sub keeps it in at).
func (s dispatchSample) wall() time.Duration { return time.Duration(s.at.UnixNano()) }

type dispatchResult struct {
	idle, run dispatchSample
	parkFor   time.Duration // half_closed: from start until the closed half was parked
	pending   int           // recipients still pending at the end
}

func runDispatch(b *testing.B, bin string, cfg campConfig, closed bool, args ...string) dispatchResult {
	srv := startServer(b, bin, append([]string{"--dialer", "simulate", "--simulate-ring", "0",
		"--simulate-duration", cfg.hold.String(), "--rate-limit", "0"}, args...)...)
	now := time.Now()
	fields := map[string]any{"callsPerMinute": cfg.rate}
	tz := func(int) string { return "" }
	if closed {
		night, midday := etcZone(now, 0), etcZone(now, 12)
		fields["callingWindows"] = []map[string]any{{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "09:00", "end": "17:00"}}
		tz = func(i int) string {
			if i < cfg.rows/2 {
				return night
			}
			return midday
		}
		b.Logf("closed half in %s, open half in %s", night, midday)
	}
	id := campaignSetup(srv, fields)
	uploadCSV(b, srv, id, campaignCSV(cfg.rows, tz), cfg.rows)

	var r dispatchResult
	idle0 := sampleDispatch(b, srv)
	time.Sleep(cfg.run)
	r.idle = sampleDispatch(b, srv).sub(idle0)

	start := time.Now()
	srv.do("POST", "/v1/campaigns/"+id+"/start", nil, 200, nil)
	// Warm-up: the first dials (and, half closed, every night-time
	// recipient parked), then a few seconds more for the pace to settle.
	deadline := start.Add(10 * time.Minute)
	for {
		s := sampleDispatch(b, srv)
		if s.placed > 0 && (!closed || s.parked >= float64(cfg.rows/2)) {
			break
		}
		if time.Now().After(deadline) || srv.Exited() {
			b.Fatalf("no steady dialing %v after the start: %+v\n%s", time.Since(start), s, tail(srv.Log(), 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.parkFor = time.Since(start)
	time.Sleep(3 * time.Second)
	run0 := sampleDispatch(b, srv)
	time.Sleep(cfg.run)
	r.run = sampleDispatch(b, srv).sub(run0)

	srv.do("POST", "/v1/campaigns/"+id+"/pause", nil, 200, nil)
	var camp struct {
		Data struct{ Counts struct{ Pending int } }
	}
	srv.do("GET", "/v1/campaigns/"+id, nil, 200, &camp)
	r.pending = camp.Data.Counts.Pending
	if crash := srv.Crashed(); crash != "" {
		b.Fatalf("the server crashed:\n%s", crash)
	}
	if strings.Contains(srv.Log(), `"level":"ERROR"`) {
		b.Errorf("the server logged errors:\n%s", tail(srv.Log(), 4000))
	}
	if err := srv.stop(30 * time.Second); err != nil {
		b.Errorf("stop: %v", err)
	}
	if r.run.placed == 0 {
		b.Fatal("no dial in the measured window")
	}
	return r
}

func (r dispatchResult) report(b *testing.B, closed bool) {
	dials := r.run.placed
	scale := r.run.wall().Seconds() / r.idle.wall().Seconds() // the baseline over the run's length
	perDial := func(run, idle float64) float64 { return (run - idle*scale) / dials }
	cpu := perDial(r.run.cpu.Seconds(), r.idle.cpu.Seconds()) * 1000
	db := perDial(r.run.txSeconds, r.idle.txSeconds) * 1000
	trips := perDial(r.run.trips, r.idle.trips)
	b.ReportMetric(dials/r.run.wall().Minutes(), "dials/min")
	b.ReportMetric(cpu, "cpu_ms/dial")
	b.ReportMetric(db, "db_ms/dial")
	b.ReportMetric(trips, "round_trips/dial")
	if closed {
		b.ReportMetric(r.parkFor.Seconds(), "park_s")
	}
	b.Logf("%.0f dials in %v (%.0f/min), %.0f refused by the gate for now, %.0f parked; server CPU %.2f s (idle %.2f s in %v), "+
		"database %.2f s (idle %.2f s), round trips %.0f (idle %.0f); per dial net of idle: CPU %.2f ms, database %.2f ms, %.1f round trips; "+
		"first dial (and parking) %v after the start; %d still pending; load average %s",
		dials, r.run.wall().Round(time.Millisecond), dials/r.run.wall().Minutes(), r.run.refused, r.run.parked,
		r.run.cpu.Seconds(), r.idle.cpu.Seconds(), r.idle.wall().Round(time.Millisecond),
		r.run.txSeconds, r.idle.txSeconds, r.run.trips, r.idle.trips, cpu, db, trips,
		r.parkFor.Round(time.Millisecond), r.pending, loadAvg())
	ms := func(sec, n float64) float64 { return sec / max(n, 1) * 1000 }
	b.Logf("transactions in the window: %.0f updates, %.2f ms each on average (%.1f a dial); %.0f views, %.2f ms each (%.1f a dial)",
		r.run.updates, ms(r.run.updateSec, r.run.updates), r.run.updates/dials, r.run.views, ms(r.run.viewSec, r.run.views), r.run.views/dials)
}
