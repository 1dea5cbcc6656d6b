package telephony

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"

	"github.com/parley-voice/parley/internal/store"
)

// faultyStore is the env's store whose transactions (reads, writes or
// both) fail with err while set: the phone and the queue see an outage.
type faultyStore struct {
	store.Store
	mu             sync.Mutex
	views, updates error
}

func (s *faultyStore) set(views, updates error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.views, s.updates = views, updates
}

func (s *faultyStore) View(ctx context.Context, fn func(store.Tx) error) error {
	s.mu.Lock()
	err := s.views
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	return s.Store.View(ctx, fn)
}

func (s *faultyStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.mu.Lock()
	err := s.updates
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	return s.Store.Update(ctx, fn)
}

// withFaults puts f between the env's store and its phone and queue.
func withFaults(f *faultyStore) envOption {
	return func(p *Phone, qo *callqueueOptions) {
		f.Store = p.Store
		p.Store, qo.Store = f, f
	}
}

// invite sends one INVITE for user to addr from a UDP socket of its own
// and returns the final response, which it ACKs.
func invite(t *testing.T, addr, user string) *sip.Response {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	to, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	local := conn.LocalAddr().String()
	b := make([]byte, 8)
	rand.Read(b)
	id := hex.EncodeToString(b)
	sdp := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" +
		"m=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=sendrecv\r\n"
	head := func(method string) string {
		return fmt.Sprintf("%s sip:%s@%s SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bK%s;rport\r\nMax-Forwards: 70\r\n"+
			"From: <sip:+15559870000@127.0.0.1>;tag=%s\r\nCall-ID: %s\r\n", method, user, addr, local, id, id, id)
	}
	msg := head("INVITE") + fmt.Sprintf("To: <sip:%s@%s>\r\nCSeq: 1 INVITE\r\nContact: <sip:+15559870000@%s>\r\n"+
		"Content-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s", user, addr, local, len(sdp), sdp)
	if _, err := conn.WriteTo([]byte(msg), to); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 65535)
	for {
		n, _, err := conn.ReadFrom(buf)
		if err != nil {
			t.Fatalf("INVITE %s: no final response: %v", user, err)
		}
		m, err := sip.ParseMessage(buf[:n])
		if err != nil {
			t.Fatalf("INVITE %s: unreadable answer: %v", user, err)
		}
		res, ok := m.(*sip.Response)
		if !ok || res.IsProvisional() {
			continue
		}
		ack := head("ACK") + fmt.Sprintf("To: %s\r\nCSeq: 1 ACK\r\nContent-Length: 0\r\n\r\n", res.To().Value())
		if _, err := conn.WriteTo([]byte(ack), to); err != nil {
			t.Fatal(err)
		}
		return res
	}
}

// An INVITE that cannot be routed or admitted because the database is
// unavailable is refused 503 with Retry-After (the carrier may try again,
// or another server), and leaves no record; any other failure stays 500.
func TestInviteDuringAnOutage(t *testing.T) {
	f := &faultyStore{}
	e := newEnv(t, withFaults(f))
	a := e.agent()
	e.number("+15551230000", &a.ID, nil)
	down := fmt.Errorf("%w: dial tcp 127.0.0.1:5432: connect: connection refused", store.ErrUnavailable)

	for _, tc := range []struct {
		name           string
		views, updates error
		code           int
		retryAfter     string
	}{
		{"routing cannot read", down, nil, 503, "5"},
		{"admission cannot write", nil, down, 503, "5"},
		{"an unexpected failure", nil, errors.New("boom"), 500, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.set(tc.views, tc.updates)
			defer f.set(nil, nil)
			res := invite(t, e.ua.Addr(), "+15551230000")
			if int(res.StatusCode) != tc.code {
				t.Fatalf("final response %d %s, want %d", res.StatusCode, res.Reason, tc.code)
			}
			got := ""
			if h := res.GetHeader("Retry-After"); h != nil {
				got = h.Value()
			}
			if got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
		})
	}
	if n := len(e.calls()); n != 0 {
		t.Errorf("%d call records; refused INVITEs must leave none", n)
	}
}
