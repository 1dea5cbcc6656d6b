package siptest

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

// DTMF event timing in the generated pcap, RFC 4733 style: one event per
// digit, dtmfPackets updates 20 ms apart (duration growing by 160 samples),
// then the end packet three times, then dtmfGap of nothing.
const (
	dtmfPackets   = 5
	dtmfEndRepeat = 3
	dtmfPT        = 101
	dtmfVolume    = 10
	packetUsec    = 20000
	dtmfGapUsec   = 100000
	dtmfLeadUsec  = 200000
	dtmfSSRC      = 0x5150a11e
)

// dtmfEvent maps a keypad digit to its RFC 4733 event code.
func dtmfEvent(d rune) (byte, bool) {
	switch {
	case d >= '0' && d <= '9':
		return byte(d - '0'), true
	case d == '*':
		return 10, true
	case d == '#':
		return 11, true
	case d >= 'A' && d <= 'D':
		return byte(12 + d - 'A'), true
	case d >= 'a' && d <= 'd':
		return byte(12 + d - 'a'), true
	}
	return 0, false
}

// dtmfPcap builds a pcap (Ethernet, IPv4, UDP) of RTP telephone-event
// packets (payload type 101) for digits, for sipp's play_pcap_audio, which
// rewrites the addresses and ports and keeps the RTP as is: per digit a start
// packet with the marker bit, updates every 20 ms for 100 ms, three end
// packets, 100 ms of silence; 260 ms a digit after a 200 ms lead.
func dtmfPcap(digits string) ([]byte, error) {
	if digits == "" {
		return nil, fmt.Errorf("no DTMF digits (Keys[\"digits\"])")
	}
	le, be := binary.LittleEndian, binary.BigEndian
	var out []byte
	out = le.AppendUint32(out, 0xa1b2c3d4) // pcap magic, microseconds
	out = le.AppendUint16(out, 2)
	out = le.AppendUint16(out, 4)
	out = le.AppendUint32(out, 0)     // thiszone
	out = le.AppendUint32(out, 0)     // sigfigs
	out = le.AppendUint32(out, 65535) // snaplen
	out = le.AppendUint32(out, 1)     // LINKTYPE_ETHERNET

	usec := int64(dtmfLeadUsec)
	seq := uint16(4711)
	ts := uint32(8000)
	packet := func(event byte, end bool, duration uint16, marker bool) {
		rtp := make([]byte, 12, 16)
		rtp[0] = 0x80
		rtp[1] = dtmfPT
		if marker {
			rtp[1] |= 0x80
		}
		be.PutUint16(rtp[2:], seq)
		be.PutUint32(rtp[4:], ts)
		be.PutUint32(rtp[8:], dtmfSSRC)
		seq++
		flags := byte(dtmfVolume)
		if end {
			flags |= 0x80
		}
		rtp = append(rtp, event, flags, byte(duration>>8), byte(duration))

		udp := make([]byte, 8, 8+len(rtp))
		be.PutUint16(udp[0:], 40000)
		be.PutUint16(udp[2:], 40002)
		be.PutUint16(udp[4:], uint16(8+len(rtp)))
		udp = append(udp, rtp...)

		ip := make([]byte, 20, 20+len(udp))
		ip[0] = 0x45
		be.PutUint16(ip[2:], uint16(20+len(udp)))
		ip[8] = 64 // TTL
		ip[9] = 17 // UDP
		copy(ip[12:16], []byte{127, 0, 0, 1})
		copy(ip[16:20], []byte{127, 0, 0, 1})
		var sum uint32
		for i := 0; i < 20; i += 2 {
			sum += uint32(be.Uint16(ip[i:]))
		}
		for sum > 0xffff {
			sum = sum&0xffff + sum>>16
		}
		be.PutUint16(ip[10:], ^uint16(sum))
		ip = append(ip, udp...)

		frame := make([]byte, 14, 14+len(ip))
		be.PutUint16(frame[12:], 0x0800) // IPv4
		frame = append(frame, ip...)

		out = le.AppendUint32(out, uint32(usec/1e6))
		out = le.AppendUint32(out, uint32(usec%1e6))
		out = le.AppendUint32(out, uint32(len(frame)))
		out = le.AppendUint32(out, uint32(len(frame)))
		out = append(out, frame...)
	}

	for _, d := range digits {
		event, ok := dtmfEvent(d)
		if !ok {
			return nil, fmt.Errorf("DTMF digit %q is not one of 0-9 * # A-D", d)
		}
		for i := 1; i <= dtmfPackets; i++ {
			packet(event, false, uint16(160*i), i == 1)
			usec += packetUsec
		}
		for range dtmfEndRepeat {
			packet(event, true, 160*dtmfPackets, false)
			usec += packetUsec
		}
		usec += dtmfGapUsec
		// The next event starts where this one's time went, in 8 kHz samples.
		ts += uint32((dtmfPackets+dtmfEndRepeat)*packetUsec+dtmfGapUsec) * 8 / 1000
	}
	return out, nil
}

// DTMFDuration is how long uac_dtmf takes to play digits once it starts the
// pcap: a hold (Keys["hold"]) at least this long lets every digit out.
func DTMFDuration(digits string) time.Duration {
	n := len([]rune(digits))
	return time.Duration(dtmfLeadUsec+n*((dtmfPackets+dtmfEndRepeat)*packetUsec+dtmfGapUsec)) * time.Microsecond
}

// ULawWAV is pcm (8 kHz mono) as a G.711 μ-law WAV file (WAVE format 7),
// the form sipp's rtp_stream plays with payload type 0: what uac_talk's
// speech.wav must be.
func ULawWAV(pcm []int16) []byte {
	const rate = 8000
	data := audio.EncodeULaw(nil, pcm)
	le := binary.LittleEndian
	h := make([]byte, 0, 46+len(data))
	h = append(h, "RIFF"...)
	h = le.AppendUint32(h, uint32(4+(8+18)+(8+len(data))))
	h = append(h, "WAVE"...)
	h = append(h, "fmt "...)
	h = le.AppendUint32(h, 18)
	h = le.AppendUint16(h, 7) // WAVE_FORMAT_MULAW
	h = le.AppendUint16(h, 1) // mono
	h = le.AppendUint32(h, rate)
	h = le.AppendUint32(h, rate) // bytes per second
	h = le.AppendUint16(h, 1)    // block align
	h = le.AppendUint16(h, 8)    // bits per sample
	h = le.AppendUint16(h, 0)    // cbSize
	h = append(h, "data"...)
	h = le.AppendUint32(h, uint32(len(data)))
	return append(h, data...)
}
