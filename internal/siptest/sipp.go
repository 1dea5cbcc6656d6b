package siptest

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// localIP is the only address the peers use, for SIP and for RTP.
const localIP = "127.0.0.1"

//go:embed scenarios/*.xml
var scenarioFS embed.FS

//go:embed testdata/tone1k_pcmu.wav
var toneWAV []byte

// RequireSipp skips the test when sipp is not installed, saying which Debian
// package to install; with CI=true it fails the test instead.
func RequireSipp(t testing.TB) {
	t.Helper()
	require(t, "sipp", "sip-tester")
}

// RequireBaresip skips the test when baresip is not installed, saying which
// Debian package to install; with CI=true it fails the test instead.
func RequireBaresip(t testing.TB) {
	t.Helper()
	require(t, "baresip", "baresip-core")
}

func require(t testing.TB, command, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(command); err == nil {
		return
	}
	msg := fmt.Sprintf("%s is not installed: install the Debian package %s (apt-get install %s, or make deps)", command, pkg, pkg)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Scenarios lists the embedded scenario names, for UAS and UAC.
func Scenarios() []string {
	entries, err := fs.ReadDir(scenarioFS, "scenarios")
	if err != nil {
		panic(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".xml"))
	}
	return names
}

// Options for one sipp run.
//
// Every run gets these -key values unless Keys overrides them: hold=2000 (ms
// talking before the scenario's own BYE), ring=0 (ms ringing before a UAS
// answers), audio=1 (0: the answering scenarios send no RTP), bye=send
// (wait: uas_auth, uas_auth401 and uac_digest wait for the far end's BYE
// instead of sending one), from=sipp (the UAC's From user), code=503 and
// reason=Service Unavailable (uas_reject's response, uac_reject's expected
// code), user=parley and pass=secret (digest credentials), refer_to=
// sip:transfer@127.0.0.1 (uas_refer's expected and uac_refer's Refer-To),
// digits=123# (uac_dtmf's keypad digits).
type Options struct {
	Calls     int               // -m, default 1
	Limit     int               // -l (concurrent calls), default = Calls
	Rate      int               // -r calls per second (UAC), default 10
	Service   string            // -s (request-URI user for UAC scenarios)
	Keys      map[string]string // -key name value, usable as [name] in the scenario; "{self}" in a value is sipp's own SIP address
	Timeout   time.Duration     // overall -timeout, default 30s; sipp exits non-zero on timeout
	Transport string            // "udp" (default, -t u1) or "tcp" (-t t1)
	// Files are written next to the scenario before sipp starts, by name:
	// the audio its rtp_stream actions play (uac_talk's speech.wav; see
	// ULawWAV).
	Files map[string][]byte
	// Nice is sipp's scheduling niceness (0: the caller's). Load runs use
	// 19 so that the callers do not starve the server they measure.
	Nice int
}

var defaultKeys = map[string]string{
	"hold":     "2000",
	"ring":     "0",
	"audio":    "1",
	"formats":  "0 8 101",
	"bye":      "send",
	"from":     "sipp",
	"code":     "503",
	"reason":   "Service Unavailable",
	"user":     "parley",
	"pass":     "secret",
	"refer_to": "sip:transfer@" + localIP,
	"digits":   "123#",
}

// Sipp is a running sipp process.
type Sipp struct {
	t         testing.TB
	scenario  string
	dir       string
	keys      map[string]string
	transport string
	sipPort   int
	mediaPort int

	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited
	exitErr error         // cmd.Wait's result, set before done closes
	watch   *time.Timer

	once    sync.Once
	verdict error
}

// UAS starts sipp as a server running the named embedded scenario (see the
// package doc) on a free 127.0.0.1 port; the process is killed at t.Cleanup
// if still running.
func UAS(t testing.TB, scenario string, o Options) *Sipp {
	t.Helper()
	return start(t, scenario, loadScenario(t, scenario), "", o)
}

// UAC starts sipp as a client running the scenario against target
// "host:port"; the process is killed at t.Cleanup if still running.
func UAC(t testing.TB, scenario, target string, o Options) *Sipp {
	t.Helper()
	if target == "" {
		t.Fatalf("siptest: UAC %s needs a target host:port", scenario)
	}
	return start(t, scenario, loadScenario(t, scenario), target, o)
}

func loadScenario(t testing.TB, name string) []byte {
	t.Helper()
	xml, err := scenarioFS.ReadFile("scenarios/" + name + ".xml")
	if err != nil {
		t.Fatalf("siptest: no scenario %q (have %s)", name, strings.Join(Scenarios(), ", "))
	}
	return xml
}

// Addr is the "127.0.0.1:port" sipp listens on for SIP.
func (s *Sipp) Addr() string { return fmt.Sprintf("%s:%d", localIP, s.sipPort) }

// MediaAddr is the "127.0.0.1:port" of sipp's RTP socket ([media_port]).
func (s *Sipp) MediaAddr() string { return fmt.Sprintf("%s:%d", localIP, s.mediaPort) }

// Messages is the SIP messages sipp saw and sent so far (its -trace_msg log),
// each after a "----" line saying "UDP message received [n] bytes :" or
// "UDP message sent (n bytes):" (TCP for -t t1). Read it after Wait for the
// whole run.
func (s *Sipp) Messages() string { return s.file("messages.log") }

// SentCount counts the messages sipp sent so far whose first line starts
// with start ("SIP/2.0 200", "BYE "), from Messages.
func (s *Sipp) SentCount(start string) int {
	n := 0
	for _, m := range parseMessages(s.Messages()) {
		if !m.received && strings.HasPrefix(m.text, start) {
			n++
		}
	}
	return n
}

// Received is the text of every SIP message sipp received so far, in
// order, from Messages.
func (s *Sipp) Received() []string {
	var out []string
	for _, m := range parseMessages(s.Messages()) {
		if m.received {
			out = append(out, m.text)
		}
	}
	return out
}

// Log is what the scenario's <log> actions wrote (its -trace_logs log).
func (s *Sipp) Log() string { return s.file("logs.log") }

// Counts are SIPp's own totals, from the statistics screen it prints as it
// exits: calls that succeeded and calls that failed (its "Successful call"
// and "Failed call" cumulative values). Read them after Wait; ok is false
// when sipp printed no such screen (it was killed, or is still running).
func (s *Sipp) Counts() (succeeded, failed int, ok bool) {
	out := s.file("sipp.out")
	i := strings.LastIndex(out, "Test Terminated")
	if i < 0 {
		return 0, 0, false
	}
	var okS, okF bool
	for _, line := range strings.Split(out[:i], "\n") {
		name, rest, found := strings.Cut(line, "|")
		if !found {
			continue
		}
		fields := strings.Split(rest, "|")
		n, err := strconv.Atoi(strings.TrimSpace(fields[len(fields)-1]))
		if err != nil {
			continue
		}
		switch strings.TrimSpace(name) {
		case "Successful call":
			succeeded, okS = n, true
		case "Failed call":
			failed, okF = n, true
		}
	}
	return succeeded, failed, okS && okF
}

func (s *Sipp) file(name string) string {
	b, _ := os.ReadFile(filepath.Join(s.dir, name))
	return string(b)
}

// Wait waits for sipp to exit. It returns nil when the scenario passed (exit
// 0), else an error with the exit status and the tail of sipp's error log
// (or of its screen output when the error log is empty). For uas_auth it also
// verifies each Proxy-Authorization digest against Keys user and pass.
func (s *Sipp) Wait() error {
	<-s.done
	s.once.Do(func() { s.verdict = s.judge() })
	return s.verdict
}

func (s *Sipp) judge() error {
	if s.exitErr != nil {
		var ee *exec.ExitError
		code := -1
		if errors.As(s.exitErr, &ee) {
			code = ee.ExitCode()
		}
		what := exitMeaning(code)
		if code == -1 {
			what = s.exitErr.Error()
		}
		detail := tail(s.file("errors.log"), 2000)
		if strings.TrimSpace(detail) == "" {
			detail = tail(s.file("sipp.out"), 2000)
		}
		return fmt.Errorf("siptest: sipp %s exited %d (%s):\n%s", s.scenario, code, what, detail)
	}
	if check := postChecks[s.scenario]; check != nil {
		if err := check(s); err != nil {
			return fmt.Errorf("siptest: sipp %s: %w", s.scenario, err)
		}
	}
	return nil
}

func exitMeaning(code int) string {
	switch code {
	case 0:
		return "all calls succeeded"
	case 1:
		return "at least one call failed"
	case 97:
		return "exit on internal command"
	case 99:
		return "normal exit without calls processed"
	case 254:
		return "fatal error binding a socket"
	case 255:
		return "fatal error or global timeout"
	}
	return "unexpected exit status"
}

// postChecks verify what SIPp itself cannot, from the run's logs.
var postChecks = map[string]func(*Sipp) error{
	"uas_auth": checkProxyDigests,
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// start writes the scenario to a temp dir and runs sipp on free ports,
// retrying on new ports when sipp loses a port to someone else.
func start(t testing.TB, scenario string, xml []byte, target string, o Options) *Sipp {
	t.Helper()
	RequireSipp(t)

	keys := maps.Clone(defaultKeys)
	maps.Copy(keys, o.Keys)
	transport := strings.ToLower(o.Transport)
	switch transport {
	case "":
		transport = "udp"
	case "udp", "tcp":
	default:
		t.Fatalf("siptest: transport %q: want udp or tcp", o.Transport)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, scenario+".xml"), xml, 0o644); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(xml), "tone.wav") {
		if err := os.WriteFile(filepath.Join(dir, "tone.wav"), toneWAV, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range o.Files {
		if name != filepath.Base(name) || name == scenario+".xml" {
			t.Fatalf("siptest: Options.Files: %q is not a plain file name", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(string(xml), "speech.wav") && o.Files["speech.wav"] == nil {
		t.Fatalf("siptest: %s streams speech.wav: set Options.Files[\"speech.wav\"] (ULawWAV)", scenario)
	}
	if strings.Contains(string(xml), "dtmf.pcap") {
		pcap, err := dtmfPcap(keys["digits"])
		if err != nil {
			t.Fatalf("siptest: %s: %v", scenario, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "dtmf.pcap"), pcap, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	const attempts = 5
	var lastErr error
	for range attempts {
		s := &Sipp{t: t, scenario: scenario, dir: dir, keys: keys, transport: transport}
		err := s.launch(xml, target, o)
		if err == nil {
			t.Cleanup(s.cleanup)
			return s
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	t.Fatalf("siptest: starting sipp %s: %v", scenario, lastErr)
	return nil
}

var errPortTaken = errors.New("a port was taken before sipp bound it")

func (s *Sipp) launch(xml []byte, target string, o Options) error {
	ports, err := freePorts(s.transport)
	if err != nil {
		return err
	}
	s.sipPort, s.mediaPort = ports.sip, ports.media

	calls := max(o.Calls, 1)
	limit := o.Limit
	if limit <= 0 {
		limit = calls
	}
	rate := o.Rate
	if rate <= 0 {
		rate = 10
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	secs := max(int((timeout+time.Second-1)/time.Second), 1)
	tmode := "u1"
	if s.transport == "tcp" {
		tmode = "t1"
	}

	var args []string
	if target != "" {
		args = append(args, target)
	}
	args = append(args,
		"-sf", filepath.Join(s.dir, s.scenario+".xml"),
		"-t", tmode,
		"-i", localIP, "-mi", localIP,
		"-p", strconv.Itoa(ports.sip),
		"-mp", strconv.Itoa(ports.media),
		"-ci", localIP, "-cp", strconv.Itoa(ports.control),
		"-m", strconv.Itoa(calls),
		"-l", strconv.Itoa(limit),
		"-r", strconv.Itoa(rate),
		"-timeout", strconv.Itoa(secs)+"s", "-timeout_error",
		"-nostdin", "-aa",
		"-trace_msg", "-message_file", filepath.Join(s.dir, "messages.log"),
		"-trace_err", "-error_file", filepath.Join(s.dir, "errors.log"),
		"-trace_logs", "-log_file", filepath.Join(s.dir, "logs.log"),
		"-au", s.keys["user"], "-ap", s.keys["pass"],
	)
	if o.Service != "" {
		args = append(args, "-s", o.Service)
	}
	if target != "" {
		service := o.Service
		if service == "" {
			service = "service" // sipp's default [service]
		}
		args = append(args, "-auth_uri", service+"@"+target)
	}
	for _, k := range slices.Sorted(maps.Keys(s.keys)) {
		// {self} stands for sipp's own SIP address, known only now.
		args = append(args, "-key", k, strings.ReplaceAll(s.keys[k], "{self}", fmt.Sprintf("%s:%d", localIP, ports.sip)))
	}

	out, err := os.Create(filepath.Join(s.dir, "sipp.out"))
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own copy
	for _, name := range []string{"messages.log", "errors.log", "logs.log"} {
		_ = os.Remove(filepath.Join(s.dir, name))
	}

	cmd := exec.Command("sipp", args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	if o.Nice != 0 {
		// sipp is single-threaded at start, so its one thread is the process.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, o.Nice)
	}
	s.done = make(chan struct{})
	s.watch = time.AfterFunc(timeout+15*time.Second, s.kill)
	go func() {
		s.exitErr = cmd.Wait()
		s.watch.Stop()
		close(s.done)
	}()

	// Ready once every socket sipp binds is bound (by it, as we just freed
	// them); a fatal exit before that is either a lost port race, retried, or
	// a broken scenario, reported.
	want := []socket{{"udp", ports.media}, {"udp", ports.media + 2}, {"udp", ports.control}}
	switch {
	case s.transport == "udp":
		want = append(want, socket{"udp", ports.sip})
	case target == "":
		want = append(want, socket{"tcp", ports.sip})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-s.done:
			text := s.file("sipp.out") + s.file("errors.log")
			if strings.Contains(text, "Address already in use") || strings.Contains(text, "Unable to bind") {
				return fmt.Errorf("%w: %s", errPortTaken, tail(text, 500))
			}
			s.once.Do(func() { s.verdict = s.judge() })
			if s.verdict == nil {
				return nil // a run that was over before we looked
			}
			return s.verdict
		default:
		}
		ok, err := bound(want)
		if err != nil { // no /proc/net: give sipp a moment instead
			time.Sleep(300 * time.Millisecond)
			return nil
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			s.kill()
			<-s.done
			return fmt.Errorf("sipp did not bind its ports within 10s:\n%s", tail(s.file("sipp.out"), 1000))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Quit asks a UAC to place no more calls and exit once its calls in
// progress are over (SIGUSR1, SIPp's soft exit): a load with Calls set higher
// than needed ends when the test says. Wait then gives the verdict.
func (s *Sipp) Quit() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGUSR1)
	}
}

func (s *Sipp) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (s *Sipp) cleanup() {
	select {
	case <-s.done:
	default:
		s.kill()
		<-s.done
	}
	if s.t.Failed() {
		s.t.Logf("siptest: sipp %s (SIP %s) messages:\n%s", s.scenario, s.Addr(), tail(s.Messages(), 6000))
		if e := strings.TrimSpace(s.file("errors.log")); e != "" {
			s.t.Logf("siptest: sipp %s errors:\n%s", s.scenario, tail(e, 2000))
		}
	}
}

// RequireSipvicious skips the test when SIPVicious (svwar) is not
// installed, saying which Debian package to install; with CI=true it
// fails the test instead.
func RequireSipvicious(t testing.TB) {
	t.Helper()
	require(t, "svwar", "sipvicious")
}
