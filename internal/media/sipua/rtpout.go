package sipua

import (
	"encoding/binary"

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

// rtpOut is our side of a leg's RTP, driven by the leg's clock one frame at
// a time. Every frame advances the RTP timestamp by one frame of the RTP
// clock (160: 8000 Hz for G.711, and for G.722 too, RFC 3551) whether it is sent, skipped (the clock woke too late to send it) or
// covered by a telephone-event, so timestamps follow wall time; sequence
// numbers count only packets sent, so they stay continuous. Only the clock
// goroutine uses it.
type rtpOut struct {
	w       *dmedia.RTPPacketWriter
	audioPT uint8
	eventPT uint8
	encode  func(dst []byte, pcm []int16) []byte
	samples int    // PCM samples in a frame
	ticks   uint32 // RTP clock ticks in a frame

	enc []byte
	// owed is timestamp the writer has not been told of yet: skipped
	// frames, and those an event covered (its packets keep its start time).
	owed uint32
	// gap: frames were skipped, so the next audio packet carries the
	// marker bit and the receiver re-syncs its playout.
	gap bool
	ev  rtpEvent
}

// rtpEvent is the telephone-event being sent.
type rtpEvent struct {
	on     bool
	code   byte
	frames int // frames since it started, sent or skipped
	sent   int // packets sent
	ended  bool
	buf    [4]byte
}

func newRTPOut(w *dmedia.RTPPacketWriter, codec dmedia.Codec, encode func([]byte, []int16) []byte, samples int) *rtpOut {
	return &rtpOut{
		w:       w,
		audioPT: codec.PayloadType,
		eventPT: dmedia.CodecTelephoneEvent8000.PayloadType,
		encode:  encode,
		samples: samples,
		ticks:   codec.SampleTimestamp(),
		enc:     make([]byte, 0, samples),
		gap:     true, // the first packet starts the stream
	}
}

// sending reports whether a telephone-event is under way: its frames are
// the event's, not audio.
func (o *rtpOut) sending() bool { return o.ev.on }

// audio sends one frame of our audio.
func (o *rtpOut) audio(pcm []int16) error {
	o.settle()
	o.enc = o.encode(o.enc[:0], pcm)
	_, err := o.w.WriteSamples(o.enc, o.ticks, o.gap, o.audioPT)
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
	e.buf[0], e.buf[1] = e.code, eventVolume
	if end {
		e.buf[1] |= 0x80
	}
	binary.BigEndian.PutUint16(e.buf[2:], uint16(dur))
	// Event packets keep the event's start timestamp (increment 0).
	_, err := o.w.WriteSamples(e.buf[:], 0, e.sent == 0, o.eventPT)
	e.sent++
	e.ended = e.ended || end
	if e.frames >= eventFrames && e.ended {
		o.endEvent()
	}
	return err
}

// endEvent: audio resumes at the timestamp of wall time, past the event.
func (o *rtpOut) endEvent() {
	o.owed += uint32(o.ev.frames) * o.ticks
	o.ev.on = false
}

// settle tells the writer of the timestamp owed, before a packet.
func (o *rtpOut) settle() {
	if o.owed > 0 {
		o.w.DelayTimestamp(o.owed)
		o.owed = 0
	}
}

// timestamp is the RTP timestamp of the frame after the last one sent or
// skipped, for sender reports.
func (o *rtpOut) timestamp() uint32 {
	return o.w.PacketHeader.Timestamp + o.owed + o.ticks
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
