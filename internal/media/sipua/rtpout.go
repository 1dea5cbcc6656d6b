package sipua

import (
	"encoding/binary"
	"math/rand/v2"

	dmedia "github.com/emiago/diago/media"
)

// RFC 4733 event timing, as diago and most phones send it: the tone lasts
// eventToneFrames, then the end packet is repeated until eventFrames have
// passed.
const (
	eventToneFrames = 5
	eventFrames     = 7
	eventVolume     = 10
)

// rtpHeaderLen is the fixed RTP header (RFC 3550 §5.1) we send: version 2,
// no padding, extension or CSRCs.
const rtpHeaderLen = 12

// rtpSink takes one RTP packet, header and payload, as it goes on the
// wire: the leg's UDP socket (udpSink), or a test's log. It must not keep
// pkt, which is reused for the next packet.
type rtpSink interface {
	writeRTP(pkt []byte) error
}

// rtpOut is our side of a leg's RTP, driven by the leg's clock one frame at
// a time. Every frame advances the RTP timestamp by one frame of the RTP
// clock (160: 8000 Hz for G.711, and for G.722 too, RFC 3551) whether it
// is sent, skipped (the clock woke too late to send it) or covered by a
// telephone-event, so timestamps follow wall time; sequence numbers count
// only packets sent, so they stay continuous. Each packet is built in place
// in one buffer (header, then the payload encoded straight after it) and
// handed to the sink: no packet struct, marshalling or lock per packet.
// Only the clock goroutine uses it.
type rtpOut struct {
	sink    rtpSink
	audioPT uint8
	eventPT uint8
	encode  func(dst []byte, pcm []int16) []byte
	samples int    // PCM samples in a frame
	ticks   uint32 // RTP clock ticks in a frame

	pkt  []byte // the packet being sent: header, then payload
	ssrc uint32
	seq  uint16 // of the next packet
	next uint32 // timestamp of the next packet
	last uint32 // timestamp of the last packet sent
	// owed is timestamp not yet added to next: skipped frames, and those
	// an event covered (its packets keep its start time).
	owed uint32
	// gap: frames were skipped, so the next audio packet carries the
	// marker bit and the receiver re-syncs its playout.
	gap bool
	ev  rtpEvent

	// For RTCP sender reports (RFC 3550 §6.4.1).
	packets uint32 // packets sent
	octets  uint32 // payload octets sent
}

// rtpEvent is the telephone-event being sent.
type rtpEvent struct {
	on     bool
	code   byte
	frames int // frames since it started, sent or skipped
	sent   int // packets sent
	ended  bool
}

func newRTPOut(sink rtpSink, codec dmedia.Codec, encode func([]byte, []int16) []byte, samples int) *rtpOut {
	ticks := codec.SampleTimestamp()
	return &rtpOut{
		sink:    sink,
		audioPT: codec.PayloadType,
		eventPT: dmedia.CodecTelephoneEvent8000.PayloadType,
		encode:  encode,
		samples: samples,
		ticks:   ticks,
		// G.711 is a byte a sample, G.722 half that: samples bytes hold
		// either, and a 4-byte event.
		pkt:  make([]byte, rtpHeaderLen, rtpHeaderLen+samples),
		ssrc: rand.Uint32(),
		// Random starts, RFC 3550 §5.1.
		seq:  uint16(rand.Uint32()),
		next: rand.Uint32(),
		gap:  true, // the first packet starts the stream
	}
}

// sending reports whether a telephone-event is under way: its frames are
// the event's, not audio.
func (o *rtpOut) sending() bool { return o.ev.on }

// audio sends one frame of our audio.
func (o *rtpOut) audio(pcm []int16) error {
	o.settle()
	o.pkt = o.encode(o.pkt[:rtpHeaderLen], pcm)
	err := o.send(o.audioPT, o.gap, o.ticks)
	o.gap = false
	return err
}

// skip lets a frame pass unsent. An event under way goes on (its end is
// sent on the next frame that is); otherwise the timestamp moves on.
func (o *rtpOut) skip() {
	o.gap = true
	if !o.ev.on {
		o.owed += o.ticks
		return
	}
	o.ev.frames++
	if o.ev.frames >= eventFrames && o.ev.ended {
		o.endEvent()
	}
}

// digit starts a telephone-event on this frame and sends its first packet.
func (o *rtpOut) digit(d rune) error {
	o.settle() // the event starts at this frame's timestamp
	o.ev = rtpEvent{on: true, code: eventCode(d)}
	return o.event()
}

// event sends the event's packet for this frame: updates while the tone
// lasts, then end packets (at least one, however many frames were skipped).
func (o *rtpOut) event() error {
	e := &o.ev
	e.frames++
	end := e.frames > eventToneFrames-1
	dur := uint32(min(e.frames, eventToneFrames)) * o.ticks
	flags := byte(eventVolume)
	if end {
		flags |= 0x80
	}
	o.pkt = append(o.pkt[:rtpHeaderLen], e.code, flags, 0, 0)
	binary.BigEndian.PutUint16(o.pkt[rtpHeaderLen+2:], uint16(dur))
	// Event packets keep the event's start timestamp (increment 0).
	err := o.send(o.eventPT, e.sent == 0, 0)
	e.sent++
	e.ended = e.ended || end
	if e.frames >= eventFrames && e.ended {
		o.endEvent()
	}
	return err
}

// send fills in the header of the packet in o.pkt and writes it, then
// moves the timestamp on by advance.
func (o *rtpOut) send(pt uint8, marker bool, advance uint32) error {
	h := o.pkt[:rtpHeaderLen]
	h[0] = 2 << 6 // version 2
	h[1] = pt
	if marker {
		h[1] |= 0x80
	}
	binary.BigEndian.PutUint16(h[2:], o.seq)
	binary.BigEndian.PutUint32(h[4:], o.next)
	binary.BigEndian.PutUint32(h[8:], o.ssrc)
	o.seq++
	o.last = o.next
	o.next += advance
	o.packets++
	o.octets += uint32(len(o.pkt) - rtpHeaderLen)
	return o.sink.writeRTP(o.pkt)
}

// endEvent: audio resumes at the timestamp of wall time, past the event.
func (o *rtpOut) endEvent() {
	o.owed += uint32(o.ev.frames) * o.ticks
	o.ev.on = false
}

// settle adds the timestamp owed, before a packet.
func (o *rtpOut) settle() {
	o.next += o.owed
	o.owed = 0
}

// timestamp is the RTP timestamp of the frame after the last one sent or
// skipped, for sender reports.
func (o *rtpOut) timestamp() uint32 {
	return o.last + o.owed + o.ticks
}

// eventCode is the RFC 4733 event of a keypad digit (validDigit holds).
func eventCode(d rune) byte {
	switch {
	case d >= '0' && d <= '9':
		return byte(d - '0')
	case d == '*':
		return 10
	case d == '#':
		return 11
	}
	return byte(12 + d - 'A')
}
