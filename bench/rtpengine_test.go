package bench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// relayResult is what rtpengine cost relaying the streams.
type relayResult struct {
	Calls       int     `json:"calls"`
	Seconds     float64 `json:"seconds"`     // the measured window, every call relaying
	CPUSeconds  float64 `json:"cpu_seconds"` // rtpengine's, over the window
	CPUPerCallS float64 `json:"cpu_ms_per_call_second"`
	Sent        int64   `json:"packets_sent"`     // both directions
	Received    int64   `json:"packets_received"` // both directions, after the relay
	// BusiestMsPct is the share of the packets sent in the busiest
	// millisecond of the 20 ms period: 5 % when the phases are spread
	// evenly, 100 % when every stream sends at once.
	BusiestMsPct float64 `json:"busiest_ms_pct"`
	// The machine's CPU over the window, as heldResult's.
	MachineBusySeconds float64 `json:"machine_busy_seconds"`
	MachineSeconds     float64 `json:"machine_seconds"`
}

// relayThroughRtpengine runs rtpengine in userspace (no kernel module:
// --table=-1) on 127.0.0.1 and has it relay calls bidirectional G.711
// streams (50 packets a second each way, payload from wav) for hold,
// set up through its ng control protocol (bencoded offer and answer over
// UDP) as a SIP proxy would. Like SIPp, each side sends every call's
// stream from one socket, and each stream at its own phase of the 20 ms
// period (sendPhases), as calls started at different moments do: sent
// phase-aligned, all in one burst per period, rtpengine's cost halves,
// and the baseline with it. It measures rtpengine's CPU over hold, every
// call relaying.
func relayThroughRtpengine(tb testing.TB, calls int, hold time.Duration, wav []byte) relayResult {
	tb.Helper()
	requireTool(tb, "rtpengine", "rtpengine-daemon")
	ng := listenUDP(tb)
	ngPort := ng.LocalAddr().(*net.UDPAddr).Port
	ng.Close()            // rtpengine takes it
	const portMin = 26000 // above the server's RTP ports (held_test.go), below the ephemeral ones
	// --config-file=none: not the system's /etc/rtpengine/rtpengine.conf,
	// which listens on more ports (HTTP, CLI) and on every interface.
	cmd := exec.Command("rtpengine", "--config-file=none", "--interface=127.0.0.1", fmt.Sprintf("--listen-ng=127.0.0.1:%d", ngPort),
		"--foreground", "--table=-1", "--log-stderr", "--log-level=4", "--delete-delay=0",
		fmt.Sprintf("--port-min=%d", portMin), fmt.Sprintf("--port-max=%d", portMin+4*calls+400))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("rtpengine: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()

	ctl, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: ngPort})
	if err != nil {
		tb.Fatal(err)
	}
	defer ctl.Close()
	ngCall := newNG(ctl)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := ngCall.do(map[string]any{"command": "ping"}); err == nil {
			break
		}
		select {
		case <-exited:
			tb.Fatalf("rtpengine exited at start:\n%s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("rtpengine did not answer ng ping within 10s:\n%s", stderr.String())
		}
	}

	a, b := listenUDP(tb), listenUDP(tb)
	portA, portB := a.LocalAddr().(*net.UDPAddr).Port, b.LocalAddr().(*net.UDPAddr).Port
	toA := make([]netip.AddrPort, calls) // where A sends call i: rtpengine's port facing A
	toB := make([]netip.AddrPort, calls)
	for i := range calls {
		id := fmt.Sprintf("bench-%d", i)
		offer, err := ngCall.do(map[string]any{"command": "offer", "call-id": id, "from-tag": "a" + id, "sdp": sdpFor(portA)})
		if err != nil {
			tb.Fatalf("rtpengine offer: %v", err)
		}
		answer, err := ngCall.do(map[string]any{"command": "answer", "call-id": id, "from-tag": "a" + id, "to-tag": "b" + id, "sdp": sdpFor(portB)})
		if err != nil {
			tb.Fatalf("rtpengine answer: %v", err)
		}
		// The offer's SDP goes to B (where B sends); the answer's to A.
		if toB[i], err = sdpAudio(offer); err != nil {
			tb.Fatal(err)
		}
		if toA[i], err = sdpAudio(answer); err != nil {
			tb.Fatal(err)
		}
	}

	var received atomic.Int64
	var readers sync.WaitGroup
	for _, c := range []*net.UDPConn{a, b} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			buf := make([]byte, 1500)
			for {
				if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
					return // closed
				}
				received.Add(1)
			}
		}()
	}

	payload := ulawPayload(wav)
	pkt := make([]byte, 12+frameSamples)
	order := sendOrder(calls, frameDur)
	var sent int64
	var perMs [frameDur / time.Millisecond]int64 // packets by the millisecond of the period they left in
	warm := time.Second
	start := time.Now()
	var cpu0 time.Duration
	var at0 time.Time
	var busy0, all0 float64
	for tick := 0; ; tick++ {
		period := start.Add(time.Duration(tick) * frameDur)
		if at0.IsZero() && time.Since(start) >= warm {
			at0, cpu0 = time.Now(), procCPU(cmd.Process.Pid)
			busy0, all0 = machineCPU()
		}
		if !at0.IsZero() && time.Since(at0) >= hold {
			break
		}
		off := (tick * frameSamples) % max(len(payload)-frameSamples, 1)
		for _, slot := range order {
			// Sleep only when well ahead: the timer's wake-up (about a
			// millisecond) sends what has come due meanwhile, as SIPp's does.
			if d := time.Until(period.Add(slot.phase)); d > 200*time.Microsecond {
				time.Sleep(d)
			}
			conn, to := a, toA[slot.call]
			if slot.side == 1 {
				conn, to = b, toB[slot.call]
			}
			pkt[0], pkt[1] = 0x80, 0
			binary.BigEndian.PutUint16(pkt[2:], uint16(tick))
			binary.BigEndian.PutUint32(pkt[4:], uint32(tick*frameSamples))
			binary.BigEndian.PutUint32(pkt[8:], uint32(2*slot.call+slot.side+1))
			copy(pkt[12:], payload[off:])
			if _, err := conn.WriteToUDPAddrPort(pkt, to); err == nil {
				sent++
				if !at0.IsZero() {
					perMs[int(time.Since(start)%frameDur/time.Millisecond)]++
				}
			}
		}
	}
	window := time.Since(at0)
	cpu := procCPU(cmd.Process.Pid) - cpu0
	busy1, all1 := machineCPU()
	for i := range calls {
		id := fmt.Sprintf("bench-%d", i)
		_, _ = ngCall.do(map[string]any{"command": "delete", "call-id": id, "from-tag": "a" + id})
	}
	a.Close()
	b.Close()
	readers.Wait()
	r := relayResult{Calls: calls, Seconds: window.Seconds(), CPUSeconds: cpu.Seconds(), Sent: sent, Received: received.Load(),
		BusiestMsPct: busiestShare(perMs[:]), MachineBusySeconds: busy1 - busy0, MachineSeconds: all1 - all0}
	r.CPUPerCallS = cpu.Seconds() * 1000 / (float64(calls) * window.Seconds())
	return r
}

// sendSlot is when in the period one call's side sends.
type sendSlot struct {
	call, side int // side 0: A (the caller), 1: B
	phase      time.Duration
}

// sendOrder spreads the 2×calls streams' phases evenly over the period,
// in phase order. Each side's phases are spread evenly too, and a call's
// B side sends about half a period after its A side: the two ends of a
// real call (SIPp, Parley) keep clocks of their own.
func sendOrder(calls int, period time.Duration) []sendSlot {
	out := make([]sendSlot, 2*calls)
	for k := range out {
		s := sendSlot{call: k / 2, side: k % 2, phase: time.Duration(int64(period) * int64(k) / int64(2*calls))}
		if s.side == 1 {
			s.call = (k/2 + calls/2) % calls
		}
		out[k] = s
	}
	return out
}

// busiestShare is the largest count's percentage of the total (0 when
// there is none).
func busiestShare(counts []int64) float64 {
	var total, most int64
	for _, c := range counts {
		total += c
		most = max(most, c)
	}
	if total == 0 {
		return 0
	}
	return 100 * float64(most) / float64(total)
}

func listenUDP(tb testing.TB) *net.UDPConn {
	tb.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	_ = c.SetReadBuffer(4 << 20)
	return c
}

func sdpFor(port int) string {
	return "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" +
		fmt.Sprintf("m=audio %d RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=ptime:20\r\na=sendrecv\r\n", port)
}

var (
	sdpConn  = regexp.MustCompile(`(?m)^c=IN IP4 ([0-9.]+)`)
	sdpMedia = regexp.MustCompile(`(?m)^m=audio ([0-9]+) `)
)

// sdpAudio is the audio address an ng reply's SDP gives.
func sdpAudio(reply map[string]any) (netip.AddrPort, error) {
	sdp, _ := reply["sdp"].(string)
	c, m := sdpConn.FindStringSubmatch(sdp), sdpMedia.FindStringSubmatch(sdp)
	if c == nil || m == nil {
		return netip.AddrPort{}, fmt.Errorf("rtpengine: no audio address in its SDP %q", sdp)
	}
	ip, err := netip.ParseAddr(c[1])
	if err != nil {
		return netip.AddrPort{}, err
	}
	port, _ := strconv.Atoi(m[1])
	return netip.AddrPortFrom(ip, uint16(port)), nil
}

// ulawPayload is a μ-law WAV's samples (after its 44- or 46-byte header:
// the data chunk).
func ulawPayload(wav []byte) []byte {
	if i := bytes.Index(wav, []byte("data")); i >= 0 && i+8 <= len(wav) {
		return wav[i+8:]
	}
	return wav
}

// ngClient sends ng commands one at a time over one UDP socket.
type ngClient struct {
	conn *net.UDPConn
	n    int
	buf  []byte
}

func newNG(conn *net.UDPConn) *ngClient { return &ngClient{conn: conn, buf: make([]byte, 65536)} }

// do sends a command and waits (1 s, twice) for its reply; a result other
// than "ok" (or "pong") is an error.
func (c *ngClient) do(cmd map[string]any) (map[string]any, error) {
	c.n++
	cookie := fmt.Sprintf("c%d", c.n)
	msg := append([]byte(cookie+" "), bencode(cmd)...)
	for range 2 {
		if _, err := c.conn.Write(msg); err != nil {
			return nil, err
		}
		_ = c.conn.SetReadDeadline(time.Now().Add(time.Second))
		for {
			n, err := c.conn.Read(c.buf)
			if err != nil {
				break // retry once on timeout
			}
			got, body, ok := bytes.Cut(c.buf[:n], []byte(" "))
			if !ok || string(got) != cookie {
				continue // a late reply to an earlier try
			}
			v, _, err := bdecode(body)
			if err != nil {
				return nil, err
			}
			d, _ := v.(map[string]any)
			switch d["result"] {
			case "ok", "pong":
				return d, nil
			}
			return nil, fmt.Errorf("rtpengine %v: %v %v", cmd["command"], d["result"], d["error-reason"])
		}
	}
	return nil, fmt.Errorf("rtpengine %v: no reply", cmd["command"])
}
