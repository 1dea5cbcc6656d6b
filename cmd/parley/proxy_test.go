package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/objecttest"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/siptest"
)

// node is one of several Parley servers behind a SIP proxy: its own
// loopback address (127.0.0.2, 127.0.0.3 ...: a Contact or SDP address
// that names 127.0.0.1, or the wrong server, shows), a fixed SIP port the
// proxy's list names, and its own data directory, as on its own machine.
type node struct {
	name, ip string
	sipPort  int
	dataDir  string
	args     []string
	srv      *server // set by start, on the test's goroutine
	earlier  string  // the logs of its runs before srv

	mu      sync.Mutex
	apiAddr string // srv.addr, for the load's goroutine
}

// api is the HTTP address of n's current run.
func (n *node) api() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.apiAddr
}

func (n *node) sipAddr() string { return net.JoinHostPort(n.ip, fmt.Sprint(n.sipPort)) }

func (n *node) start(t testing.TB, bin string, env []string) {
	t.Helper()
	if n.srv != nil {
		n.earlier += n.srv.logs.String() + "--- restart ---\n"
	}
	n.srv = startServer(t, bin, append(slices.Clone(env), "PARLEY_DATA_DIR="+n.dataDir), n.args...)
	n.mu.Lock()
	n.apiAddr = n.srv.addr
	n.mu.Unlock()
}

// freePortOn is a port free on ip for both UDP and TCP a moment ago.
func freePortOn(t testing.TB, ip string) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("%s:%d", ip, p))
		l.Close()
		if err == nil {
			u.Close()
			return p
		}
	}
	t.Fatalf("no port free on %s for both UDP and TCP", ip)
	return 0
}

// proxyRig is two servers on one PostgreSQL and one object store (a real
// versitygw), each on its own loopback address, behind Kamailio's
// dispatcher, with an organization whose number +14155559999 rings the
// Desk agent.
type proxyRig struct {
	nodes []*node
	proxy *siptest.Kamailio
	store *objecttest.Server
	key   string
	bin   string
	env   []string
}

// startProxyRig starts the rig with model as the servers' language model;
// extra are more serve flags for both servers.
func startProxyRig(t testing.TB, model func(llmtest.Request) llmtest.Reply, extra ...string) *proxyRig {
	t.Helper()
	url := postgresURL(t)
	siptest.RequireKamailio(t)
	siptest.RequireSipp(t)
	requireLocalSpeech(t)
	objecttest.Require(t)
	dsn := createSchema(t, url, fmt.Sprintf("proxy_%d", time.Now().UnixNano()))
	fake := llmtest.New(t, model)
	store := objecttest.Start(t)
	r := &proxyRig{bin: build(t), store: store, env: append(store.Env(), "PARLEY_RECORDINGS_URL="+store.URL("calls"),
		"PARLEY_DATABASE_URL="+dsn, "PARLEY_SECRET_KEY="+strings.Repeat("ab", 32),
		"PARLEY_LLM_BASE_URL="+fake.URL, "PARLEY_LLM_API_KEY=k")}
	r.nodes = []*node{{name: "a", ip: "127.0.0.2"}, {name: "b", ip: "127.0.0.3"}}
	for i, n := range r.nodes {
		n.sipPort, n.dataDir = freePortOn(t, n.ip), t.TempDir()
		n.args = append([]string{"--addr", n.ip + ":0", "--node-id", n.name, "--dialer", "sip",
			"--sip-addr", n.sipAddr(), "--rtp-ports", fmt.Sprintf("%d-%d", 34000+400*i, 34399+400*i),
			// Every call comes from the proxy's one address: no per-source bucket for it.
			"--sip-invite-exempt", "127.0.0.1",
			// Calls last seconds: the drain lets every one finish.
			"--call-drain", "30s", "--call-lease", "5s", "--rate-limit", "0"}, extra...)
		n.start(t, r.bin, r.env)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range r.nodes {
				t.Logf("server %s's log but HTTP requests:\n%s", n.name, tail(withoutRequests(n.earlier+n.srv.logs.String()), 30000))
			}
		}
	})
	r.key = r.nodes[0].srv.key + r.nodes[1].srv.key // exactly one of them created the first key
	if !keyLine.MatchString(r.key) {
		t.Fatalf("first key %q", r.key)
	}
	r.proxy = siptest.StartDispatcher(t, siptest.DispatcherOptions{Servers: []string{r.nodes[0].sipAddr(), r.nodes[1].sipAddr()}})
	a := r.nodes[0].srv
	a.must(r.key, 200, "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 1000})
	desk := a.must(r.key, 201, "POST", "/v1/agents", map[string]any{"name": "Desk", "promptTemplate": "You answer.",
		"firstMessage": "Hello.", "firstMessageMode": "static"})["data"].(map[string]any)
	a.must(r.key, 201, "POST", "/v1/phone-numbers", map[string]any{"e164": "+14155559999", "agentId": desk["id"]})
	return r
}

// dispatchedTo counts the calls the proxy has sent to n.
func (r *proxyRig) dispatchedTo(n *node) int {
	c := 0
	for _, to := range r.proxy.Dispatched() {
		if to == n.sipAddr() {
			c++
		}
	}
	return c
}

// outboundLoad places a call through the API at a steady pace until
// stopped, on the first server that takes it: a load balancer in front of
// the API sends each request to a server whose /readyz is 200, and a
// draining server answers the API 503.
type outboundLoad struct {
	mu      sync.Mutex
	ids     []string
	refused []string // requests no server took
}

func (o *outboundLoad) run(nodes []*node, key, agentID string, every time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		body := fmt.Sprintf(`{"agentId":%q,"toNumber":"+1415555%04d","fromNumber":"+14155550100"}`, agentID, i)
		var tries []string
		placed := false
		for k := range nodes {
			n := nodes[(i+k)%len(nodes)] // alternate the first choice
			req, _ := http.NewRequest("POST", "http://"+n.api()+"/v1/calls", strings.NewReader(body))
			req.Header.Set("x-api-key", key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil { // stopped: its address is gone until it starts again
				tries = append(tries, n.name+": "+err.Error())
				continue
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusCreated {
				var id string
				if m := regexp.MustCompile(`"id":"([^"]+)"`).FindSubmatch(raw); m != nil {
					id = string(m[1])
				}
				o.mu.Lock()
				o.ids = append(o.ids, id)
				o.mu.Unlock()
				placed = true
				break
			}
			tries = append(tries, fmt.Sprintf("%s: %d %s", n.name, resp.StatusCode, raw))
		}
		if !placed {
			o.mu.Lock()
			o.refused = append(o.refused, strings.Join(tries, "; "))
			o.mu.Unlock()
		}
	}
}

// Two servers on one PostgreSQL behind a real Kamailio (dispatcher module,
// OPTIONS probes, failover on 503 or silence), each on its own address:
// sipp calls in through Kamailio and the API calls out to a sipp carrier,
// both at a steady pace, while each server in turn is stopped with SIGTERM,
// waited for and started again. No call fails or is refused, both servers
// take calls before and after their restarts, Kamailio marks a draining
// server down and a restarted one up, every Contact and SDP address names
// the server that answered, and every call's recording downloads (from
// every server when they share an object store) with the carrier's audio in
// the caller's channel of outbound calls: media reached the address the SDP
// named.
func TestRollingRestartBehindKamailio(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	// The carrier's tone can pass for speech: a model that says nothing
	// keeps those calls going.
	r := startProxyRig(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{} })
	nodes, proxy, key, bin, env := r.nodes, r.proxy, r.key, r.bin, r.env
	a := nodes[0].srv
	carrier := siptest.UAS(t, "uas_answer_bye", siptest.Options{Calls: 10000, Limit: 200, Timeout: 5 * time.Minute,
		Keys: map[string]string{"hold": "2000"}})
	host, port, _ := net.SplitHostPort(carrier.Addr())
	trunk := a.must(key, 201, "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "carrier", "host": host, "port": mustAtoi(t, port), "transport": "udp"})["data"].(map[string]any)
	caller := a.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "Caller", "promptTemplate": "You listen.",
		"sipTrunkId": trunk["id"]})["data"].(map[string]any)

	// The load: a call in through the proxy every half second and one out
	// through the API every second, each talking for 2 s.
	inbound := siptest.UAC(t, "uac_call", proxy.Addr(), siptest.Options{Service: "+14155559999", Calls: 10000, Limit: 50, Rate: 2,
		Timeout: 5 * time.Minute, Keys: map[string]string{"from": "+14155558888", "hold": "2000"}})
	var out outboundLoad
	stop := make(chan struct{})
	var load sync.WaitGroup
	load.Go(func() { out.run(nodes, key, caller["id"].(string), time.Second, stop) })
	stopLoad := sync.OnceFunc(func() { close(stop); load.Wait() })
	defer stopLoad()

	start := time.Now()
	eventually(t, "both servers taking calls from the proxy", func() bool {
		return r.dispatchedTo(nodes[0]) >= 2 && r.dispatchedTo(nodes[1]) >= 2
	})
	for _, n := range nodes {
		before := r.dispatchedTo(n)
		downs, ups := proxy.Marked(n.sipAddr(), "down", ""), proxy.Marked(n.sipAddr(), "up", "")
		stopped := time.Now()
		if err := n.srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// Down by the first INVITE it refuses or by the first probe, and
		// kept down by the probes (OPTIONS 503) until it has exited.
		eventually(t, "the proxy marking draining "+n.name+" down", func() bool { return proxy.Marked(n.sipAddr(), "down", "") > downs })
		markedDown := time.Since(stopped)
		select {
		case <-n.srv.eof:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s still running 60 s after SIGTERM", n.name)
		}
		if err := n.srv.cmd.Wait(); err != nil {
			t.Fatalf("%s exit after SIGTERM: %v\n%s", n.name, err, n.srv.logs)
		}
		exited := time.Since(stopped)
		if up := proxy.Marked(n.sipAddr(), "up", ""); up != ups {
			t.Errorf("the proxy's probes marked draining %s up again %d times", n.name, up-ups)
		}
		n.start(t, bin, env)
		eventually(t, "the proxy marking restarted "+n.name+" up", func() bool { return proxy.Marked(n.sipAddr(), "up", "") > ups })
		eventually(t, "restarted "+n.name+" taking calls again", func() bool { return r.dispatchedTo(n) >= before+2 })
		t.Logf("%s: marked down %v after SIGTERM, exited after %v, back in rotation %v after SIGTERM",
			n.name, markedDown.Round(time.Millisecond), exited.Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond))
	}
	inbound.Quit()
	stopLoad()
	if err := inbound.Wait(); err != nil {
		t.Errorf("callers through the proxy: %v", err)
	}
	succeeded, failed, _ := inbound.Counts()
	t.Logf("%v of load: %d calls in (%d failed), %d out; %d INVITEs sent on to the other server",
		time.Since(start).Round(time.Second), succeeded, failed, len(out.ids), proxy.Failovers())
	if failed != 0 || succeeded == 0 {
		t.Errorf("sipp: %d calls through the proxy succeeded, %d failed", succeeded, failed)
	}
	if len(out.refused) != 0 {
		t.Errorf("%d outbound calls refused by every server: %v", len(out.refused), out.refused)
	}

	// Every call ends COMPLETED and its recording downloads.
	s := nodes[1].srv
	eventually(t, "every call ended", func() bool {
		_, m := s.do(key, "GET", "/v1/calls?status=QUEUED,INITIATED,RINGING,IN_PROGRESS", nil)
		return m["total"] == float64(0)
	})
	calls := s.calls(key)
	in := 0
	for id, c := range calls {
		if c["direction"] == "INBOUND" {
			in++
		}
		if c["status"] != "COMPLETED" {
			t.Errorf("call %s (%v) ended %v / %v: %v", id, c["direction"], c["status"], c["hangupCause"], c["errorMessage"])
		}
	}
	if in != succeeded || len(calls) != in+len(out.ids) {
		t.Errorf("%d call records, %d inbound; sipp completed %d calls in and the API placed %d out", len(calls), in, succeeded, len(out.ids))
	}
	checkAddresses(t, nodes, inbound, carrier)
	checkRecordings(t, r, key, calls)
}

// checkRecordings waits until the object store holds every call's
// recording (uploaded at the call's end, by whichever server took it) and
// downloads each through every server, whole and with a range request. An
// outbound call's caller channel holds the carrier's tone.
func checkRecordings(t *testing.T, r *proxyRig, key string, calls map[string]map[string]any) {
	t.Helper()
	stored := func() map[string]bool {
		have := map[string]bool{}
		for _, k := range r.store.Objects("calls") {
			have[strings.TrimSuffix(k[strings.LastIndexByte(k, '/')+1:], ".wav")] = true
		}
		return have
	}
	eventually(t, "every recording in the object store", func() bool {
		have := stored()
		for id := range calls {
			if !have[id] {
				return false
			}
		}
		return true
	})
	for id, c := range calls {
		if c["recordingUrl"] == nil {
			t.Errorf("call %s has no recordingUrl", id)
			continue
		}
		for _, n := range r.nodes {
			body := download(t, n, key, id, "")
			if body == nil {
				continue
			}
			wav, err := audio.ReadWAV(bytes.NewReader(body))
			if err != nil || len(wav.Channels) != 2 {
				t.Errorf("call %s's recording from %s: %v (%d bytes)", id, n.name, err, len(body))
				continue
			}
			if c["direction"] == "OUTBOUND" && len(speechSpans(wav.Channels[0], wav.Rate)) == 0 {
				t.Errorf("call %s's recording from %s: no carrier audio in the caller's channel", id, n.name)
			}
			if part := download(t, n, key, id, "bytes=44-1067"); part != nil && !bytes.Equal(part, body[44:1068]) {
				t.Errorf("call %s's recording from %s: bytes 44-1067 differ from the whole file's", id, n.name)
			}
		}
	}
}

// download GETs a call's recording through n, with a Range header unless
// ranged is ""; nil (and the test failed) unless it answers 200, or 206
// to a range.
func download(t *testing.T, n *node, key, id, ranged string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+n.srv.addr+"/v1/calls/"+id+"/recording", nil)
	req.Header.Set("x-api-key", key)
	want := http.StatusOK
	if ranged != "" {
		req.Header.Set("Range", ranged)
		want = http.StatusPartialContent
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Errorf("GET call %s's recording from %s (Range %q) = %d, want %d: %s", id, n.name, ranged, resp.StatusCode, want, tail(string(body), 200))
		return nil
	}
	return body
}

var (
	contactHost = regexp.MustCompile(`(?m)^Contact: <sip:[^@>]*@?([0-9.]+):\d+`)
	sdpHost     = regexp.MustCompile(`(?m)^c=IN IP4 ([0-9.]+)`)
)

// checkAddresses reads what the callers and the carrier received from
// Parley: each 200 answering an INVITE (inbound) and each INVITE (outbound)
// carries a Contact and an SDP connection address, and both must name one
// server's own address, the same one.
func checkAddresses(t *testing.T, nodes []*node, peers ...*siptest.Sipp) {
	t.Helper()
	own := map[string]bool{}
	for _, n := range nodes {
		own[n.ip] = true
	}
	seen, bad := map[string]int{}, 0
	for _, p := range peers {
		for _, msg := range p.Received() {
			msg = strings.ReplaceAll(msg, "\r", "")
			first, _, _ := strings.Cut(msg, "\n")
			if !(strings.HasPrefix(first, "INVITE ") || strings.HasPrefix(first, "SIP/2.0 200") && strings.Contains(msg, "\nCSeq: 1 INVITE")) {
				continue
			}
			contact, sdp := contactHost.FindStringSubmatch(msg), sdpHost.FindStringSubmatch(msg)
			if contact == nil || sdp == nil || !own[contact[1]] || sdp[1] != contact[1] {
				if bad++; bad <= 3 { // the first few say enough
					t.Errorf("%s from Parley: Contact %v, SDP address %v; want one server's own address (%v):\n%s", first, contact, sdp, slices.Sorted(maps.Keys(own)), msg)
				}
				continue
			}
			seen[contact[1]]++
		}
	}
	if bad > 3 {
		t.Errorf("%d messages from Parley named a wrong address", bad)
	}
	if len(seen) != len(nodes) {
		t.Errorf("Contact addresses seen: %v", seen)
	}
}

func mustAtoi(t testing.TB, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// withoutRequests drops the HTTP request lines from a server's log.
func withoutRequests(log string) string {
	var b strings.Builder
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, `"msg":"request"`) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
