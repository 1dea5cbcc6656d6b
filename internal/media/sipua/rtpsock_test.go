package sipua

import (
	"net"
	"slices"
	"testing"
	"time"

	dmedia "github.com/emiago/diago/media"
	"github.com/pion/rtp"
)

// The leg finds the RTP socket of the media session diago made.
func TestMediaConnOfDiago(t *testing.T) {
	ms, err := dmedia.NewMediaSession(net.IPv4(127, 0, 0, 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	c, err := mediaConn(ms)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LocalAddr().(*net.UDPAddr).Port; got != ms.Laddr.Port {
		t.Errorf("socket on port %d, the session's RTP port is %d", got, ms.Laddr.Port)
	}
}

// An inbound leg sends its RTP where the far end's RTP comes from once it
// differs from the SDP's address (a phone behind NAT); an outbound one
// keeps to the SDP's.
func TestRTPFollowsTheFarEndsSource(t *testing.T) {
	for _, learn := range []bool{true, false} {
		own, sdp, nat := udpConn(t), udpConn(t), udpConn(t)
		l := newMediaLeg(wallClock{}, dmedia.CodecAudioUlaw, newUDPSink(own, *sdp.LocalAddr().(*net.UDPAddr), learn))
		l.conn = own
		pkt, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 0, SequenceNumber: 1}, Payload: make([]byte, frame)}).Marshal()
		if _, err := nat.WriteTo(pkt, own.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		if err := l.readPacket(); err != nil {
			t.Fatal(err)
		}
		if err := l.tick(true); err != nil {
			t.Fatal(err)
		}
		want := sdp
		if learn {
			want = nat
		}
		// The one packet sent is there, or it went elsewhere (the
		// deadline only keeps a failure from hanging the test).
		_ = want.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := want.Read(make([]byte, rtpBufSize)); err != nil {
			t.Errorf("learn %v: no RTP at the address it should go to: %v", learn, err)
		}
	}
}

// parseRTP reads what pion writes: CSRCs, header extensions and padding
// are skipped, the payload is exact.
func TestParseRTP(t *testing.T) {
	payload := []byte{1, 2, 3, 4, 5}
	cases := []rtp.Packet{
		{Header: rtp.Header{Version: 2, PayloadType: 9, SequenceNumber: 7, Timestamp: 99, Marker: true}, Payload: payload},
		{Header: rtp.Header{Version: 2, PayloadType: 0, CSRC: []uint32{1, 2}}, Payload: payload},
		{Header: rtp.Header{Version: 2, PayloadType: 8, Extension: true, ExtensionProfile: 0xBEDE}, Payload: payload},
		{Header: rtp.Header{Version: 2, PayloadType: 101, Padding: true}, Payload: payload, PaddingSize: 3},
	}
	cases[2].Header.SetExtension(1, []byte{0xAA, 0xBB})
	for i, p := range cases {
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		h, got, ok := parseRTP(b)
		if !ok || !slices.Equal(got, payload) || h.pt != p.PayloadType || h.seq != p.SequenceNumber || h.ts != p.Timestamp || h.marker != p.Marker {
			t.Errorf("case %d: ok %v, payload %v, header %+v", i, ok, got, h)
		}
		if _, _, ok := parseRTP(b[:rtpHeaderLen-1]); ok {
			t.Errorf("case %d: a cut header parsed", i)
		}
	}
	if _, _, ok := parseRTP(make([]byte, 20)); ok {
		t.Error("version 0 parsed as RTP")
	}
}

// A far end that holds the call (its offer sendonly, so our answer is
// recvonly) gets no RTP from the leg until it offers sendrecv again.
func TestNoRTPWhileHeld(t *testing.T) {
	for _, mode := range []string{"sendonly", "sendrecv"} {
		far, err := dmedia.NewMediaSession(net.IPv4(127, 0, 0, 1), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer far.Close()
		far.Mode = mode
		ours, err := dmedia.NewMediaSession(net.IPv4(127, 0, 0, 1), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer ours.Close()
		if err := ours.RemoteSDP(far.LocalSDP()); err != nil {
			t.Fatal(err)
		}
		conn, err := mediaConn(ours)
		if err != nil {
			t.Fatal(err)
		}
		s := newUDPSink(conn, ours.Raddr, false)
		s.negotiated(ours)
		if held := mode == "sendonly"; s.quiet.Load() != held {
			t.Errorf("far end %s: quiet %v, want %v", mode, s.quiet.Load(), held)
		}
	}
}
