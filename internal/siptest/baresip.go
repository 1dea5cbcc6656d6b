package siptest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// phoneUser is the account baresip starts with; URI adds others on demand
// (baresip 1.0 routes an INVITE to the account whose user is the
// Request-URI's user and answers 404 to any other).
const phoneUser = "parley"

// Phone is a running baresip: an auto-answering SIP phone on 127.0.0.1 with
// G.711 only (or G.722 first: BaresipG722), a sine as its microphone and no
// speaker, that reports what happens to its calls.
type Phone struct {
	t        testing.TB
	dir      string
	port     int
	ctrlPort int

	cmd  *exec.Cmd
	done chan struct{}

	out      phoneOutput
	ready    chan struct{}
	digits   chan rune
	answered chan struct{}
	closed   chan struct{}

	mu    sync.Mutex
	users map[string]bool
}

// Baresip starts baresip with a generated config dir in t.TempDir():
// listening on a free 127.0.0.1 port (UDP and TCP), auto-answer for incoming
// calls, G.711 only (PCMU, PCMA, telephone-event), a 1 kHz sine (ausine) as
// its audio source and a player that discards (aubridge), no jitter buffer
// (so the last keypad event is reported without more RTP behind it), and the
// menu and ctrl_tcp modules so URI can add accounts; stdout and stderr are
// captured. The process is stopped at t.Cleanup.
func Baresip(t testing.TB) *Phone {
	t.Helper()
	return baresip(t, phoneAudio{codecs: []string{"g711.so"}, tone: 1000})
}

// BaresipG722 is Baresip as a wideband phone: G.722 first (then G.711),
// and a 6 kHz sine as its microphone, which only a wideband codec carries.
func BaresipG722(t testing.TB) *Phone {
	t.Helper()
	return baresip(t, phoneAudio{codecs: []string{"g722.so", "g711.so"}, tone: BaresipG722Tone})
}

// BaresipG722Tone is the frequency BaresipG722's microphone plays, in Hz.
const BaresipG722Tone = 6000

// phoneAudio is a phone's codec modules, in preference order, and its
// microphone's sine in Hz.
type phoneAudio struct {
	codecs []string
	tone   int
}

func baresip(t testing.TB, a phoneAudio) *Phone {
	t.Helper()
	RequireBaresip(t)
	dir := t.TempDir()
	var lastErr error
	for range 3 {
		p, err := startPhone(t, dir, a)
		if err == nil {
			t.Cleanup(p.stop)
			return p
		}
		lastErr = err
		if !strings.Contains(err.Error(), "in use") {
			break
		}
	}
	t.Fatalf("siptest: starting baresip: %v", lastErr)
	return nil
}

func startPhone(t testing.TB, dir string, a phoneAudio) (*Phone, error) {
	sip, closers, err := freeUDPTCPPort()
	if err != nil {
		return nil, err
	}
	ctrl, err := net.Listen("tcp4", localIP+":0")
	if err != nil {
		closeAll(closers)
		return nil, err
	}
	ctrlPort := ctrl.Addr().(*net.TCPAddr).Port
	closeAll(append(closers, ctrl))

	config := fmt.Sprintf(`# siptest: baresip as a headless auto-answering phone on 127.0.0.1
poll_method		epoll
sip_listen		%[1]s:%[2]d
net_interface		%[1]s
call_local_timeout	120
call_max_calls		4
audio_player		aubridge,nil
audio_alert		aubridge,nil
audio_source		ausine,%[4]d
ausrc_srate		48000
ausrc_channels		2
audio_level		no
jitter_buffer_delay	0-0
rtp_stats		no
statmode_default	off
module_path		/usr/lib/baresip/modules
%[5]smodule			ausine.so
module			aubridge.so
module_tmp		account.so
module_app		menu.so
module_app		ctrl_tcp.so
ctrl_tcp_listen		%[1]s:%[3]d
`, localIP, sip, ctrlPort, a.tone, codecModules(a.codecs))
	files := map[string]string{
		"config":   config,
		"accounts": phoneAccount(phoneUser) + "\n",
		"contacts": "",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}

	p := &Phone{
		t: t, dir: dir, port: sip, ctrlPort: ctrlPort,
		done:     make(chan struct{}),
		ready:    make(chan struct{}),
		digits:   make(chan rune, 256),
		answered: make(chan struct{}),
		closed:   make(chan struct{}),
		users:    map[string]bool{phoneUser: true},
	}
	p.out.phone = p
	cmd := exec.Command("baresip", "-f", dir)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.cmd = cmd
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()

	select {
	case <-p.ready:
		return p, nil
	case <-p.done:
		out := p.Output()
		if strings.Contains(out, "in use") {
			return nil, fmt.Errorf("a port is in use: %s", tail(out, 500))
		}
		return nil, fmt.Errorf("baresip exited before it was ready:\n%s", tail(out, 2000))
	case <-time.After(10 * time.Second):
		p.kill(syscall.SIGKILL)
		<-p.done
		return nil, fmt.Errorf("baresip was not ready within 10s:\n%s", tail(p.Output(), 2000))
	}
}

// codecModules loads the codec modules in order: baresip offers codecs in
// the order their modules were loaded.
func codecModules(names []string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "module\t\t\t%s\n", n)
	}
	return b.String()
}

func phoneAccount(user string) string {
	return fmt.Sprintf("<sip:%s@%s>;answermode=auto;regint=0", user, localIP)
}

func closeAll(cs []io.Closer) {
	for _, c := range cs {
		_ = c.Close()
	}
}

// Addr is the "127.0.0.1:port" baresip listens on for SIP.
func (p *Phone) Addr() string { return fmt.Sprintf("%s:%d", localIP, p.port) }

// URI is "sip:user@127.0.0.1:port". baresip only answers INVITEs for users it
// has an account for, so URI first creates one for a new user (through
// ctrl_tcp's uanew), auto-answering too.
func (p *Phone) URI(user string) string {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.users[user] {
		if err := p.command("uanew", phoneAccount(user)); err != nil {
			p.t.Errorf("siptest: baresip: adding user %q: %v", user, err)
		} else {
			p.users[user] = true
		}
	}
	return fmt.Sprintf("sip:%s@%s", user, p.Addr())
}

// Digits delivers the keypad digits baresip reports receiving, one per key
// press: an RFC 4733 telephone-event ("received event: '5' (end=0)") or a SIP
// INFO ("call: received DTMF: '5' ..."). Buffered; never closed.
func (p *Phone) Digits() <-chan rune { return p.digits }

// Answered is closed when baresip reports its first call established.
func (p *Phone) Answered() <-chan struct{} { return p.answered }

// Closed is closed when baresip reports its first call closed.
func (p *Phone) Closed() <-chan struct{} { return p.closed }

// Output is everything baresip printed so far (stdout and stderr).
func (p *Phone) Output() string { return p.out.String() }

// command runs a baresip command over ctrl_tcp (netstring-framed JSON) and
// waits for its response.
func (p *Phone) command(name, params string) error {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", localIP, p.ctrlPort), 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	req, err := json.Marshal(map[string]string{"command": name, "params": params, "token": "siptest"})
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(conn, "%d:%s,", len(req), req); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	for {
		lenText, err := r.ReadString(':')
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(strings.TrimSuffix(lenText, ":"))
		if err != nil || n < 0 || n > 1<<20 {
			return fmt.Errorf("bad netstring length %q", lenText)
		}
		buf := make([]byte, n+1)
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		var msg struct {
			Response bool   `json:"response"`
			OK       bool   `json:"ok"`
			Data     string `json:"data"`
		}
		if err := json.Unmarshal(buf[:n], &msg); err != nil {
			return err
		}
		if !msg.Response {
			continue // an event
		}
		if !msg.OK {
			return errors.New(strings.TrimSpace(msg.Data))
		}
		return nil
	}
}

func (p *Phone) kill(sig syscall.Signal) {
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

// stop ends baresip: SIGTERM (it hangs up its calls), SIGKILL after 3 s.
func (p *Phone) stop() {
	select {
	case <-p.done:
	default:
		p.kill(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(3 * time.Second):
			p.kill(syscall.SIGKILL)
			<-p.done
		}
	}
	if p.t.Failed() {
		p.t.Logf("siptest: baresip output:\n%s", tail(p.Output(), 6000))
	}
}

var (
	ansi        = regexp.MustCompile("\x1b\\[[0-9;]*m")
	telEventRE  = regexp.MustCompile(`received event: '(.)' \(end=([01])\)`)
	sipInfoDTMF = regexp.MustCompile(`received DTMF: '(.)'`)
)

// phoneOutput collects baresip's output and turns its lines into events.
type phoneOutput struct {
	phone *Phone

	mu      sync.Mutex
	all     strings.Builder
	partial string
	inEvent bool // a telephone-event started and has not ended yet

	readyOnce, answeredOnce, closedOnce sync.Once
}

func (o *phoneOutput) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all.Write(b)
	text := o.partial + string(b)
	lines := strings.Split(text, "\n")
	o.partial = lines[len(lines)-1]
	for _, line := range lines[:len(lines)-1] {
		o.line(ansi.ReplaceAllString(strings.TrimRight(line, "\r"), ""))
	}
	return len(b), nil
}

func (o *phoneOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.all.String()
}

func (o *phoneOutput) line(line string) {
	p := o.phone
	switch {
	case strings.Contains(line, "baresip is ready."):
		o.readyOnce.Do(func() { close(p.ready) })
	case strings.Contains(line, "Call established:"):
		o.answeredOnce.Do(func() { close(p.answered) })
	case strings.Contains(line, "terminated (duration") || strings.Contains(line, ": session closed"):
		o.closedOnce.Do(func() { close(p.closed) })
	}
	if m := telEventRE.FindStringSubmatch(line); m != nil {
		// One digit per key press: at its start, or at its end when the
		// start was never reported.
		end := m[2] == "1"
		if !end || !o.inEvent {
			o.digit([]rune(m[1])[0])
		}
		o.inEvent = !end
	} else if m := sipInfoDTMF.FindStringSubmatch(line); m != nil {
		o.digit([]rune(m[1])[0])
	}
}

func (o *phoneOutput) digit(d rune) {
	select {
	case o.phone.digits <- d:
	default: // nobody reads; keep the first 256
	}
}
