package sipua

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"reflect"
	"sync/atomic"
	"unsafe"

	dmedia "github.com/emiago/diago/media"
)

// mediaConn is the UDP socket diago opened for a media session's RTP:
// the leg reads and writes it directly (see the package doc). diago
// (v0.31) keeps it in an unexported field and offers no accessor; its
// raw paths (MediaSession.ReadRTPRaw, WriteRTPRaw) go through
// net.PacketConn.ReadFrom, which allocates an address per packet. The
// field is found by name and type, so a diago that renames or retypes it
// makes every leg fail to start (TestMediaConnOfDiago) rather than
// misbehave.
func mediaConn(ms *dmedia.MediaSession) (*net.UDPConn, error) {
	if ms == nil {
		return nil, errors.New("sipua: no media session")
	}
	f := reflect.ValueOf(ms).Elem().FieldByName("rtpConn")
	if !f.IsValid() || f.Type() != reflect.TypeFor[net.PacketConn]() {
		return nil, errors.New("sipua: diago's media session has no rtpConn net.PacketConn field")
	}
	pc := *(*net.PacketConn)(unsafe.Pointer(f.UnsafeAddr()))
	c, ok := pc.(*net.UDPConn)
	if !ok {
		return nil, errors.New("sipua: diago's RTP socket is not a *net.UDPConn")
	}
	return c, nil
}

// udpSink sends a leg's RTP from its own socket (symmetric RTP: the port
// in our SDP is the packets' source) to the far end: the address its SDP
// gave, or, on legs that learn it (inbound, as diago's RTPNAT did), the
// address its RTP first came from when that differs (a phone behind NAT).
//
// One sendto per packet: sendmmsg (golang.org/x/net/ipv4
// PacketConn.WriteBatch) batches only packets on one socket, and each leg
// has its own socket and port, which symmetric RTP needs as the source.
// A pacer's walk sends one packet per leg per wake (up to maxBurst when it
// catches up after waking late), so there is no batch to make on a
// socket; batching across legs would take one shared socket, whose single
// source port breaks symmetric RTP for every leg (IP_PKTINFO picks the
// source address, not the port).
type udpSink struct {
	conn *net.UDPConn
	to   atomic.Pointer[netip.AddrPort] // where packets go
	// sdp is the far end's address from SDP; learn: follow the source of
	// its RTP when that differs (once per negotiation, as diago does).
	sdp     atomic.Pointer[netip.AddrPort]
	learn   bool
	learned atomic.Bool
	// quiet: the negotiated direction lets us send nothing (recvonly or
	// inactive: the far end holds the call); packets go nowhere.
	quiet atomic.Bool
}

func newUDPSink(conn *net.UDPConn, raddr net.UDPAddr, learn bool) *udpSink {
	s := &udpSink{conn: conn, learn: learn}
	s.retarget(raddr)
	return s
}

func (s *udpSink) writeRTP(pkt []byte) error {
	if s.quiet.Load() {
		return nil
	}
	_, err := s.conn.WriteToUDPAddrPort(pkt, *s.to.Load())
	return err
}

// negotiated takes the far end's address and the direction from the
// media session's SDP, at the start and after a re-INVITE.
func (s *udpSink) negotiated(ms *dmedia.MediaSession) {
	// The answer's direction line is the negotiated one (diago keeps it
	// unexported).
	local := ms.LocalSDP()
	s.quiet.Store(bytes.Contains(local, []byte("a=recvonly")) || bytes.Contains(local, []byte("a=inactive")))
	s.retarget(ms.Raddr)
}

// retarget sends to the far end's address from its SDP.
func (s *udpSink) retarget(raddr net.UDPAddr) {
	a := unmapped(raddr.AddrPort())
	s.sdp.Store(&a)
	s.to.Store(&a)
	s.learned.Store(false)
}

// heard notes a packet from from, the far end's RTP source; only the RTP
// reader calls it.
func (s *udpSink) heard(from netip.AddrPort) {
	if !s.learn || s.learned.Load() {
		return
	}
	if from = unmapped(from); from == *s.sdp.Load() {
		return
	}
	a := from
	s.to.Store(&a)
	s.learned.Store(true)
}

func unmapped(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}
