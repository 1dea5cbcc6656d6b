package siptest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// covered is every embedded scenario, each played by a test below against
// another scenario (or baresip), so each is proven to run under SIPp 3.6.1.
var covered = []string{
	"uac_call", "uac_call_wait_bye", "uac_cancel", "uac_digest", "uac_dtmf",
	"uac_flood", "uac_refer", "uac_reject", "uac_talk",
	"uas_answer_bye", "uas_answer_late", "uas_answer_many", "uas_answer_wait_bye", "uas_auth",
	"uas_auth401", "uas_busy", "uas_by_number", "uas_refer", "uas_reject", "uas_ring_forever",
	"uas_talk",
}

func TestEveryScenarioIsPlayed(t *testing.T) {
	if got := Scenarios(); !slices.Equal(got, covered) {
		t.Fatalf("embedded scenarios %v, tests cover %v", got, covered)
	}
}

func keys(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func mustPass(t *testing.T, peers ...*Sipp) {
	t.Helper()
	for _, p := range peers {
		if err := p.Wait(); err != nil {
			t.Error(err)
		}
	}
}

func mustFail(t *testing.T, p *Sipp, want string) {
	t.Helper()
	err := p.Wait()
	if err == nil {
		t.Errorf("sipp %s passed, want a failure saying %q", p.scenario, want)
	} else if !strings.Contains(err.Error(), want) {
		t.Errorf("sipp %s: %v\nwant it to say %q", p.scenario, err, want)
	}
}

// sent reports whether sipp sent a message starting with start.
func sent(p *Sipp, start string) bool {
	for _, m := range parseMessages(p.Messages()) {
		if !m.received && strings.HasPrefix(m.text, start) {
			return true
		}
	}
	return false
}

// received returns the first message sipp received starting with start.
func received(p *Sipp, start string) string {
	for _, m := range parseMessages(p.Messages()) {
		if m.received && strings.HasPrefix(m.text, start) {
			return m.text
		}
	}
	return ""
}

func TestCallerHangsUp(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"udp", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			uas := UAS(t, "uas_answer_wait_bye", Options{Transport: transport, Keys: keys("ring", "200")})
			uac := UAC(t, "uac_call", uas.Addr(), Options{Transport: transport, Service: "bob", Keys: keys("hold", "300", "from", "alice")})
			mustPass(t, uac, uas)
			invite := received(uas, "INVITE sip:bob@"+uas.Addr())
			if !strings.Contains(invite, "From: <sip:alice@127.0.0.1>") || !strings.Contains(invite, "SIP/2.0/"+strings.ToUpper(transport)) {
				t.Errorf("INVITE as received:\n%s", invite)
			}
			for _, codec := range []string{"m=audio ", " RTP/AVP 0 8 101", "a=rtpmap:0 PCMU/8000", "a=rtpmap:8 PCMA/8000", "a=rtpmap:101 telephone-event/8000"} {
				if !strings.Contains(invite, codec) {
					t.Errorf("INVITE's SDP lacks %q", codec)
				}
			}
			if received(uas, "BYE ") == "" {
				t.Error("the UAS saw no BYE")
			}
		})
	}
}

func TestCalleeHangsUp(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"udp", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			uas := UAS(t, "uas_answer_bye", Options{Transport: transport, Keys: keys("hold", "300")})
			uac := UAC(t, "uac_call_wait_bye", uas.Addr(), Options{Transport: transport})
			mustPass(t, uac, uas)
			if !sent(uas, "BYE sip:sipp@127.0.0.1:") {
				t.Errorf("the UAS sent no BYE to the caller's Contact:\n%s", uas.Messages())
			}
			if ok := received(uas, "SIP/2.0 200"); ok == "" || !strings.Contains(ok, "CSeq: 1 BYE") {
				t.Errorf("no 200 for the BYE:\n%s", ok)
			}
		})
	}
}

// TestToneReachesCaller listens where a caller's SDP points and checks that
// uas_answer_bye sends the 1 kHz tone as PCMU, and nothing with audio=0.
func TestToneReachesCaller(t *testing.T) {
	t.Parallel()
	probe, err := os.ReadFile("testdata/uac_rtp_probe.xml")
	if err != nil {
		t.Fatal(err)
	}
	for _, audio := range []string{"1", "0"} {
		t.Run("audio="+audio, func(t *testing.T) {
			t.Parallel()
			RequireSipp(t)
			conn, err := net.ListenPacket("udp4", localIP+":0")
			if err != nil {
				t.Fatal(err)
			}
			type rtp struct {
				pt      byte
				payload []byte
				from    string
			}
			packets := make(chan []rtp, 1)
			go func() {
				var got []rtp
				buf := make([]byte, 2048)
				for {
					n, from, err := conn.ReadFrom(buf)
					if err != nil {
						packets <- got
						return
					}
					if n >= 12 {
						got = append(got, rtp{buf[1] & 0x7f, append([]byte(nil), buf[12:n]...), from.String()})
					}
				}
			}()
			port := strconv.Itoa(conn.LocalAddr().(*net.UDPAddr).Port)

			uas := UAS(t, "uas_answer_bye", Options{Keys: keys("hold", "1000", "audio", audio)})
			uac := start(t, "uac_rtp_probe", probe, uas.Addr(), Options{Keys: keys("probe_port", port)})
			mustPass(t, uac, uas)
			time.Sleep(50 * time.Millisecond)
			_ = conn.Close()
			got := <-packets

			if audio == "0" {
				if len(got) != 0 {
					t.Fatalf("audio=0 sent %d RTP packets", len(got))
				}
				return
			}
			if len(got) < 25 { // 1 s at 20 ms a packet, with slack
				t.Fatalf("%d RTP packets in a 1 s call, want about 50", len(got))
			}
			var ulaw []byte
			for _, p := range got {
				if p.pt != 0 || len(p.payload) != 160 {
					t.Fatalf("RTP payload type %d with %d bytes, want PCMU (0) with 160", p.pt, len(p.payload))
				}
				if p.from != uas.MediaAddr() {
					t.Errorf("RTP from %s, want sipp's media port %s", p.from, uas.MediaAddr())
				}
				ulaw = append(ulaw, p.payload...)
			}
			if hz := zeroCrossingHz(ulaw); math.Abs(hz-1000) > 20 {
				t.Errorf("the tone is %.0f Hz, want 1000", hz)
			}
		})
	}
}

func TestBusy(t *testing.T) {
	t.Parallel()
	uas := UAS(t, "uas_busy", Options{})
	uac := UAC(t, "uac_reject", uas.Addr(), Options{Keys: keys("code", "486")})
	mustPass(t, uac, uas)
	ack := received(uas, "ACK ")
	invite := received(uas, "INVITE ")
	branch := func(msg string) string {
		via, _ := header(msg, "Via")
		_, b, _ := strings.Cut(via, "branch=")
		return b
	}
	if branch(ack) == "" || branch(ack) != branch(invite) {
		t.Errorf("the ACK for the 486 is not in the INVITE's transaction:\n%s\n%s", invite, ack)
	}
	if to, _ := header(ack, "To"); !strings.Contains(to, ";tag=") {
		t.Errorf("the ACK's To has no tag: %s", to)
	}
}

func TestReject(t *testing.T) {
	t.Parallel()
	t.Run("503", func(t *testing.T) {
		t.Parallel()
		uas := UAS(t, "uas_reject", Options{Keys: keys("code", "503", "reason", "Service Unavailable")})
		uac := UAC(t, "uac_reject", uas.Addr(), Options{Keys: keys("code", "503")})
		mustPass(t, uac, uas)
		if !sent(uas, "SIP/2.0 503 Service Unavailable") {
			t.Error("no 503 Service Unavailable sent")
		}
	})
	t.Run("480", func(t *testing.T) {
		t.Parallel()
		uas := UAS(t, "uas_reject", Options{Keys: keys("code", "480", "reason", "Temporarily Unavailable")})
		uac := UAC(t, "uac_reject", uas.Addr(), Options{Keys: keys("code", "480")})
		mustPass(t, uac, uas)
	})
	t.Run("wrong code", func(t *testing.T) {
		t.Parallel()
		uas := UAS(t, "uas_reject", Options{Keys: keys("code", "404", "reason", "Not Found")})
		uac := UAC(t, "uac_reject", uas.Addr(), Options{Keys: keys("code", "486")})
		mustFail(t, uac, "expected a 486 final response, got SIP/2.0 404 Not Found")
		mustPass(t, uas) // it got its ACK
	})
}

func TestProxyAuth407(t *testing.T) {
	t.Parallel()
	t.Run("right credentials", func(t *testing.T) {
		t.Parallel()
		uas := UAS(t, "uas_auth", Options{Keys: keys("user", "trunk1", "pass", "s3cret", "hold", "300")})
		uac := UAC(t, "uac_digest", uas.Addr(), Options{Service: "bob", Keys: keys("user", "trunk1", "pass", "s3cret", "bye", "wait")})
		mustPass(t, uac, uas)
		challenge := received(uac, "SIP/2.0 407 Proxy Authentication Required")
		if !strings.Contains(challenge, `Proxy-Authenticate: Digest realm="parley.test", nonce="`) {
			t.Errorf("407 as received:\n%s", challenge)
		}
		var authed string
		for _, m := range parseMessages(uas.Messages()) {
			if v, ok := header(m.text, "Proxy-Authorization"); m.received && ok {
				authed = v
			}
		}
		if !strings.Contains(authed, `username="trunk1"`) || !strings.Contains(authed, `uri="sip:bob@`+uas.Addr()+`"`) {
			t.Errorf("Proxy-Authorization %q: want user trunk1 and the Request-URI as uri", authed)
		}
	})
	t.Run("wrong user", func(t *testing.T) {
		t.Parallel()
		uas := UAS(t, "uas_auth", Options{Keys: keys("user", "trunk1", "pass", "s3cret")})
		uac := UAC(t, "uac_digest", uas.Addr(), Options{Keys: keys("user", "intruder", "pass", "s3cret")})
		mustFail(t, uas, "digest authentication failed")
		mustFail(t, uac, "rejected: SIP/2.0 403 Forbidden")
	})
	t.Run("wrong password", func(t *testing.T) {
		t.Parallel()
		// SIPp cannot check a Proxy-Authorization's password: the call is
		// answered and Wait reports the bad digest.
		uas := UAS(t, "uas_auth", Options{Keys: keys("user", "trunk1", "pass", "s3cret", "hold", "200")})
		uac := UAC(t, "uac_digest", uas.Addr(), Options{Keys: keys("user", "trunk1", "pass", "guess", "bye", "wait")})
		mustFail(t, uas, `does not verify with user "trunk1" and password "s3cret"`)
		mustPass(t, uac)
	})
}

func TestAuth401(t *testing.T) {
	t.Parallel()
	t.Run("right credentials", func(t *testing.T) {
		t.Parallel()
		uas := UAS(t, "uas_auth401", Options{Keys: keys("user", "alice", "pass", "pw", "bye", "wait")})
		uac := UAC(t, "uac_digest", uas.Addr(), Options{Keys: keys("user", "alice", "pass", "pw", "hold", "300")})
		mustPass(t, uac, uas)
		if strings.Contains(received(uas, "INVITE sip:service@"), "Authorization: Digest") {
			t.Error("the first INVITE carried credentials")
		}
		var authed bool
		for _, m := range parseMessages(uas.Messages()) {
			if _, ok := header(m.text, "Authorization"); m.received && ok {
				authed = true
			}
		}
		if !authed {
			t.Error("no INVITE with Authorization")
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		t.Parallel()
		uas := UAS(t, "uas_auth401", Options{Keys: keys("user", "alice", "pass", "pw")})
		uac := UAC(t, "uac_digest", uas.Addr(), Options{Keys: keys("user", "alice", "pass", "nope")})
		mustFail(t, uas, "digest authentication failed")
		mustFail(t, uac, "rejected: SIP/2.0 403 Forbidden")
		if !sent(uas, "SIP/2.0 403 Forbidden") {
			t.Error("no 403 sent")
		}
	})
}

func TestCancelWhileRinging(t *testing.T) {
	t.Parallel()
	uas := UAS(t, "uas_ring_forever", Options{})
	uac := UAC(t, "uac_cancel", uas.Addr(), Options{Keys: keys("hold", "300")})
	mustPass(t, uac, uas)
	if !sent(uas, "SIP/2.0 487 Request Terminated") {
		t.Error("no 487 sent")
	}
	for _, m := range parseMessages(uas.Messages()) {
		if !m.received && strings.HasPrefix(m.text, "SIP/2.0 487") {
			if cseq, _ := header(m.text, "CSeq"); cseq != "1 INVITE" {
				t.Errorf("487 with CSeq %q, want 1 INVITE", cseq)
			}
		}
		if !m.received && strings.HasPrefix(m.text, "SIP/2.0 200") {
			if cseq, _ := header(m.text, "CSeq"); cseq != "1 CANCEL" {
				t.Errorf("200 with CSeq %q, want 1 CANCEL", cseq)
			}
		}
	}
}

// uas_answer_late answers after ringing and waits for the caller's BYE;
// the caller's ACK ends its 200's retransmissions.
func TestAnswerLate(t *testing.T) {
	t.Parallel()
	uas := UAS(t, "uas_answer_late", Options{Keys: keys("ring", "300")})
	uac := UAC(t, "uac_call", uas.Addr(), Options{Keys: keys("hold", "200")})
	mustPass(t, uac, uas)
	for _, m := range parseMessages(uas.Messages()) {
		if !m.received && strings.HasPrefix(m.text, "SIP/2.0 200") && strings.Contains(m.text, "application/sdp") {
			if cseq, _ := header(m.text, "CSeq"); cseq != "1 INVITE" {
				t.Errorf("the answer's CSeq %q, want 1 INVITE", cseq)
			}
		}
	}
	if received(uas, "BYE ") == "" {
		t.Error("no BYE received")
	}
}

func TestRingTimeout(t *testing.T) {
	t.Parallel()
	// Nobody cancels: the ringing scenario fails at its overall timeout.
	uas := UAS(t, "uas_ring_forever", Options{Timeout: time.Second})
	uac := UAC(t, "uac_call", uas.Addr(), Options{Timeout: time.Second})
	mustFail(t, uas, "timed out")
	mustFail(t, uac, "timed out")
}

func TestRefer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, want, sent string }{
		{"exact", "sip:agent2@127.0.0.1:5070", "sip:agent2@127.0.0.1:5070"},
		{"with parameters", "sip:agent2@127.0.0.1:5070", "sip:agent2@127.0.0.1:5070;transport=udp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			uas := UAS(t, "uas_refer", Options{Keys: keys("refer_to", tc.want)})
			uac := UAC(t, "uac_refer", uas.Addr(), Options{Keys: keys("refer_to", tc.sent, "hold", "200")})
			mustPass(t, uac, uas)
			if refer := received(uas, "REFER "); !strings.Contains(refer, "Refer-To: <"+tc.sent+">") {
				t.Errorf("REFER as received:\n%s", refer)
			}
			notify := received(uac, "NOTIFY ")
			for _, want := range []string{"Event: refer", "Subscription-State: terminated;reason=noresource", "Content-Type: message/sipfrag", "\nSIP/2.0 200 OK"} {
				if !strings.Contains(notify, want) {
					t.Errorf("NOTIFY lacks %q:\n%s", want, notify)
				}
			}
		})
	}
	t.Run("wrong target", func(t *testing.T) {
		t.Parallel()
		uas := UAS(t, "uas_refer", Options{Keys: keys("refer_to", "sip:agent2@127.0.0.1")})
		UAC(t, "uac_refer", uas.Addr(), Options{Keys: keys("refer_to", "sip:agent3@127.0.0.1", "hold", "100")})
		mustFail(t, uas, "Refer-To sip:agent3@127.0.0.1 is not sip:agent2@127.0.0.1")
		// the UAC is left waiting for its 202; cleanup kills it
	})
}

func TestManyConcurrentCalls(t *testing.T) {
	t.Parallel()
	const calls = 200
	uas := UAS(t, "uas_answer_many", Options{Calls: calls, Limit: calls})
	uac := UAC(t, "uac_call", uas.Addr(), Options{Calls: calls, Limit: calls, Rate: 200, Keys: keys("hold", "2000")})
	mustPass(t, uac, uas)
	if n := strings.Count(uas.Messages(), "\nBYE sip:"); n != calls {
		t.Errorf("the UAS saw %d BYEs, want %d", n, calls)
	}
}

// pcmuStreams listens on a loopback UDP port and collects the PCMU payload
// of every 20 ms RTP packet it receives, by SSRC, until stop is called.
func pcmuStreams(t *testing.T) (port int, stop func() map[uint32][]byte) {
	t.Helper()
	conn, err := net.ListenPacket("udp4", localIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	streams := make(chan map[uint32][]byte, 1)
	go func() {
		got := map[uint32][]byte{}
		buf := make([]byte, 2048)
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				streams <- got
				return
			}
			if n == 12+160 && buf[1]&0x7f == 0 {
				ssrc := binary.BigEndian.Uint32(buf[8:])
				got[ssrc] = append(got[ssrc], buf[12:n]...)
			}
		}
	}()
	return conn.LocalAddr().(*net.UDPAddr).Port, func() map[uint32][]byte {
		_ = conn.Close()
		return <-streams
	}
}

// talkingProbe runs a talking scenario against a probe scenario that
// forwards the talker's RTP to pcmuStreams, and checks one stream per call,
// each more than the file's length in a 1.2 s call (so the file played
// more than once); it returns the streams.
func talkingProbe(t *testing.T, talker, probe string, wav []byte, talkerIsUAS bool) map[uint32][]byte {
	t.Helper()
	t.Parallel()
	RequireSipp(t)
	scenario, err := os.ReadFile("testdata/" + probe + ".xml")
	if err != nil {
		t.Fatal(err)
	}
	port, stop := pcmuStreams(t)
	const calls = 2
	talk := Options{Calls: calls, Keys: keys("hold", "1200"), Files: map[string][]byte{"speech.wav": wav}}
	probed := Options{Calls: calls, Keys: keys("probe_port", strconv.Itoa(port))}
	var uac, uas *Sipp
	if talkerIsUAS {
		uas = UAS(t, talker, talk)
		uac = start(t, probe, scenario, uas.Addr(), probed)
	} else {
		uas = start(t, probe, scenario, "", probed)
		uac = UAC(t, talker, uas.Addr(), talk)
	}
	mustPass(t, uac, uas)
	counter := uac
	if talkerIsUAS {
		counter = uas
	}
	if ok, failed, counted := counter.Counts(); !counted || ok != calls || failed != 0 {
		t.Errorf("sipp counted %d successful and %d failed calls (counted: %v), want %d and 0", ok, failed, counted, calls)
	}
	got := stop()
	if len(got) != calls {
		t.Fatalf("%d RTP streams (SSRCs), want one per call (%d)", len(got), calls)
	}
	for ssrc, ulaw := range got {
		if len(ulaw) < len(wav)+8000/2 {
			t.Errorf("stream %08x: %d bytes of audio in a 1.2 s call", ssrc, len(ulaw))
		}
	}
	return got
}

// TestTalkingCallers: uac_talk streams speech.wav, looped, as PCMU from
// sipp's media port, one RTP stream (SSRC) per call, then hangs up; sipp
// counts its calls.
func TestTalkingCallers(t *testing.T) {
	// Half a second of a rising tone, so a loop's start is recognizable.
	pcm := make([]int16, 4000)
	for i := range pcm {
		pcm[i] = int16(8000 * math.Sin(2*math.Pi*float64(200+i/10)*float64(i)/8000))
	}
	wav := ULawWAV(pcm)
	// SIPp 3.6.1 plays the file as it is, its 46-byte header included
	// (about 6 ms of noise per loop).
	for ssrc, ulaw := range talkingProbe(t, "uac_talk", "uas_rtp_probe", wav, false) {
		if len(ulaw) < len(wav)+1600 {
			continue // reported by talkingProbe
		}
		if !bytes.Equal(ulaw[:len(wav)], wav) || !bytes.Equal(ulaw[len(wav):len(wav)+1600], wav[:1600]) {
			t.Errorf("stream %08x does not play speech.wav from its start, looped", ssrc)
		}
	}
}

// TestTalkingCallees: uas_talk answers, streams speech.wav, looped, as
// PCMU from sipp's media port to each caller's SDP address, one stream
// (SSRC) per call, then hangs up itself.
func TestTalkingCallees(t *testing.T) {
	talkingProbe(t, "uas_talk", "uac_rtp_probe", ULawWAV(make([]int16, 4000)), true)
}

func TestULawWAV(t *testing.T) {
	pcm := make([]int16, 8000)
	for i := range pcm {
		pcm[i] = int16(0.5 * 32767 * math.Sin(2*math.Pi*1000*float64(i)/8000))
	}
	if got, want := ULawWAV(pcm)[:46], toneWAVFile()[:46]; !bytes.Equal(got, want) {
		t.Errorf("header % x, want % x (tone1k_pcmu.wav's)", got, want)
	}
}

// requireRawSocket skips uac_dtmf tests where sipp's play_pcap_audio cannot
// open its raw socket.
func requireRawSocket(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 && os.Getenv("CI") != "true" {
		t.Skip("uac_dtmf plays a pcap through a raw socket: run as root (or give sipp CAP_NET_RAW)")
	}
}

func TestDTMFToSipp(t *testing.T) {
	t.Parallel()
	requireRawSocket(t)
	digits := "19#"
	uas := UAS(t, "uas_answer_wait_bye", Options{Keys: keys("audio", "0")})
	uac := UAC(t, "uac_dtmf", uas.Addr(), Options{Keys: keys("digits", digits, "hold", strconv.Itoa(int(DTMFDuration(digits).Milliseconds())))})
	mustPass(t, uac, uas)
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	uas := UAS(t, "uas_answer_wait_bye", Options{Timeout: time.Second})
	mustFail(t, uas, "uas_answer_wait_bye timed out after")
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("a 1 s timeout took %v", d)
	}
}

func TestNothingLeftRunning(t *testing.T) {
	t.Parallel()
	RequireSipp(t)
	var addr string
	var pid int
	t.Run("abandoned", func(t *testing.T) {
		uas := UAS(t, "uas_answer_wait_bye", Options{})
		addr, pid = uas.Addr(), uas.cmd.Process.Pid
	})
	_, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	if ok, err := bound([]socket{{"udp", n}}); err == nil && ok {
		t.Errorf("%s is still bound after the test", addr)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("sipp (pid %d) still runs after the test", pid)
	}
}

func TestUnknownTransport(t *testing.T) {
	t.Parallel()
	ft := &fakeT{TB: t}
	func() {
		defer func() { _ = recover() }()
		UAS(ft, "uas_busy", Options{Transport: "sctp"})
	}()
	if !ft.failed {
		t.Error("transport sctp accepted")
	}
}

// fakeT records a Fatal instead of ending the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = true
	panic(errors.New("fatal"))
}

func (f *fakeT) Fatal(args ...any) {
	f.failed = true
	panic(errors.New("fatal"))
}

func (f *fakeT) Helper() {}

// uac_flood takes any final error response: 503 and 486 alike end its
// calls, and each is ACKed.
func TestFloodScenarioTakesAnyRefusal(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"503", "486"} {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			uas := UAS(t, "uas_reject", Options{Calls: 3, Keys: keys("code", code, "reason", "Refused")})
			uac := UAC(t, "uac_flood", uas.Addr(), Options{Calls: 3, Rate: 50})
			mustPass(t, uac, uas)
		})
	}
}
