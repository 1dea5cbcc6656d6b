package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to drop the run's schema

	"github.com/parley-voice/parley/internal/store/postgres"
)

// admitConfig is how BenchmarkAdmissions loads the server, from the
// environment.
type admitConfig struct {
	clients int           // PARLEY_BENCH_ADMIT_CLIENTS: concurrent keep-alive clients POSTing (default 32)
	run     time.Duration // PARLEY_BENCH_ADMIT_FOR: the measured window (default 20s), after a 3 s warm-up
	hold    time.Duration // PARLEY_BENCH_ADMIT_HOLD: how long an admitted call stays up (default 1s)
	dbURL   string        // PARLEY_BENCH_DATABASE_URL, else PARLEY_TEST_DATABASE_URL: PostgreSQL too when set
}

func readAdmitConfig(b *testing.B) admitConfig {
	cfg := admitConfig{clients: 32, run: 20 * time.Second, hold: time.Second,
		dbURL: cmpOr(os.Getenv("PARLEY_BENCH_DATABASE_URL"), os.Getenv("PARLEY_TEST_DATABASE_URL"))}
	if v := os.Getenv("PARLEY_BENCH_ADMIT_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("PARLEY_BENCH_ADMIT_CLIENTS=%q: want a positive integer", v)
		}
		cfg.clients = n
	}
	for name, d := range map[string]*time.Duration{"PARLEY_BENCH_ADMIT_FOR": &cfg.run, "PARLEY_BENCH_ADMIT_HOLD": &cfg.hold} {
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

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// BenchmarkAdmissions measures POST /v1/calls from outside: the real binary
// on SQLite, and on PostgreSQL (a fresh schema per run) when a database URL
// is set, with the simulated dialer: every admitted call rings, is answered
// at once and hangs up PARLEY_BENCH_ADMIT_HOLD later, so each admission
// also costs the call's ringing, answer and end writes, as on a carrier,
// without telephony in the way. The organization's limit (10,000) is above
// the calls up at once, so every call is admitted, none queued. Many
// keep-alive clients POST for a fixed time while one more lists calls (GET
// /v1/calls, a page of 25, 20 times a second); the run reports admissions per second, latency,
// errors (any answer but 201 INITIATED fails the run), the server's
// CPU-seconds per 1,000 admissions and its database round trips per
// admission (the API's reads, the admission, and the call's own writes). Everything is on 127.0.0.1, on ports
// the system picks.
func BenchmarkAdmissions(b *testing.B) {
	cfg := readAdmitConfig(b)
	bin := buildParley(b)
	b.Logf("%d clients for %v after a 3 s warm-up; each admitted call lasts %v", cfg.clients, cfg.run, cfg.hold)
	b.Run("sqlite", func(b *testing.B) {
		for range b.N {
			runAdmissions(b, bin, cfg).report(b)
		}
	})
	b.Run("postgres", func(b *testing.B) {
		if cfg.dbURL == "" {
			b.Skip("set PARLEY_BENCH_DATABASE_URL or PARLEY_TEST_DATABASE_URL to measure PostgreSQL too")
		}
		for range b.N {
			url := freshSchema(b, cfg.dbURL)
			runAdmissions(b, bin, cfg, "--database-url", url).report(b)
		}
	})
}

// freshSchema creates and migrates an empty schema for one run, dropped at
// cleanup, and returns dbURL with the schema as the search path.
func freshSchema(b *testing.B, dbURL string) string {
	schema := fmt.Sprintf("bench_admissions_%d", time.Now().UnixNano())
	s, err := postgres.Open(context.Background(), dbURL, postgres.WithSchema(schema))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		db, err := sql.Open("pgx", dbURL)
		if err != nil {
			b.Error(err)
			return
		}
		defer db.Close()
		if _, err := db.Exec("DROP SCHEMA " + pgx.Identifier{schema}.Sanitize() + " CASCADE"); err != nil {
			b.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dbURL)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// listEvery paces the client that lists calls during the load.
const listEvery = 50 * time.Millisecond

// admitResult is one run's figures.
type admitResult struct {
	admitted  int
	errors    int
	firstErr  string
	wall      time.Duration
	post      []time.Duration
	get       []time.Duration
	serverCPU time.Duration
	busy, all float64 // the machine's CPU-seconds over the window
	// trips is the server's database round trips over the window
	// (parley_store_round_trips_total; -1 when it does not count them).
	trips float64
}

func runAdmissions(b *testing.B, bin string, cfg admitConfig, args ...string) admitResult {
	srv := startServer(b, bin, append([]string{"--dialer", "simulate", "--simulate-ring", "0",
		"--simulate-duration", cfg.hold.String(), "--rate-limit", "0"}, args...)...)
	srv.client.Transport.(*http.Transport).MaxIdleConnsPerHost = cfg.clients + 2
	srv.do("PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 10000}, 200, nil)
	var agent struct{ Data struct{ ID string } }
	srv.do("POST", "/v1/agents", map[string]any{"name": "Bench", "promptTemplate": "You are a benchmark."}, 201, &agent)
	body, err := json.Marshal(map[string]any{"agentId": agent.Data.ID, "fromNumber": "+15550001000", "toNumber": "+15550002000"})
	if err != nil {
		b.Fatal(err)
	}

	load := func(d time.Duration) admitResult {
		var r admitResult
		var mu sync.Mutex
		var wg sync.WaitGroup
		end := time.Now().Add(d)
		for range cfg.clients {
			wg.Go(func() {
				var lat []time.Duration
				errs, first := 0, ""
				for time.Now().Before(end) {
					t0 := time.Now()
					status, got, err := srv.send("POST", "/v1/calls", body)
					lat = append(lat, time.Since(t0))
					if err != nil || status != 201 || !bytes.Contains(got, []byte(`"status":"INITIATED"`)) {
						if errs++; first == "" {
							first = fmt.Sprintf("POST /v1/calls = %d %v: %s", status, err, got)
						}
					}
				}
				mu.Lock()
				r.post = append(r.post, lat...)
				r.errors += errs
				if r.firstErr == "" {
					r.firstErr = first
				}
				mu.Unlock()
			})
		}
		wg.Go(func() {
			// Paced, as an operator's dashboards would poll: back to back,
			// one client's lists would take a fifth of the server's CPU.
			for time.Now().Before(end) {
				time.Sleep(listEvery)
				t0 := time.Now()
				status, got, err := srv.send("GET", "/v1/calls?pageSize=25", nil)
				lat := time.Since(t0)
				mu.Lock()
				r.get = append(r.get, lat)
				if err != nil || status != 200 {
					if r.errors++; r.firstErr == "" {
						r.firstErr = fmt.Sprintf("GET /v1/calls = %d %v: %s", status, err, got)
					}
				}
				mu.Unlock()
			}
		})
		wg.Wait()
		r.admitted = len(r.post) - r.errors
		return r
	}

	load(3 * time.Second) // warm-up: connections, caches, the first live calls
	trips := func() float64 {
		m, err := srv.scrape(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if v, ok := m["parley_store_round_trips_total"]; ok {
			return v
		}
		return -1
	}
	trips0 := trips()
	busy0, all0 := machineCPU()
	cpu0, t0 := procCPU(srv.pid()), time.Now()
	r := load(cfg.run)
	r.wall = time.Since(t0)
	r.serverCPU = procCPU(srv.pid()) - cpu0
	busy1, all1 := machineCPU()
	r.busy, r.all = busy1-busy0, all1-all0
	if r.trips = -1; trips0 >= 0 {
		r.trips = trips() - trips0
	}
	if r.errors > 0 {
		b.Errorf("%d of %d requests failed; the first: %s", r.errors, len(r.post)+len(r.get), r.firstErr)
	}
	if crash := srv.Crashed(); crash != "" {
		b.Fatalf("the server crashed:\n%s", crash)
	}

	// Every call ends by itself; then no line may stay taken.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		m, err := srv.scrape(ctx)
		if err == nil && m["parley_calls_live"] == 0 {
			break
		}
		if ctx.Err() != nil {
			b.Fatalf("calls still live a minute after the load stopped (%v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var page struct{ Total int }
	srv.do("GET", "/v1/calls?status=INITIATED,RINGING,IN_PROGRESS&pageSize=1", nil, 200, &page)
	if page.Total != 0 {
		b.Errorf("%d calls still hold a line after every call ended", page.Total)
	}
	if err := srv.stop(30 * time.Second); err != nil {
		b.Errorf("stop: %v", err)
	}
	return r
}

// send makes one request with the first key and returns the status and
// body; it never fails the run, so load goroutines can call it.
func (s *server) send(method, path string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.api+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("x-api-key", s.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	return resp.StatusCode, got, err
}

func (r admitResult) report(b *testing.B) {
	rate := float64(r.admitted) / r.wall.Seconds()
	perK := r.serverCPU.Seconds() / float64(max(r.admitted, 1)) * 1000
	post, get := millis(r.post), millis(r.get)
	postP50, postP99, postMax := percentile(post, 50), percentile(post, 99), slices.Max(append(post, 0))
	getP50, getP99 := percentile(get, 50), percentile(get, 99)
	b.ReportMetric(rate, "admitted/s")
	b.ReportMetric(postP50, "p50_ms")
	b.ReportMetric(postP99, "p99_ms")
	b.ReportMetric(postMax, "max_ms")
	b.ReportMetric(float64(r.errors), "errors")
	b.ReportMetric(perK, "cpu_s/1k_admissions")
	b.ReportMetric(getP99, "get_p99_ms")
	if r.trips >= 0 {
		// Each admitted call rings, is answered and ends within the
		// window (but those of its last second): about its whole cost.
		b.ReportMetric(r.trips/float64(max(r.admitted, 1)), "round_trips/admission")
	}
	b.Logf("%d admitted in %v: %.0f/s, p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d errors; server CPU %.1f s (%.2f s per 1,000); "+
		"GET /v1/calls under the load: %d requests, p50 %.1f ms, p99 %.1f ms; the machine's CPUs were busy %.0f of %.0f s; load average %s",
		r.admitted, r.wall.Round(time.Millisecond), rate, postP50, postP99, postMax, r.errors, r.serverCPU.Seconds(), perK,
		len(r.get), getP50, getP99, r.busy, r.all, loadAvg())
}

// millis is ds in milliseconds, for percentile.
func millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}
