package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

// The README's quick start, run verbatim with bash on a fresh copy of the
// tree: `make run`, the agent and loopback-call commands, the wait for the
// call's end and the recording's download. Offline, both agents' first
// messages are on the recording and the side that first needs the model
// ends FAILED naming --llm-base-url; then, restarted with the README's `make run
// ARGS=...` line pointed at a fake model, the same call block gives a call
// in which both agents take model turns until the front desk hangs up.
func TestReadmeQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the quick start")
	}
	requireLocalSpeech(t)
	for _, bin := range []string{"make", "bash", "curl", "sed", "git"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing: the quick start needs it (scripts/deps.sh installs curl)", bin)
			}
			t.Skipf("%s is missing", bin)
		}
	}
	for _, addr := range []struct{ network, addr string }{{"tcp", "127.0.0.1:8080"}, {"udp", "0.0.0.0:5060"}, {"tcp", "0.0.0.0:5060"}} {
		if err := portFree(addr.network, addr.addr); err != nil {
			t.Fatalf("the README's quick start needs %s %s free: %v", addr.network, addr.addr, err)
		}
	}
	started := time.Now()
	blocks := readmeBlocks(t, "../../README.md")
	dir := freshCopy(t, "../..")

	// Offline: make run as the README says, then its commands in order.
	srv := makeRun(t, dir, blocks.one(t, "serve"))
	if srv.key == "" {
		t.Fatalf("make run printed no API key on its first start:\n%s", srv.logs)
	}
	if !strings.Contains(srv.logs.String(), "building bin/parley") {
		t.Errorf("make run did not say it was building:\n%s", srv.logs)
	}
	vars := filepath.Join(t.TempDir(), "vars.sh")
	session := strings.Replace(blocks.one(t, "session"), "=pk_live_...", "="+srv.key, 1)
	if session == blocks.one(t, "session") {
		t.Fatal("the README's session block has no PARLEY_KEY=pk_live_... placeholder")
	}
	var script strings.Builder
	script.WriteString(session + "\n")
	for _, b := range blocks.runs {
		script.WriteString(b + "\n")
	}
	fmt.Fprintf(&script, "declare -p %s > %q\n", strings.Join(blocks.variables(), " "), vars)
	runScript(t, dir, script.String())
	outbound, inbound := lastCalls(t, srv.key)
	// The side that first needs the model fails (usually the front desk,
	// answering the patient); the other is hung up on.
	failed, other := inbound, outbound
	if outbound["status"] == "FAILED" {
		failed, other = outbound, inbound
	}
	if failed["status"] != "FAILED" || !strings.Contains(fmt.Sprint(failed["errorMessage"]), "--llm-base-url") ||
		other["status"] != "COMPLETED" || other["hangupCause"] != "USER_ENDED" {
		t.Errorf("offline, the front desk's side ended %v %v %v and the patient's %v %v %v; want one FAILED naming --llm-base-url, the other COMPLETED USER_ENDED",
			inbound["status"], inbound["hangupCause"], inbound["errorMessage"], outbound["status"], outbound["hangupCause"], outbound["errorMessage"])
	}
	saidFirst(t, "front desk", inbound)
	saidFirst(t, "patient", outbound)
	bothChannelsSpeak(t, filepath.Join(dir, "call.wav"))
	srv.stop(t)
	t.Logf("offline call done after %v", time.Since(started).Round(time.Second))

	// With a model: the README's ARGS line, its URL pointed at a fake.
	replies := map[string]string{
		"desk1":   "Sure, we have an opening on Tuesday at ten. Does that suit you?",
		"patient": "Tuesday at ten is perfect, thank you.",
		"desk2":   "You are booked for Tuesday at ten. Goodbye!",
	}
	fake := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		heard := r.Turns()
		switch {
		case strings.HasPrefix(system, "Summarize"):
			return llmtest.Reply{Text: []string{"A patient booked a cleaning."}}
		case r.Body["response_format"] != nil: // the test run's judge
			return llmtest.Reply{Text: []string{`{"passed": true, "reasoning": "The agent offered Tuesday at ten and confirmed the booking."}`}}
		case strings.HasPrefix(system, "You are role-playing a person"): // the test run's simulated caller
			if r.Messages[len(r.Messages)-1]["role"] == "tool" {
				return llmtest.Reply{}
			}
			if heard <= 1 {
				return llmtest.Reply{Text: []string{"Hi, I would like a cleaning next week, any morning."}}
			}
			return llmtest.Reply{Text: []string{replies["patient"]},
				ToolCalls: []llmtest.ToolCallReply{{ID: "call_bye", Name: "end_call", Arguments: "{}"}}}
		case strings.HasPrefix(system, "You are a patient"):
			return llmtest.Reply{Text: []string{replies["patient"]}}
		case r.Messages[len(r.Messages)-1]["role"] == "tool":
			return llmtest.Reply{} // after end_call
		case heard <= 1:
			return llmtest.Reply{Text: []string{replies["desk1"]}}
		}
		return llmtest.Reply{Text: []string{replies["desk2"]},
			ToolCalls: []llmtest.ToolCallReply{{ID: "call_end", Name: "end_call", Arguments: "{}"}}}
	})
	serveModel := blocks.one(t, "serve-model")
	withFake := strings.Replace(serveModel, "http://127.0.0.1:11434/v1", fake.URL, 1)
	if withFake == serveModel {
		t.Fatal("the README's serve-model block has no http://127.0.0.1:11434/v1 to point at the fake model")
	}
	key := srv.key
	srv = makeRun(t, dir, withFake)
	if !strings.Contains(srv.logs.String(), `"model":"llama3.2"`) {
		t.Errorf("the configuration line does not name the model passed in ARGS:\n%s", srv.logs)
	}
	runScript(t, dir, fmt.Sprintf("source %q\n%s\n%s\n", vars, session, blocks.one(t, "call")))
	outbound, inbound = lastCalls(t, key)
	if inbound["status"] != "COMPLETED" || inbound["hangupCause"] != "END_CALL_TOOL" {
		t.Errorf("with a model, the front desk's side ended %v %v %v", inbound["status"], inbound["hangupCause"], inbound["errorMessage"])
	}
	saidFirst(t, "front desk", inbound)
	saidFirst(t, "patient", outbound)
	said(t, "front desk", inbound, replies["desk1"], replies["desk2"])
	said(t, "patient", outbound, replies["patient"])
	bothChannelsSpeak(t, filepath.Join(dir, "call.wav"))

	// The test run: two attempts, each a real call judged by the model.
	runScript(t, dir, fmt.Sprintf("source %q\n%s\n%s\n", vars, session, blocks.one(t, "test-run")))
	readmeTestRun(t, key)
	srv.stop(t)
	t.Logf("quick start, offline and with a model, took %v", time.Since(started).Round(time.Second))
}

func portFree(network, addr string) error {
	if network == "udp" {
		c, err := net.ListenPacket(network, addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return err
	}
	return l.Close()
}

// quickStart is the README's marked shell blocks: a block preceded by
// <!-- readme-test: NAME --> is NAME; "session", "run" and "call" blocks
// run in order in one shell.
type quickStart struct {
	named map[string][]string
	runs  []string // every run and call block, in order
}

func (q quickStart) one(t *testing.T, name string) string {
	t.Helper()
	if len(q.named[name]) != 1 {
		t.Fatalf("the README has %d blocks marked readme-test: %s, want 1", len(q.named[name]), name)
	}
	return q.named[name][0]
}

// variables are the shell variables the run blocks set from a command.
func (q quickStart) variables() []string {
	seen := map[string]bool{}
	var out []string
	for _, b := range q.runs {
		for _, m := range regexp.MustCompile(`(?m)^([A-Z][A-Z0-9_]*)=\$\(`).FindAllStringSubmatch(b, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	return out
}

func readmeBlocks(t *testing.T, path string) quickStart {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	q := quickStart{named: map[string][]string{}}
	marker := regexp.MustCompile(`^<!-- readme-test: ([a-z-]+) -->$`)
	lines := strings.Split(string(raw), "\n")
	for i := 0; i < len(lines); i++ {
		m := marker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || lines[j] != "```sh" {
			t.Fatalf("README line %d: readme-test: %s is not followed by a ```sh block", i+1, m[1])
		}
		var body []string
		for j++; j < len(lines) && lines[j] != "```"; j++ {
			body = append(body, lines[j])
		}
		block := strings.Join(body, "\n")
		q.named[m[1]] = append(q.named[m[1]], block)
		if m[1] == "run" || m[1] == "call" {
			q.runs = append(q.runs, block)
		}
		i = j
	}
	if len(q.runs) == 0 {
		t.Fatal("the README marks no quick-start blocks (<!-- readme-test: run -->)")
	}
	return q
}

// freshCopy copies the files git would put in a clone (tracked, and new
// ones not ignored, as they are in the working tree) into a new directory.
func freshCopy(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		info, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// quickStartEnv is this environment without PARLEY_ settings and without
// what an outer make (make test) passes down: the quick start runs as a
// new user's shell would.
func quickStartEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "PARLEY_") && name != "MAKEFLAGS" && name != "MAKELEVEL" && name != "MFLAGS" {
			env = append(env, kv)
		}
	}
	return env
}

// madeServer is `make run` running in its own process group, as in a
// terminal, where Ctrl-C reaches make and the server alike.
type madeServer struct {
	cmd  *exec.Cmd
	logs *logBuffer
	key  string        // printed on the first start only
	done chan struct{} // closed when the process has exited
}

// makeRun runs block (a make run line) in dir and waits until it serves on
// the README's address.
func makeRun(t *testing.T, dir, block string) *madeServer {
	t.Helper()
	cmd := exec.Command("bash", "-c", block)
	cmd.Dir, cmd.Env = dir, quickStartEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &madeServer{cmd: cmd, logs: &logBuffer{}, done: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			s.logs.add(lines.Text())
		}
	}()
	go func() {
		<-read
		_ = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	})
	// The first build in a fresh tree compiles what the Go build cache
	// lacks: minutes on a cold cache.
	deadline := time.Now().Add(10 * time.Minute)
	for !strings.Contains(s.logs.String(), `"msg":"serving","addr":"127.0.0.1:8080"`) {
		select {
		case <-s.done:
			t.Fatalf("%s exited before serving:\n%s", block, s.logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not serve on 127.0.0.1:8080:\n%s", block, s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if keyLine.MatchString(line) {
			s.key = line // the first start only
		}
	}
	return s
}

// stop is Ctrl-C: the server drains and exits.
func (s *madeServer) stop(t *testing.T) {
	t.Helper()
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("make run did not stop on Ctrl-C:\n%s", s.logs)
	}
	if !strings.Contains(s.logs.String(), `"msg":"stopped"`) {
		t.Errorf("the server did not stop cleanly:\n%s", s.logs)
	}
}

// runScript runs the README's commands with bash in dir, stopping at the
// first failing one.
func runScript(t *testing.T, dir, script string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail -x\n"+script)
	cmd.Dir, cmd.Env = dir, quickStartEnv()
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's commands failed (%v):\n%s", err, out)
	}
}

// lastCalls returns the newest outbound call and the newest inbound one.
func lastCalls(t *testing.T, key string) (outbound, inbound map[string]any) {
	t.Helper()
	get := func(direction string) map[string]any {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:8080/v1/calls?pageSize=1&direction="+direction, nil)
		req.Header.Set("x-api-key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var page struct{ Data []map[string]any }
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Data) != 1 {
			t.Fatalf("GET /v1/calls?direction=%s: %v %v", direction, resp.Status, err)
		}
		return page.Data[0]
	}
	return get("OUTBOUND"), get("INBOUND")
}

// saidFirst checks the call's transcript opens with the agent's first message.
func saidFirst(t *testing.T, who string, call map[string]any) {
	t.Helper()
	entries, _ := call["transcript"].([]any)
	if len(entries) == 0 || entries[0].(map[string]any)["role"] != "assistant" {
		t.Errorf("%s: the transcript does not open with its first message: %v", who, call["transcript"])
		return
	}
	if e := entries[0].(map[string]any); e["interrupted"] == true {
		t.Errorf("%s: its first message was cut: %v", who, e)
	}
}

// said checks the agent said each line, in order, in the call's transcript.
func said(t *testing.T, who string, call map[string]any, lines ...string) {
	t.Helper()
	entries, _ := call["transcript"].([]any)
	next := 0
	for _, e := range entries {
		if m := e.(map[string]any); next < len(lines) && m["role"] == "assistant" && m["text"] == lines[next] {
			next++
		}
	}
	if next < len(lines) {
		t.Errorf("%s never said %q: %v", who, lines[next], call["transcript"])
	}
}

// bothChannelsSpeak checks each channel of the stereo recording holds at
// least half a second of 20 ms frames above the noise floor (-36 dBFS).
func bothChannelsSpeak(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := audio.ReadWAV(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(w.Channels) != 2 {
		t.Fatalf("%s has %d channels, want 2", path, len(w.Channels))
	}
	const floor = 500 // RMS of 16-bit samples: about -36 dBFS
	frame := w.Rate / 50
	var got [2]time.Duration
	for ch, pcm := range w.Channels {
		for i := 0; i+frame <= len(pcm); i += frame {
			var sum float64
			for _, s := range pcm[i : i+frame] {
				sum += float64(s) * float64(s)
			}
			if math.Sqrt(sum/float64(frame)) > floor {
				got[ch] += 20 * time.Millisecond
			}
		}
	}
	t.Logf("%s: %v long, speech %v left (the other party), %v right (the agent)", filepath.Base(path), w.Duration().Round(10*time.Millisecond), got[0], got[1])
	for ch, name := range []string{"left", "right"} {
		if got[ch] < 500*time.Millisecond {
			t.Errorf("the recording's %s channel has %v of speech, want at least 500ms", name, got[ch])
		}
	}
}

// readmeTestRun checks the README's test run: completed, both attempts
// passed, each with its two call records ended and transcribed.
func readmeTestRun(t *testing.T, key string) {
	t.Helper()
	get := func(path string) map[string]any {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:8080/v1"+path, nil)
		req.Header.Set("x-api-key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %v %v", path, resp.Status, err)
		}
		return m
	}
	suites := get("/test-suites?pageSize=1")["data"].([]any)
	if len(suites) != 1 {
		t.Fatalf("test suites: %v", suites)
	}
	runs := get("/test-suites/" + suites[0].(map[string]any)["id"].(string) + "/runs?includeAttempts=true")["data"].([]any)
	if len(runs) != 1 {
		t.Fatalf("test runs: %v", runs)
	}
	run := runs[0].(map[string]any)
	if run["status"] != "completed" || run["totalTests"] != 2.0 || run["passedTests"] != 2.0 || run["mode"] != "call" {
		t.Errorf("the README's test run ended %v, %v of %v passed (mode %v): %v", run["status"], run["passedTests"], run["totalTests"], run["mode"], run)
	}
	for _, a := range run["attempts"].([]any) {
		a := a.(map[string]any)
		for _, k := range []string{"callId", "inboundCallId"} {
			id, _ := a[k].(string)
			if id == "" {
				t.Errorf("attempt %v has no %s", a["attemptNumber"], k)
				continue
			}
			c := get("/calls/" + id)["data"].(map[string]any)
			if c["status"] != "COMPLETED" || len(c["transcript"].([]any)) == 0 {
				t.Errorf("attempt %v's %s ended %v %v with transcript %v", a["attemptNumber"], k, c["status"], c["hangupCause"], c["transcript"])
			}
		}
	}
}
