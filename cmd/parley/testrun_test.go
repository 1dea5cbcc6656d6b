package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/siptest"
)

// testRunModel is a fake model playing the three parts of a test run: the
// simulated caller (its lines, then end_call), the agent under test (its
// lines), and the judge, which fails an attempt whose rubric mentions a
// refund and passes the others.
func testRunModel(t *testing.T, caller, agent []string) *llmtest.Server {
	return llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		heard := r.Turns()
		last := r.Messages[len(r.Messages)-1]["role"]
		switch {
		case r.Body["response_format"] != nil:
			raw, _ := json.Marshal(r.Messages)
			if strings.Contains(string(raw), "refund") {
				return llmtest.Reply{Text: []string{`{"passed": false, "reasoning": "The agent never offered the refund the rubric asks for."}`}}
			}
			return llmtest.Reply{Text: []string{`{"passed": true, "reasoning": "The agent booked the table as the rubric asks."}`}}
		case strings.HasPrefix(system, "Summarize"):
			return llmtest.Reply{Text: []string{"A test call."}}
		case last == "tool":
			return llmtest.Reply{}
		case strings.HasPrefix(system, "You are role-playing a person"):
			i := min(heard, len(caller)) - 1
			if heard == 0 { // it speaks first (the agent does not)
				i = 0
			}
			reply := llmtest.Reply{Text: []string{caller[max(i, 0)]}}
			if i >= len(caller)-1 {
				reply.ToolCalls = []llmtest.ToolCallReply{{ID: "call_bye", Name: "end_call", Arguments: "{}"}}
			}
			return reply
		}
		return llmtest.Reply{Text: []string{agent[min(max(heard, 1), len(agent))-1]}}
	})
}

// runHooks records test_run.completed deliveries.
type runHooks struct {
	*httptest.Server
	mu   sync.Mutex
	got  []map[string]any
	head []http.Header
}

func newRunHooks(t *testing.T) *runHooks {
	h := &runHooks{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if r.Header.Get("X-Parley-Event") == "test_run.completed" {
			h.got, h.head = append(h.got, body), append(h.head, r.Header.Clone())
		}
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *runHooks) runs() ([]map[string]any, []http.Header) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.got...), append([]http.Header(nil), h.head...)
}

// callStatus is a call's status, "" while it does not exist yet (an
// attempt names its call just before placing it).
func callStatus(t *testing.T, a api, id string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", a.base+"/calls/"+id, nil)
	req.Header.Set("x-api-key", a.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Data struct{ Status string } }
	if resp.StatusCode == http.StatusNotFound {
		return ""
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /calls/%s: %s %v", id, resp.Status, err)
	}
	return body.Data.Status
}

// awaitRun polls a run until it is no longer running.
func awaitRun(t *testing.T, a api, suiteID, runID string, within time.Duration, logs fmt.Stringer) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		run := a.do("GET", "/test-suites/"+suiteID+"/runs/"+runID, "", 200)
		if run["status"] != "running" {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end within %v: %v\n%s", within, run, logs)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// A suite with a case the agent passes and one whose rubric it fails, two
// attempts each, run for real: every attempt is a loopback call between a
// simulated caller and the agent, with local speech both ways; the judge
// (the fake model) decides. The run ends with the right counters and pass
// rates, every attempt points at two completed, transcribed and recorded
// call records, the simulated callers never show among the agents, and
// test_run.completed reaches the agent's webhook, signed.
func TestTestRunCallsTheAgentOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // each runs its own server; most of a call is waiting for speech
	requireLocalSpeech(t)
	fake := testRunModel(t, []string{"Hi, I would like a table for two tonight.", "Thank you, goodbye."},
		[]string{"Certainly, a table for two tonight is booked.", "You are welcome."})
	hooks := newRunHooks(t)
	srv := startServer(t, build(t), []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "31400-31599",
		"--llm-base-url", fake.URL, "--llm-model", "fake-model")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	a.do("PATCH", "/organization", `{"concurrencyLimit": 4}`, 200)
	a.do("POST", "/organization/webhook-secret", "", 201)
	agent := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Front desk","promptTemplate":"You are the front desk of Luigi's restaurant.",
		"firstMessage":"Luigi's, how can I help?","endCallEnabled":true,"postCallWebhookUrl":%q}`, hooks.URL), 201)
	suite := a.do("POST", "/test-suites", fmt.Sprintf(`{"name":"Bookings","agentId":%q}`, agent["id"]), 201)
	suiteID := suite["id"].(string)
	booking := a.do("POST", "/test-suites/"+suiteID+"/test-cases", `{"name":"Books a table","attempts":2,
		"script":"You are {{who}} and want a table for two tonight.","variables":{"who":"Sam"},
		"scoringRubric":"The agent books the table."}`, 201)
	refund := a.do("POST", "/test-suites/"+suiteID+"/test-cases", `{"name":"Refund","attempts":2,
		"script":"You want a table for two tonight.","scoringRubric":"The agent offers a refund for last week's cold soup."}`, 201)

	run := a.do("POST", "/test-suites/"+suiteID+"/runs", "", 201)
	if run["status"] != "running" || run["mode"] != "call" || run["totalTests"] != 4.0 || len(run["attempts"].([]any)) != 4 {
		t.Fatalf("started run = %v", run)
	}
	run = awaitRun(t, a, suiteID, run["id"].(string), 5*time.Minute, srv.logs)
	if run["status"] != "completed" || run["totalTests"] != 4.0 || run["passedTests"] != 2.0 || run["failedTests"] != 2.0 {
		t.Fatalf("run ended %v: %v passed, %v failed of %v\n%v", run["status"], run["passedTests"], run["failedTests"], run["totalTests"], run)
	}
	rates := map[string]any{}
	for _, cr := range run["caseResults"].([]any) {
		cr := cr.(map[string]any)
		rates[cr["testCaseId"].(string)] = cr["passRate"]
	}
	if rates[booking["id"].(string)] != 1.0 || rates[refund["id"].(string)] != 0.0 {
		t.Errorf("pass rates %v", rates)
	}
	for _, at := range run["attempts"].([]any) {
		at := at.(map[string]any)
		name := fmt.Sprintf("%v #%v", at["testCaseName"], at["attemptNumber"])
		if want := at["testCaseId"] == booking["id"]; at["passed"] != want || at["reasoning"] == "" || at["errorMessage"] != nil {
			t.Errorf("%s: passed %v (want %v), reasoning %q, error %v", name, at["passed"], want, at["reasoning"], at["errorMessage"])
		}
		out := a.do("GET", "/calls/"+at["callId"].(string), "", 200)
		in := a.do("GET", "/calls/"+at["inboundCallId"].(string), "", 200)
		if out["direction"] != "OUTBOUND" || in["direction"] != "INBOUND" || out["status"] != "COMPLETED" || in["status"] != "COMPLETED" {
			t.Errorf("%s: calls %v %v %v / %v %v %v", name, out["direction"], out["status"], out["hangupCause"], in["direction"], in["status"], in["hangupCause"])
		}
		if in["agentId"] != agent["id"] || !strings.HasPrefix(fmt.Sprint(out["agentName"]), "Simulated caller: ") {
			t.Errorf("%s: the legs belong to %v and %v", name, in["agentName"], out["agentName"])
		}
		for _, c := range []map[string]any{out, in} {
			if len(c["transcript"].([]any)) == 0 || c["recordingUrl"] == nil {
				t.Errorf("%s: call %v has transcript %v and recording %v", name, c["id"], c["transcript"], c["recordingUrl"])
			}
			req, _ := http.NewRequest("GET", a.base+"/calls/"+c["id"].(string)+"/recording", nil)
			req.Header.Set("x-api-key", a.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			wav, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || len(wav) < 8000 {
				t.Errorf("%s: recording of %v: %d, %d bytes", name, c["id"], resp.StatusCode, len(wav))
			}
		}
		if got, want := len(at["transcript"].([]any)), len(in["transcript"].([]any)); got != want {
			t.Errorf("%s: the attempt's transcript has %d entries, the agent's call %d", name, got, want)
		}
		if in["fromNumber"] != "simulated-caller" {
			t.Errorf("%s: the agent's call came from %v", name, in["fromNumber"])
		}
	}
	agents := a.do("GET", "/agents", "", 200)
	if agents["total"] != 1.0 {
		t.Errorf("the organization lists %v agents, want only the front desk: %v", agents["total"], agents["data"])
	}
	eventually(t, "test_run.completed delivered", func() bool { got, _ := hooks.runs(); return len(got) == 1 })
	got, head := hooks.runs()
	tr, _ := got[0]["testRun"].(map[string]any)
	if got[0]["event"] != "test_run.completed" || tr["id"] != run["id"] || tr["passedTests"] != 2.0 || len(tr["attempts"].([]any)) != 4 {
		t.Errorf("test_run.completed = %v", got[0])
	}
	if !strings.HasPrefix(head[0].Get("X-Parley-Signature"), "t=") {
		t.Errorf("test_run.completed is not signed: %v", head[0])
	}
}

// A run of ten attempts under a limit of two lines never has more than two
// calls live (each attempt holds two), and an ordinary call placed during
// the run is answered and completes while the run goes on.
func TestTestRunSharesTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // each runs its own server; most of a call is waiting for speech
	requireLocalSpeech(t)
	siptest.RequireSipp(t)
	fake := testRunModel(t, []string{"Hello, goodbye."}, []string{"Hello."})
	srv := startServer(t, build(t), []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "31600-31799",
		"--llm-base-url", fake.URL, "--llm-model", "fake-model")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	a.do("PATCH", "/organization", `{"concurrencyLimit": 2}`, 200)
	silent := a.do("POST", "/agents", `{"name":"Listener","promptTemplate":"You listen."}`, 201)
	suite := a.do("POST", "/test-suites", fmt.Sprintf(`{"name":"Load","agentId":%q}`, silent["id"]), 201)
	suiteID := suite["id"].(string)
	a.do("POST", "/test-suites/"+suiteID+"/test-cases", `{"name":"Hangs up","attempts":10,
		"script":"Say hello and hang up.","scoringRubric":"The agent stays polite."}`, 201)

	// An ordinary agent calling out through a trunk to sipp, which answers
	// and hangs up after a second.
	uas := siptest.UAS(t, "uas_answer_bye", siptest.Options{Keys: map[string]string{"hold": "1000"}, Timeout: 5 * time.Minute})
	host, port, _ := strings.Cut(uas.Addr(), ":")
	trunk := a.do("POST", "/sip-trunks", fmt.Sprintf(`{"friendlyName":"sipp","host":%q,"port":%s,"transport":"udp"}`, host, port), 201)
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Reminder","promptTemplate":"You remind.","sipTrunkId":%q,
		"maxConversationDurationSeconds":20}`, trunk["id"]), 201)

	var (
		mu      sync.Mutex
		maxLive int
		stop    = make(chan struct{})
		sampled = make(chan struct{})
	)
	go func() { // samples the live calls as the API lists them
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			req, _ := http.NewRequest("GET", a.base+"/calls?status=INITIATED,RINGING,IN_PROGRESS&pageSize=100", nil)
			req.Header.Set("x-api-key", a.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			var page struct{ Total int }
			json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			mu.Lock()
			maxLive = max(maxLive, page.Total)
			mu.Unlock()
		}
	}()
	run := a.do("POST", "/test-suites/"+suiteID+"/runs", "", 201)
	runID := run["id"].(string)
	eventually(t, "the first attempt running", func() bool {
		r := a.do("GET", "/test-suites/"+suiteID+"/runs/"+runID, "", 200)
		return r["attempts"].([]any)[0].(map[string]any)["status"] == "running"
	})
	normal := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"toNumber":"+15550002222","fromNumber":"+15550001111"}`, caller["id"]), 201)
	var normalEnd map[string]any
	deadline := time.Now().Add(5 * time.Minute)
	for normalEnd == nil || run["status"] == "running" {
		if time.Now().After(deadline) {
			t.Fatalf("run %v, ordinary call %v\n%s", run, normalEnd, srv.logs)
		}
		time.Sleep(250 * time.Millisecond)
		if c := a.do("GET", "/calls/"+normal["id"].(string), "", 200); c["endedAt"] != nil && normalEnd == nil {
			normalEnd = c
			r := a.do("GET", "/test-suites/"+suiteID+"/runs/"+runID, "", 200)
			if r["status"] != "running" {
				t.Errorf("the ordinary call ended only after the run: it waited for all ten attempts")
			}
		}
		run = a.do("GET", "/test-suites/"+suiteID+"/runs/"+runID, "", 200)
	}
	close(stop)
	<-sampled
	if normalEnd["status"] != "COMPLETED" {
		t.Errorf("the ordinary call ended %v %v %v", normalEnd["status"], normalEnd["hangupCause"], normalEnd["errorMessage"])
	}
	if run["status"] != "completed" || run["totalTests"] != 10.0 || run["passedTests"] != 10.0 {
		t.Errorf("run ended %v with %v of %v passed: %v", run["status"], run["passedTests"], run["totalTests"], run)
	}
	mu.Lock()
	defer mu.Unlock()
	if maxLive > 2 || maxLive == 0 {
		t.Errorf("at most %d calls were live at once, want 2 at most (and some)", maxLive)
	}
	for _, at := range run["attempts"].([]any) {
		at := at.(map[string]any)
		if c := a.do("GET", "/calls/"+fmt.Sprint(at["inboundCallId"]), "", 200); c["status"] != "COMPLETED" {
			t.Errorf("attempt %v: the agent's call ended %v %v", at["attemptNumber"], c["status"], c["hangupCause"])
		}
	}
}

// SIGKILL while an attempt's call is live: after the restart the run goes
// on. The cut attempt ends failed, naming the restart; the attempt not yet
// started is run and judged.
func TestTestRunSurvivesARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // each runs its own server; most of a call is waiting for speech
	requireLocalSpeech(t)
	fake := testRunModel(t, []string{"Hi, I would like a table for two tonight.", "Thank you, goodbye."},
		[]string{"Certainly, a table for two tonight is booked.", "You are welcome."})
	bin := build(t)
	env := []string{"PARLEY_DATA_DIR=" + t.TempDir()}
	args := []string{"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "31800-31899",
		"--llm-base-url", fake.URL, "--llm-model", "fake-model"}
	srv := startServer(t, bin, env, args...)
	key := srv.key
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: key}
	a.do("PATCH", "/organization", `{"concurrencyLimit": 2}`, 200)
	agent := a.do("POST", "/agents", `{"name":"Front desk","promptTemplate":"You are the front desk.",
		"firstMessage":"Luigi's, how can I help?","endCallEnabled":true}`, 201)
	suite := a.do("POST", "/test-suites", fmt.Sprintf(`{"name":"Bookings","agentId":%q}`, agent["id"]), 201)
	suiteID := suite["id"].(string)
	a.do("POST", "/test-suites/"+suiteID+"/test-cases", `{"name":"Books a table","attempts":2,
		"script":"You want a table for two tonight.","scoringRubric":"The agent books the table."}`, 201)
	run := a.do("POST", "/test-suites/"+suiteID+"/runs", "", 201)
	runID := run["id"].(string)
	var cut string
	eventually(t, "the first attempt's call in progress", func() bool {
		first := a.do("GET", "/test-suites/"+suiteID+"/runs/"+runID, "", 200)["attempts"].([]any)[0].(map[string]any)
		id, _ := first["callId"].(string)
		if id == "" {
			return false
		}
		cut = id
		return callStatus(t, a, id) == "IN_PROGRESS"
	})
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Wait()

	srv = startServer(t, bin, env, args...)
	a.base = "http://" + srv.addr + "/v1"
	run = awaitRun(t, a, suiteID, runID, 4*time.Minute, srv.logs)
	if run["status"] != "completed" || run["totalTests"] != 2.0 || run["passedTests"] != 1.0 || run["failedTests"] != 1.0 {
		t.Fatalf("after the restart the run ended %v with %v passed and %v failed: %v", run["status"], run["passedTests"], run["failedTests"], run)
	}
	attempts := run["attempts"].([]any)
	first := attempts[0].(map[string]any)
	if first["callId"] != cut || first["status"] != "failed" || first["passed"] != nil ||
		!strings.Contains(fmt.Sprint(first["errorMessage"]), "SERVER_RESTART") {
		t.Errorf("the cut attempt = %v", first)
	}
	if c := a.do("GET", "/calls/"+cut, "", 200); c["status"] != "FAILED" || c["hangupCause"] != "SERVER_RESTART" {
		t.Errorf("the cut call ended %v %v", c["status"], c["hangupCause"])
	}
	for _, at := range attempts[1:] {
		if at := at.(map[string]any); at["status"] != "passed" || at["inboundCallId"] == nil {
			t.Errorf("attempt after the restart = %v", at)
		}
	}
}

// Canceling a run mid-call hangs the attempt's call up (both legs end),
// fails every unfinished attempt with the reason, and the attempt whose
// call ends afterwards keeps that reason: nothing overwrites a canceled run.
func TestTestRunCancelHangsUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // each runs its own server; most of a call is waiting for speech
	requireLocalSpeech(t)
	fake := testRunModel(t, []string{"Hi, I would like a table for two tonight.", "At eight, please.", "Under the name Sam.", "Goodbye."},
		[]string{"Certainly. At what time?", "And the name?", "Booked.", "Goodbye."})
	srv := startServer(t, build(t), []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "31900-31999",
		"--llm-base-url", fake.URL, "--llm-model", "fake-model")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	a.do("PATCH", "/organization", `{"concurrencyLimit": 2}`, 200)
	agent := a.do("POST", "/agents", `{"name":"Front desk","promptTemplate":"You are the front desk.","firstMessage":"Luigi's, how can I help?"}`, 201)
	suite := a.do("POST", "/test-suites", fmt.Sprintf(`{"name":"Bookings","agentId":%q}`, agent["id"]), 201)
	suiteID := suite["id"].(string)
	a.do("POST", "/test-suites/"+suiteID+"/test-cases", `{"name":"Books a table","attempts":3,
		"script":"You want a table for two tonight.","scoringRubric":"The agent books the table."}`, 201)
	runID := a.do("POST", "/test-suites/"+suiteID+"/runs", "", 201)["id"].(string)
	var callID string
	eventually(t, "the first attempt's call in progress", func() bool {
		first := a.do("GET", "/test-suites/"+suiteID+"/runs/"+runID, "", 200)["attempts"].([]any)[0].(map[string]any)
		callID, _ = first["callId"].(string)
		return callID != "" && callStatus(t, a, callID) == "IN_PROGRESS"
	})
	run := a.do("POST", "/test-suites/"+suiteID+"/runs/"+runID+"/cancel", "", 200)
	if run["status"] != "canceled" || run["failedTests"] != 3.0 || run["completedAt"] == nil {
		t.Fatalf("canceled run = %v", run)
	}
	a.do("POST", "/test-suites/"+suiteID+"/runs/"+runID+"/cancel", "", 409)
	caller := a.do("GET", "/calls/"+callID, "", 200)
	if caller["status"] != "COMPLETED" || caller["hangupCause"] != "API_ENDED" {
		t.Errorf("the attempt's call ended %v %v", caller["status"], caller["hangupCause"])
	}
	var inbound map[string]any
	eventually(t, "the agent's leg ended", func() bool {
		list := a.do("GET", "/calls?direction=INBOUND", "", 200)["data"].([]any)
		if len(list) != 1 {
			return false
		}
		inbound = list[0].(map[string]any)
		return inbound["endedAt"] != nil
	})
	if inbound["status"] != "COMPLETED" || inbound["hangupCause"] != "USER_ENDED" {
		t.Errorf("the agent's leg ended %v %v", inbound["status"], inbound["hangupCause"])
	}
	// With both legs over, the attempts are as the cancel left them (the
	// runner keeps an attempt it finds final).
	run = a.do("GET", "/test-suites/"+suiteID+"/runs/"+runID, "", 200)
	for i, at := range run["attempts"].([]any) {
		at := at.(map[string]any)
		if at["status"] != "failed" || at["errorMessage"] != "the run was canceled" || at["passed"] != nil {
			t.Errorf("attempt %d = %v", i+1, at)
		}
		if i > 0 && at["callId"] != nil {
			t.Errorf("attempt %d placed a call after the cancel: %v", i+1, at["callId"])
		}
	}
	if calls := a.do("GET", "/calls", "", 200); calls["total"] != 2.0 {
		t.Errorf("%v calls after the cancel, want the first attempt's two", calls["total"])
	}
}

// Two servers on one PostgreSQL: the one running a run is killed mid-call;
// once its leases lapse the other ends the cut call (LEASE_EXPIRED), takes
// the run over, fails the cut attempt naming the cause, and runs the rest.
func TestTestRunMovesToAnotherServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	url := postgresURL(t)
	requireLocalSpeech(t)
	t.Parallel() // see TestTestRunCallsTheAgentOffline
	fake := testRunModel(t, []string{"Hi, I would like a table for two tonight.", "Thank you, goodbye."},
		[]string{"Certainly, a table for two tonight is booked.", "You are welcome."})
	bin := build(t)
	dsn := createSchema(t, url, fmt.Sprintf("testrun_%d", time.Now().UnixNano()))
	env := []string{"PARLEY_DATABASE_URL=" + dsn, "PARLEY_DATA_DIR=" + t.TempDir(), "PARLEY_SECRET_KEY=" + strings.Repeat("cd", 32)}
	args := func(node, rtp string) []string {
		return []string{"--node-id", node, "--call-lease", "3s", "--dialer", "sip", "--sip-addr", "127.0.0.1:0",
			"--rtp-ports", rtp, "--llm-base-url", fake.URL, "--llm-model", "fake-model"}
	}
	first := startServer(t, bin, env, args("a", "32000-32099")...)
	second := startServer(t, bin, env, args("b", "32100-32199")...)
	key := first.key + second.key // exactly one of them created the first key
	a := api{t: t, base: "http://" + first.addr + "/v1", key: key}
	a.do("PATCH", "/organization", `{"concurrencyLimit": 2}`, 200)
	agent := a.do("POST", "/agents", `{"name":"Front desk","promptTemplate":"You are the front desk.",
		"firstMessage":"Luigi's, how can I help?","endCallEnabled":true}`, 201)
	suiteID := a.do("POST", "/test-suites", fmt.Sprintf(`{"name":"Bookings","agentId":%q}`, agent["id"]), 201)["id"].(string)
	a.do("POST", "/test-suites/"+suiteID+"/test-cases", `{"name":"Books a table","attempts":2,
		"script":"You want a table for two tonight.","scoringRubric":"The agent books the table."}`, 201)
	runID := a.do("POST", "/test-suites/"+suiteID+"/runs", "", 201)["id"].(string)
	var cut string
	eventually(t, "the first attempt's call in progress", func() bool {
		at := a.do("GET", "/test-suites/"+suiteID+"/runs/"+runID, "", 200)["attempts"].([]any)[0].(map[string]any)
		cut, _ = at["callId"].(string)
		return cut != "" && callStatus(t, a, cut) == "IN_PROGRESS"
	})
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.cmd.Wait()

	a.base = "http://" + second.addr + "/v1"
	run := awaitRun(t, a, suiteID, runID, 4*time.Minute, second.logs)
	if run["status"] != "completed" || run["passedTests"] != 1.0 || run["failedTests"] != 1.0 {
		t.Fatalf("the run ended %v with %v passed and %v failed: %v", run["status"], run["passedTests"], run["failedTests"], run)
	}
	attempts := run["attempts"].([]any)
	if at := attempts[0].(map[string]any); at["callId"] != cut || at["status"] != "failed" ||
		!strings.Contains(fmt.Sprint(at["errorMessage"]), "LEASE_EXPIRED") {
		t.Errorf("the cut attempt = %v", at)
	}
	if at := attempts[1].(map[string]any); at["status"] != "passed" || at["inboundCallId"] == nil {
		t.Errorf("the attempt run by the second server = %v", at)
	}
}
