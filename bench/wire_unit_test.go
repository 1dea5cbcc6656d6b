package bench

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// rtpFrame builds a PCMU RTP packet whose 160 samples are all sample.
func rtpFrame(seq uint16, ts uint32, sample byte) []byte {
	b := make([]byte, 12+frameSamples)
	b[0], b[1] = 0x80, 0
	binary.BigEndian.PutUint16(b[2:], seq)
	binary.BigEndian.PutUint32(b[4:], ts)
	binary.BigEndian.PutUint32(b[8:], 0xbeef)
	for i := 12; i < len(b); i++ {
		b[i] = sample
	}
	return b
}

// writePcap writes packets as a classic little-endian Ethernet pcap with
// microsecond timestamps, the way dumpcap -P does on loopback.
func writePcap(t *testing.T, pkts []udpPacket) string {
	t.Helper()
	le, be := binary.LittleEndian, binary.BigEndian
	var out []byte
	out = le.AppendUint32(out, 0xa1b2c3d4)
	out = le.AppendUint16(out, 2)
	out = le.AppendUint16(out, 4)
	out = le.AppendUint32(out, 0)
	out = le.AppendUint32(out, 0)
	out = le.AppendUint32(out, 262144)
	out = le.AppendUint32(out, 1)
	for _, p := range pkts {
		frame := make([]byte, 14+20+8, 14+20+8+len(p.payload))
		be.PutUint16(frame[12:], 0x0800)
		ip := frame[14:]
		ip[0], ip[9] = 0x45, 17
		be.PutUint16(ip[2:], uint16(20+8+len(p.payload)))
		copy(ip[12:], []byte{127, 0, 0, 1, 127, 0, 0, 1})
		be.PutUint16(ip[20:], p.src)
		be.PutUint16(ip[22:], p.dst)
		be.PutUint16(ip[24:], uint16(8+len(p.payload)))
		frame = append(frame, p.payload...)
		out = le.AppendUint32(out, uint32(p.at/time.Second))
		out = le.AppendUint32(out, uint32(p.at%time.Second/time.Microsecond))
		out = le.AppendUint32(out, uint32(len(frame)))
		out = le.AppendUint32(out, uint32(len(frame)))
		out = append(out, frame...)
	}
	path := filepath.Join(t.TempDir(), "t.pcap")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadPcapAndParseRTP(t *testing.T) {
	base := 1_700_000_000 * time.Second
	want := []udpPacket{
		{at: base + 20*time.Millisecond, src: 42000, dst: 5004, payload: rtpFrame(7, 160, 0xff)},
		{at: base + 40*time.Millisecond + 17*time.Microsecond, src: 5004, dst: 42000, payload: rtpFrame(8, 320, 0x10)},
	}
	got, err := readPcap(writePcap(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("readPcap = %+v, want %+v", got, want)
	}
	silent, ssrc, ok := parseRTP(got[0])
	if !ok || ssrc != 0xbeef || silent.seq != 7 || silent.ts != 160 || silent.voiced {
		t.Errorf("parseRTP(silence) = %+v %x %v", silent, ssrc, ok)
	}
	loud, _, ok := parseRTP(got[1])
	if !ok || !loud.voiced {
		t.Errorf("parseRTP(loud) = %+v %v, want voiced", loud, ok)
	}
	rtcp := udpPacket{payload: append([]byte{0x80, 200}, make([]byte, 26)...)}
	if _, _, ok := parseRTP(rtcp); ok {
		t.Error("parseRTP took an RTCP sender report for G.711")
	}
}

// stream is n packets of a stream at 20 ms, arrivals shifted by delay(i).
func stream(n int, delay func(i int) time.Duration, skip map[int]bool) []rtpPacket {
	var s []rtpPacket
	for i := range n {
		if skip[i] {
			continue
		}
		s = append(s, rtpPacket{at: time.Duration(i)*frameDur + delay(i), seq: uint16(65530 + i), ts: uint32(i * frameSamples)})
	}
	return s
}

func TestMeasureStream(t *testing.T) {
	jitter := func(i int) time.Duration { // early and slightly late packets, none more than a frame late
		return [...]time.Duration{0, -18 * time.Millisecond, 5 * time.Millisecond, 0}[i%4]
	}
	if got := measureStream(stream(100, jitter, nil)); got != (streamStats{received: 100}) {
		t.Errorf("a jittery stream on time: %+v, want 100 received, none late or lost", got)
	}
	late := func(i int) time.Duration {
		if i >= 50 && i < 55 {
			return 45 * time.Millisecond // a stall: five frames leave late in a burst
		}
		return 0
	}
	got := measureStream(stream(100, late, map[int]bool{10: true, 11: true, 99: true}))
	if want := (streamStats{received: 97, lost: 2, late: 5}); got != want {
		t.Errorf("a stream with a stall and two losses (and its last packet never sent): %+v, want %+v", got, want)
	}
}

func TestTurnsOnWire(t *testing.T) {
	// 10 s of a call at 20 ms: the caller speaks 1-2 s (with a 100 ms
	// pause at 1.4 s, not a turn: the caller goes on first) and 4-5 s; the
	// agent answers 700 ms after the first, is talked over at 4 s, stops at
	// 4.2 s, and answers the second 880 ms after the caller's end.
	at := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
	var caller, agent []rtpPacket
	for ms := 0; ms < 10000; ms += 20 {
		c := (ms >= 1000 && ms < 1400) || (ms >= 1500 && ms < 2000) || (ms >= 4000 && ms < 5000)
		a := (ms >= 2680 && ms < 4200) || (ms >= 5860 && ms < 7000)
		caller = append(caller, rtpPacket{at: at(ms), voiced: c})
		agent = append(agent, rtpPacket{at: at(ms + 1), voiced: a})
	}
	got := turnsOnWire(caller, agent)
	want := []wireTurn{{at(1980), at(2681)}, {at(4980), at(5861)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turnsOnWire = %v, want %v", got, want)
	}
	// The agent speaking through the caller's end is not a turn.
	for i := range agent {
		agent[i].voiced = true
	}
	if got := turnsOnWire(caller, agent); len(got) != 0 {
		t.Errorf("turnsOnWire with the agent always speaking = %v, want none", got)
	}
}

func TestBencodeRoundTrip(t *testing.T) {
	msg := map[string]any{"command": "offer", "call-id": "c1", "flags": []any{"trust-address", "x"}, "n": 42, "sdp": "v=0\r\n"}
	enc := bencode(msg)
	if want := "d7:call-id2:c17:command5:offer5:flagsl13:trust-address1:xe1:ni42e3:sdp5:v=0\r\ne"; string(enc) != want {
		t.Errorf("bencode = %q, want %q", enc, want)
	}
	got, rest, err := bdecode(enc)
	if err != nil || len(rest) != 0 || !reflect.DeepEqual(got, msg) {
		t.Errorf("bdecode = %v, %q, %v; want %v", got, rest, err, msg)
	}
	for _, bad := range []string{"d3:key", "5:ab", "i12", "l1:a", "di1e1:ae"} {
		if _, _, err := bdecode([]byte(bad)); err == nil {
			t.Errorf("bdecode(%q): no error", bad)
		}
	}
}
