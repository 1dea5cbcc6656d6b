package sipua

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

const fuzzInvite = "INVITE sip:+15551230000@127.0.0.1 SIP/2.0\r\n" +
	"Via: SIP/2.0/UDP 127.0.0.1:5099;branch=z9hG4bK-fuzz-1\r\n" +
	"From: <sip:fuzz@127.0.0.1>;tag=1\r\nTo: <sip:+15551230000@127.0.0.1>\r\n" +
	"Call-ID: fuzz-1\r\nCSeq: 1 INVITE\r\nContact: <sip:fuzz@127.0.0.1:5099>\r\n" +
	"Content-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s"

// FuzzSIPDatagram throws datagrams at a live user agent whose handler
// answers every INVITE (so SDP offers reach the answer path) and checks it
// still answers OPTIONS afterwards. The agent is shared across inputs.
func FuzzSIPDatagram(f *testing.F) {
	sdp := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\n"
	for _, body := range []string{sdp, "v=0\r\nm=audio x RTP/AVP\r\n", "m=audio 1 RTP/AVP 9999\r\n", strings.Repeat("a=x\r\n", 200), ""} {
		f.Add([]byte(strings.Replace(strings.Replace(fuzzInvite, "%d", itoa(len(body)), 1), "%s", body, 1)))
	}
	f.Add([]byte("INFO sip:x@127.0.0.1 SIP/2.0\r\nCall-ID: nope\r\nContent-Type: application/dtmf-relay\r\nContent-Length: 8\r\n\r\nSignal=5"))
	f.Add([]byte("garbage\r\n\r\n"))
	var (
		fuzzOnce sync.Once
		fuzzUA   *UA
	)
	f.Cleanup(func() {
		if fuzzUA != nil {
			fuzzUA.Close()
		}
	})
	f.Fuzz(func(t *testing.T, msg []byte) {
		fuzzOnce.Do(func() {
			ua, err := New(Config{ListenAddr: "127.0.0.1:0", MaxDialogs: 50, Logger: discard()})
			if err != nil {
				t.Fatal(err)
			}
			err = ua.Start(context.Background(), func(ctx context.Context, in *Incoming) {
				if leg, err := in.Answer(); err == nil {
					_ = leg.Hangup(ctx)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			fuzzUA = ua
		})
		c, err := net.Dial("udp", fuzzUA.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = c.Write(msg)
		opts := "OPTIONS sip:probe@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP " + c.LocalAddr().String() +
			";branch=z9hG4bK-probe-" + itoa(int(time.Now().UnixNano()%1e9)) + "\r\nFrom: <sip:p@127.0.0.1>;tag=p\r\n" +
			"To: <sip:probe@127.0.0.1>\r\nCall-ID: probe-" + itoa(int(time.Now().UnixNano()%1e9)) + "\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
		_, _ = c.Write([]byte(opts))
		_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("the agent stopped answering after %q: %v", msg, err)
			}
			if strings.Contains(string(buf[:n]), "OPTIONS") && strings.HasPrefix(string(buf[:n]), "SIP/2.0 200") {
				return
			}
		}
	})
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
