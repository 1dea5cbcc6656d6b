package sipua

import (
	"encoding/binary"
	"errors"
	"os"
	"time"

	"github.com/parley-voice/parley/internal/media"
)

// rtpBufSize holds any RTP packet a leg reads: an Ethernet MTU.
const rtpBufSize = 1500

// rtpHeader is what the leg uses of an RTP packet's header.
type rtpHeader struct {
	pt     uint8
	marker bool
	seq    uint16
	ts     uint32
}

// parseRTP reads the header of an RTP packet in place and returns its
// payload (CSRCs, header extension and padding skipped); ok is false for
// what is not RTP version 2 or is cut short.
func parseRTP(b []byte) (h rtpHeader, payload []byte, ok bool) {
	if len(b) < rtpHeaderLen || b[0]>>6 != 2 {
		return h, nil, false
	}
	h.marker, h.pt = b[1]&0x80 != 0, b[1]&0x7f
	h.seq = binary.BigEndian.Uint16(b[2:])
	h.ts = binary.BigEndian.Uint32(b[4:])
	n := rtpHeaderLen + 4*int(b[0]&0x0f) // CSRCs
	if b[0]&0x10 != 0 {                  // header extension
		if len(b) < n+4 {
			return h, nil, false
		}
		n += 4 + 4*int(binary.BigEndian.Uint16(b[n+2:]))
	}
	end := len(b)
	if b[0]&0x20 != 0 && end > 0 { // padding: its length is the last byte
		end -= int(b[end-1])
	}
	if n > end {
		return h, nil, false
	}
	return h, b[n:end], true
}

// rtpIn is the RTP reader's state: a leg's receive side, used only by the
// goroutine that reads its socket.
type rtpIn struct {
	buf     []byte  // the packet read
	pcm     []int16 // its decoded audio
	audioPT uint8
	eventPT uint8
	lastSeq uint16
	haveSeq bool
	// The RFC 4733 event last reported: its timestamp.
	eventTS   uint32
	haveEvent bool
}

// readPacket reads one packet from the leg's socket and acts on it: caller
// audio is decoded and handed on (receive), a telephone-event's end
// reports its digit. Keep-alives, other payload types, duplicates and
// packets later than what already played are dropped.
func (l *Leg) readPacket() error {
	in := &l.rx
	n, from, err := l.conn.ReadFromUDPAddrPort(in.buf)
	if err != nil {
		return err
	}
	at := time.Now()
	h, payload, ok := parseRTP(in.buf[:n])
	if !ok || len(payload) == 0 {
		return nil
	}
	l.sink.heard(from)
	switch h.pt {
	case in.audioPT:
		if in.haveSeq && int16(h.seq-in.lastSeq) <= 0 {
			return nil // a duplicate, or later than what already played
		}
		in.lastSeq, in.haveSeq = h.seq, true
		in.pcm = l.coder.decode(in.pcm[:0], payload)
		l.receive(in.pcm, at)
	case in.eventPT:
		l.event(h, payload)
	}
	return nil
}

// event reports the digit of an RFC 4733 event once, on its first end
// packet (senders repeat the end; its timestamp, the event's start, tells
// the repeats from the next event).
func (l *Leg) event(h rtpHeader, payload []byte) {
	in := &l.rx
	if len(payload) < 4 || payload[1]&0x80 == 0 || payload[0] > 15 {
		return
	}
	if in.haveEvent && h.ts == in.eventTS {
		return
	}
	in.eventTS, in.haveEvent = h.ts, true
	l.digit(eventDigit(payload[0]))
}

// eventDigit is the keypad digit of RFC 4733 event 0–15.
func eventDigit(e byte) rune {
	switch {
	case e <= 9:
		return rune('0' + e)
	case e == 10:
		return '*'
	case e == 11:
		return '#'
	}
	return rune('A' + e - 12)
}

// read reads the far end's RTP until the socket is closed: caller audio
// goes to the Audio reader or the bridged peer and to the recording's
// backlog as soon as it is decoded.
func (l *Leg) read() {
	defer l.loops.Done()
	for {
		err := l.readPacket()
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && !l.stopping() {
			// diago sets read deadlines on the socket when it swaps
			// readers; the socket is ours to read.
			_ = l.conn.SetReadDeadline(time.Time{})
			continue
		}
		l.finish(media.End{Remote: true, Reason: "media closed"})
		return
	}
}
