package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/siptest"
	"github.com/parley-voice/parley/internal/webhook"
)

// The campaign the process tests run: 200 numbers at a carrier (sipp's
// uas_by_number) whose callees answer and hang up after half a second
// (last digit 0-3), are busy (4-6) or ring until the server gives up
// (7-9, --ring-timeout 1s); busy and unanswered numbers are tried twice, a
// second apart. The organization has 10 lines and keeps 20 % of them for
// inbound calls, so the campaign dials on 8.
const (
	recipients  = 200
	maxAttempts = 2
	orgLimit    = 10
	campLines   = 8 // Lines(10, 20)
)

// campaignArgs are the serve flags of a campaign run beside each server's
// own SIP address and RTP ports: rings end after a second (the timeout
// runs from the start of the dial, so a shorter one on a loaded machine
// gives up on callees that answer), leases and drains are short as in the
// other crash tests, and the test's polling is not rate limited.
var campaignArgs = []string{"--dialer", "sip", "--ring-timeout", "1s", "--call-lease", "3s", "--call-drain", "200ms", "--rate-limit", "0"}

// campaignRun is a campaign set up on a server, its carrier and its
// webhook receiver.
type campaignRun struct {
	t       *testing.T
	key, id string
	secret  string
	carrier *siptest.Sipp
	hooks   *campaignHooks
	// maxLive is the most of its calls seen live at once.
	maxLive int
}

// setUpCampaign makes, on s, a trunk to the carrier, an agent calling
// through it, a signing secret and a campaign of the 200 numbers uploaded
// as CSV, and starts it.
func setUpCampaign(t *testing.T, s *server, key string, carrier *siptest.Sipp) *campaignRun {
	t.Helper()
	r := &campaignRun{t: t, key: key, carrier: carrier, hooks: newCampaignHooks(t)}
	s.must(key, 200, "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": orgLimit})
	r.secret = s.must(key, 201, "POST", "/v1/organization/webhook-secret", nil)["data"].(map[string]any)["secret"].(string)
	host, portS, _ := strings.Cut(carrier.Addr(), ":")
	port, _ := strconv.Atoi(portS)
	trunk := s.must(key, 201, "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "carrier", "host": host, "port": port, "transport": "udp"})["data"].(map[string]any)
	agent := s.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "Reminder", "promptTemplate": "You remind {{name}}.",
		"firstMessage": "Hello {{name}}, a reminder.", "sipTrunkId": trunk["id"]})["data"].(map[string]any)
	camp := s.must(key, 201, "POST", "/v1/campaigns", map[string]any{
		"name": "Reminders", "agentId": agent["id"], "fromNumbers": []string{"+14155550100"},
		"callsPerMinute": 6000, "webhookUrl": r.hooks.URL,
		"retry": map[string]any{"maxAttempts": maxAttempts, "delaySeconds": 1, "retryOn": []string{"NO_ANSWER", "BUSY"}},
	})["data"].(map[string]any)
	r.id = camp["id"].(string)

	var csv strings.Builder
	csv.WriteString("toNumber,name\r\n")
	for _, i := range uploadOrder {
		fmt.Fprintf(&csv, "%s,Callee %d\r\n", number(i), i)
	}
	code, body := s.post(key, "/v1/campaigns/"+r.id+"/recipients", "text/csv", csv.String())
	if added, _ := body["data"].(map[string]any); code != 201 || added["added"] != float64(recipients) || added["duplicates"] != 0.0 || added["suppressed"] != 0.0 {
		t.Fatalf("CSV upload = %d %v", code, body)
	}
	s.must(key, 200, "POST", "/v1/campaigns/"+r.id+"/start", nil)
	return r
}

// number is recipient i's number; its last digit picks what the carrier does.
func number(i int) string { return fmt.Sprintf("+1415555%04d", i) }

// uploadOrder is the order of the numbers in the CSV: eight that answer
// first, so that the first dials hold all the campaign's lines for half a
// second, then the rest in turn.
var uploadOrder = func() []int {
	first := []int{0, 1, 2, 3, 10, 11, 12, 13}
	out := slices.Clone(first)
	for i := range recipients {
		if !slices.Contains(first, i) {
			out = append(out, i)
		}
	}
	return out
}()

// campaign reads the campaign, noting how many of its calls are live.
func (r *campaignRun) campaign(s *server) map[string]any {
	r.t.Helper()
	r.live(s)
	return s.must(r.key, 200, "GET", "/v1/campaigns/"+r.id, nil)["data"].(map[string]any)
}

// live is how many of the campaign's calls are live.
func (r *campaignRun) live(s *server) int {
	r.t.Helper()
	m := s.must(r.key, 200, "GET", "/v1/calls?status=INITIATED,RINGING,IN_PROGRESS&pageSize=1&campaignId="+r.id, nil)
	n := int(m["total"].(float64))
	r.maxLive = max(r.maxLive, n)
	return n
}

// finished is how many recipients are in a final state.
func (r *campaignRun) finished(s *server) int {
	r.t.Helper()
	n := r.campaign(s)["counts"].(map[string]any)
	return int(n["completed"].(float64) + n["failed"].(float64) + n["suppressed"].(float64) + n["expired"].(float64) + n["canceled"].(float64))
}

// waitCompleted waits for the campaign to complete.
func (r *campaignRun) waitCompleted(s *server) {
	r.t.Helper()
	within(r.t, 90*time.Second, "the campaign completed", func() bool { return r.campaign(s)["status"] == "completed" })
}

// check verifies a completed campaign: every recipient final with the
// outcome its number's callee gives (or lost, with lostCause, when its call
// was live on a server that died), the counts adding up, each number dialed
// at most maxAttempts times as the carrier saw it, one call record per
// attempt, and exactly one signed campaign_completed.
func (r *campaignRun) check(s *server, lostCause string) {
	t := r.t
	t.Helper()
	camp := r.campaign(s)
	counts := camp["counts"].(map[string]any)
	recips := r.recipients(s)
	if len(recips) != recipients {
		t.Fatalf("%d recipients listed, want %d", len(recips), recipients)
	}
	tally := map[string]int{}
	lost, attempts := 0, 0
	callIDs := map[string]bool{}
	tried := map[string]int{}
	want := map[string]int{} // INVITEs the carrier must have seen per number (lost calls may not have reached it)
	for i, rc := range recips {
		n := rc["toNumber"].(string)
		st, _ := rc["status"].(string)
		cause, _ := rc["lastHangupCause"].(string)
		tries := int(rc["attempts"].(float64))
		ids := rc["callIds"].([]any)
		tally[st]++
		attempts += tries
		tried[n] = tries
		for _, id := range ids {
			callIDs[id.(string)] = true
		}
		if n != number(uploadOrder[i]) {
			t.Errorf("recipient %d is %s, want %s (upload order)", i, n, number(uploadOrder[i]))
		}
		if len(ids) != tries || tries < 1 || tries > maxAttempts {
			t.Errorf("%s: %d attempts, call ids %v", n, tries, ids)
		}
		if cause == lostCause {
			lost++
			t.Logf("%s: lost on attempt %d; the carrier saw %d calls", n, tries, len(r.carrier.Dialed()[n]))
			want[n] = tries - 1 // the lost call may not have reached the carrier
			if st != "failed" {
				t.Errorf("%s: lost call (%s) left it %s", n, cause, st)
			}
			continue
		}
		want[n] = tries
		wantSt, wantTries, wantCause, callee := "failed", maxAttempts, "NO_ANSWER", "never answers"
		switch d := n[len(n)-1] - '0'; {
		case d <= 3:
			wantSt, wantTries, wantCause, callee = "completed", 1, cause, "answers"
		case d <= 6:
			wantCause, callee = "BUSY", "is busy"
		}
		if st != wantSt || tries != wantTries || cause != wantCause {
			var ends []string
			for _, id := range ids {
				c := s.must(r.key, 200, "GET", "/v1/calls/"+id.(string), nil)["data"].(map[string]any)
				ends = append(ends, fmt.Sprintf("%v %v %v (%v)", c["id"], c["status"], c["hangupCause"], c["errorMessage"]))
			}
			t.Errorf("%s %s: %s after %d attempts (%s), want %s after %d (%s); the carrier saw %d calls; its calls ended %s",
				n, callee, st, tries, cause, wantSt, wantTries, wantCause, len(r.carrier.Dialed()[n]), strings.Join(ends, "; "))
		}
	}
	t.Logf("recipients %v, %d lost (%s), %d attempts, at most %d live", tally, lost, lostCause, attempts, r.maxLive)
	if lost == 0 || lost > campLines {
		t.Errorf("%d calls lost, want 1 to the %d lines the campaign had (it was killed with calls live)", lost, campLines)
	}
	if r.maxLive > campLines {
		t.Errorf("%d of the campaign's calls were live at once, more than the %d lines left to campaigns", r.maxLive, campLines)
	}
	n := func(k string) int { return int(counts[k].(float64)) }
	if n("total") != recipients || n("pending")+n("inProgress") != 0 ||
		n("completed")+n("failed")+n("suppressed")+n("expired")+n("canceled") != recipients ||
		n("completed") != tally["completed"] || n("failed") != tally["failed"] {
		t.Errorf("counts %v, recipients %v", counts, tally)
	}

	// The carrier's side: no number got more calls than its attempts (and
	// every attempt not lost reached it). Its log is written as it goes:
	// wait for the last lines.
	var dialed map[string][]string
	within(t, 10*time.Second, "the carrier logged every call", func() bool {
		dialed = r.carrier.Dialed()
		for n, w := range want {
			if len(dialed[n]) < w {
				return false
			}
		}
		return true
	})
	invites := 0
	for n, ids := range dialed {
		invites += len(ids)
		if tries, ok := tried[n]; !ok || len(ids) > tries || len(ids) > maxAttempts {
			t.Errorf("the carrier got %d calls for %s (Call-IDs %v), %d attempts recorded", len(ids), n, ids, tries)
		}
	}
	t.Logf("the carrier got %d calls for %d numbers", invites, len(dialed))

	// One call record per attempt, each the campaign's.
	calls := map[string]bool{}
	for page := 1; ; page++ {
		m := s.must(r.key, 200, "GET", fmt.Sprintf("/v1/calls?campaignId=%s&pageSize=100&page=%d", r.id, page), nil)
		for _, c := range m["data"].([]any) {
			c := c.(map[string]any)
			calls[c["id"].(string)] = true
			if c["campaignId"] != r.id || !callIDs[c["id"].(string)] {
				t.Errorf("call %v listed for the campaign is none of its recipients' (campaignId %v)", c["id"], c["campaignId"])
			}
		}
		if m["hasNextPage"] != true {
			if m["total"] != float64(attempts) {
				t.Errorf("GET /v1/calls?campaignId= total %v, want %d (the attempts)", m["total"], attempts)
			}
			break
		}
	}
	if len(calls) != attempts || len(callIDs) != attempts {
		t.Errorf("%d calls listed, %d distinct call ids on the recipients, want %d each", len(calls), len(callIDs), attempts)
	}

	// campaign_completed, once, signed.
	within(t, 10*time.Second, "campaign_completed delivered", func() bool { return len(r.hooks.got()) > 0 })
	got := r.hooks.got()
	if len(got) != 1 {
		t.Fatalf("%d campaign_completed deliveries, want 1", len(got))
	}
	d := got[0]
	if ev := d.header.Get("X-Parley-Event"); ev != "campaign_completed" {
		t.Errorf("X-Parley-Event %q", ev)
	}
	if err := webhook.Verify(r.secret, d.header.Get("X-Parley-Signature"), d.body, time.Now(), time.Minute); err != nil {
		t.Errorf("campaign_completed signature: %v", err)
	}
	var payload struct {
		Event    string
		Campaign map[string]any
	}
	json.Unmarshal(d.body, &payload)
	if payload.Event != "campaign_completed" || payload.Campaign["id"] != r.id || payload.Campaign["status"] != "completed" ||
		fmt.Sprint(payload.Campaign["counts"]) != fmt.Sprint(counts) {
		t.Errorf("campaign_completed body %s, campaign counts %v", d.body, counts)
	}
}

// recipients lists every recipient in upload order.
func (r *campaignRun) recipients(s *server) []map[string]any {
	r.t.Helper()
	var out []map[string]any
	for page := 1; ; page++ {
		m := s.must(r.key, 200, "GET", fmt.Sprintf("/v1/campaigns/%s/recipients?pageSize=100&page=%d", r.id, page), nil)
		for _, rc := range m["data"].([]any) {
			out = append(out, rc.(map[string]any))
		}
		if m["hasNextPage"] != true {
			return out
		}
	}
}

// post sends body as contentType with key and decodes the JSON answer.
func (s *server) post(key, path, contentType, body string) (int, map[string]any) {
	s.t.Helper()
	req, _ := http.NewRequest("POST", "http://"+s.addr+path, strings.NewReader(body))
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// campaignHooks records every delivery to the campaign's webhookUrl.
type campaignHooks struct {
	*httptest.Server
	mu   sync.Mutex
	seen []delivery
}

type delivery struct {
	header http.Header
	body   []byte
}

func newCampaignHooks(t *testing.T) *campaignHooks {
	h := &campaignHooks{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		h.mu.Lock()
		h.seen = append(h.seen, delivery{req.Header.Clone(), bytes.Clone(body)})
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *campaignHooks) got() []delivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]delivery(nil), h.seen...)
}

// within is eventually with its own bound, for waits longer than 30 s.
func within(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, bound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SIGKILL mid-campaign on SQLite, and a restart on the same data: the
// campaign goes on where it stopped and completes; every recipient ends as
// its callee behaves (or failed, SERVER_RESTART, when its call was live at
// the kill), no number is dialed more often than its attempts allow, and
// an inbound call placed while the campaign fills its lines is answered on
// the line the organization keeps for it.
func TestCampaignSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	siptest.RequireSipp(t)
	requireLocalSpeech(t)
	bin := build(t)
	sipAddr := fmt.Sprintf("127.0.0.1:%d", freeSIPPort(t))
	env := []string{"PARLEY_DATA_DIR=" + t.TempDir()}
	args := append([]string{"--sip-addr", sipAddr, "--rtp-ports", "33000-33199"}, campaignArgs...)
	start := time.Now()
	s := startServer(t, bin, env, args...)
	key := s.key
	carrier := siptest.UAS(t, "uas_by_number", siptest.Options{Calls: 1000, Limit: 1000, Timeout: 3 * time.Minute, Keys: map[string]string{"hold": "500"}})
	desk := s.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "Front desk", "promptTemplate": "You answer.", "firstMessage": "Front desk."})["data"].(map[string]any)
	s.must(key, 201, "POST", "/v1/phone-numbers", map[string]any{"e164": "+14155559999", "agentId": desk["id"]})
	r := setUpCampaign(t, s, key, carrier)

	// With the campaign on all its lines (its first eight calls answer), a
	// caller gets through on the line kept for inbound calls.
	eventually(t, "the campaign on all its lines", func() bool { return r.live(s) == campLines })
	caller := siptest.UAC(t, "uac_call", sipAddr, siptest.Options{Service: "+14155559999", Keys: map[string]string{"from": "+14155558888", "hold": "500"}})
	if err := caller.Wait(); err != nil {
		t.Fatalf("the inbound call during the campaign: %v", err)
	}

	var before int
	eventually(t, "a third of the list done, calls live", func() bool {
		before = r.finished(s)
		return before >= recipients/3 && r.live(s) >= campLines/2
	})
	s.kill()
	killed := time.Now()

	s = startServer(t, bin, env, args...)
	r.waitCompleted(s)
	t.Logf("killed at %d of %d final, %v in; completed %v after the restart, %v in all",
		before, recipients, killed.Sub(start).Round(time.Second), time.Since(killed).Round(time.Second), time.Since(start).Round(time.Second))
	r.check(s, "SERVER_RESTART")

	var in []map[string]any
	for _, c := range s.calls(key) {
		if c["direction"] == "INBOUND" {
			in = append(in, c)
		}
	}
	if len(in) != 1 || in[0]["toNumber"] != "+14155559999" || in[0]["agentId"] != desk["id"] || in[0]["startedAt"] == nil || in[0]["status"] != "COMPLETED" {
		t.Errorf("inbound calls %v, want the one answered by the front desk", in)
	}
}

// Two servers on one PostgreSQL share a campaign; the one holding its
// dispatch is killed mid-campaign. The survivor takes the dispatch once
// the hold lapses, ends the dead server's calls once their leases lapse
// (LEASE_EXPIRED), and completes the campaign: same outcomes, no number
// dialed more often than its attempts allow, one campaign_completed.
// It runs in make soak (PARLEY_SOAK=1): two servers working the campaign
// under -race cost minutes of make test's budget on 2 cores. make test
// keeps its parts: a killed campaign resuming (TestCampaignSurvivesSIGKILL),
// a lapsed dispatch hold taken over (storetest ClaimDispatch, both
// engines), one dispatcher dialing each attempt once
// (internal/campaign TestTwoDispatchersDialEachAttemptOnce) and a
// survivor ending a dead server's calls (TestSurvivorHangsUpTheDeadServersLegs).
func TestCampaignSharedByTwoServersMinute(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if os.Getenv("PARLEY_SOAK") == "" {
		t.Skip("two servers working a campaign for minutes: make soak (PARLEY_SOAK=1)")
	}
	url := postgresURL(t)
	siptest.RequireSipp(t)
	requireLocalSpeech(t)
	dsn := createSchema(t, url, fmt.Sprintf("campaign_%d", time.Now().UnixNano()))
	bin := build(t)
	env := []string{"PARLEY_DATABASE_URL=" + dsn, "PARLEY_DATA_DIR=" + t.TempDir(), "PARLEY_SECRET_KEY=" + strings.Repeat("ab", 32)}
	start := time.Now()
	servers := map[string]*server{
		"a": startServer(t, bin, env, append([]string{"--node-id", "a", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "33200-33399"}, campaignArgs...)...),
		"b": startServer(t, bin, env, append([]string{"--node-id", "b", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "33400-33599"}, campaignArgs...)...),
	}
	key := servers["a"].key + servers["b"].key // exactly one of them created the first key
	carrier := siptest.UAS(t, "uas_by_number", siptest.Options{Calls: 1000, Limit: 1000, Timeout: 3 * time.Minute, Keys: map[string]string{"hold": "500"}})
	r := setUpCampaign(t, servers["a"], key, carrier)

	var before int
	eventually(t, "a third of the list done, calls live", func() bool {
		before = r.finished(servers["b"])
		return before >= recipients/3 && r.live(servers["b"]) >= campLines/2
	})
	// The server placing the campaign's calls holds its dispatch: kill it.
	placed := func(s *server) float64 {
		return scrape(t, "http://"+s.addr+"/metrics")[`parley_campaign_dials_total{result="placed"}`]
	}
	holder, survivor := servers["a"], servers["b"]
	if placed(survivor) > placed(holder) {
		holder, survivor = survivor, holder
	}
	placedBefore := placed(survivor)
	holder.kill()
	killed := time.Now()

	r.waitCompleted(survivor)
	t.Logf("killed the holder at %d of %d final, %v in; completed %v later, %v in all",
		before, recipients, killed.Sub(start).Round(time.Second), time.Since(killed).Round(time.Second), time.Since(start).Round(time.Second))
	if placed(survivor) == placedBefore {
		t.Error("the survivor placed no call after the kill: it never took the dispatch over")
	}
	r.check(survivor, "LEASE_EXPIRED")
}
