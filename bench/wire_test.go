package bench

import (
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

// frame is one G.711 RTP packet's duration and timestamp span.
const (
	frameDur     = 20 * time.Millisecond
	frameSamples = 160
	// voicedRMS is the energy (RMS of the decoded samples, full scale
	// 32767) above which a frame counts as voiced: -40 dBFS, well above
	// G.711 silence (0) and well below speech and the TTS fake's tone.
	voicedRMS = 330
	// spurtFrames is how many voiced frames in a row make speech: sipp
	// plays its WAV header as ~6 ms of noise once per loop, which is not.
	spurtFrames = 3
)

// rtpPacket is what the analysis needs of one captured RTP packet.
type rtpPacket struct {
	at     time.Duration
	seq    uint16
	ts     uint32
	voiced bool
}

// parseRTP reads an RTP packet with a G.711 payload (PT 0 or 8); ok is
// false for anything else (RTCP, telephone-event).
func parseRTP(p udpPacket) (pkt rtpPacket, ssrc uint32, ok bool) {
	b := p.payload
	if len(b) < 12 || b[0]>>6 != 2 {
		return pkt, 0, false
	}
	pt := b[1] & 0x7f
	if pt != 0 && pt != 8 {
		return pkt, 0, false
	}
	hdr := 12 + 4*int(b[0]&0x0f)
	if b[0]&0x10 != 0 && len(b) >= hdr+4 { // header extension
		hdr += 4 + 4*int(binary.BigEndian.Uint16(b[hdr+2:]))
	}
	if len(b) < hdr {
		return pkt, 0, false
	}
	pkt = rtpPacket{at: p.at, seq: binary.BigEndian.Uint16(b[2:]), ts: binary.BigEndian.Uint32(b[4:])}
	pkt.voiced = rms(b[hdr:], pt == 8) > voicedRMS
	return pkt, binary.BigEndian.Uint32(b[8:]), true
}

// rms is the root mean square of G.711 samples (μ-law, or A-law), decoded
// as the server decodes them.
func rms(payload []byte, alaw bool) float64 {
	if len(payload) == 0 {
		return 0
	}
	var sum float64
	for _, v := range g711Linear(payload, alaw) {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(len(payload)))
}

func g711Linear(payload []byte, alaw bool) []int16 {
	if alaw {
		return audio.DecodeALaw(make([]int16, 0, len(payload)), payload)
	}
	return audio.DecodeULaw(make([]int16, 0, len(payload)), payload)
}

// streamStats is one RTP stream as its receiver saw it.
type streamStats struct {
	received int // packets, duplicates included
	lost     int // sequence numbers never seen between the first and the last
	late     int // packets more than one frame behind the stream's schedule
}

// measureStream counts lost and late packets of one stream (in capture
// order). The schedule is the RTP timestamp clock anchored per stream at
// its median offset (arrival − timestamp time): the stream's typical
// transit, where a receiver's jitter buffer would settle. A packet is
// late when it arrives more than one frame (20 ms) after its timestamp's
// place on that schedule: it would miss its turn at such a receiver.
// (Anchoring at the earliest packet instead would count every packet
// late after one that left early: SIPp's own pacing sends some up to
// 18 ms early.)
func measureStream(pkts []rtpPacket) streamStats {
	st := streamStats{received: len(pkts)}
	if len(pkts) == 0 {
		return st
	}
	seen := map[int64]bool{}
	var lo, hi int64
	var seqExt, tsExt int64
	offsets := make([]time.Duration, len(pkts))
	for i, p := range pkts {
		if i == 0 {
			seqExt, tsExt = int64(p.seq), int64(p.ts)
			lo, hi = seqExt, seqExt
		} else {
			seqExt += int64(int16(p.seq - pkts[i-1].seq))
			tsExt += int64(int32(p.ts - pkts[i-1].ts))
		}
		seen[seqExt] = true
		lo, hi = min(lo, seqExt), max(hi, seqExt)
		offsets[i] = p.at - time.Duration(tsExt)*time.Second/8000
	}
	st.lost = int(hi-lo+1) - len(seen)
	sorted := slices.Clone(offsets)
	slices.Sort(sorted)
	anchor := sorted[len(sorted)/2]
	for _, o := range offsets {
		if o-anchor > frameDur {
			st.late++
		}
	}
	return st
}

// wireTurn is one answer on the wire: the caller's last voiced packet and
// the agent's first voiced packet after it.
type wireTurn struct{ callerEnd, agentStart time.Duration }

// turnsOnWire finds the agent's answers in one call's two streams (each in
// capture order). An answer counts when
// the caller's speech (spurtFrames voiced packets in a row or more) has
// ended, the agent was silent at that moment, and the agent's first voiced
// packet after it comes before the caller speaks again: a turn the agent
// took, not one it was talked over in or was already speaking through.
func turnsOnWire(caller, agent []rtpPacket) []wireTurn {
	type spurt struct{ start, end time.Duration }
	var spurts []spurt
	run := 0
	for i, p := range caller {
		if !p.voiced {
			run = 0
			continue
		}
		run++
		if run == spurtFrames {
			spurts = append(spurts, spurt{start: caller[i-spurtFrames+1].at})
		}
		if run >= spurtFrames {
			spurts[len(spurts)-1].end = p.at
		}
	}
	var turns []wireTurn
	j := 0 // agent packets before it are at or before the current spurt's end
	for k, s := range spurts {
		for j < len(agent) && agent[j].at <= s.end {
			j++
		}
		if j > 0 && agent[j-1].voiced {
			continue // the agent was speaking as the caller stopped
		}
		a := j
		for a < len(agent) && !agent[a].voiced {
			a++
		}
		if a == len(agent) {
			break
		}
		if k+1 < len(spurts) && spurts[k+1].start <= agent[a].at {
			continue // the caller spoke again first: a pause, not a turn
		}
		turns = append(turns, wireTurn{s.end, agent[a].at})
	}
	return turns
}

// decodeG711 is an RTP packet's G.711 payload as linear samples (nil for
// anything parseRTP does not take).
func decodeG711(p udpPacket) []int16 {
	b := p.payload
	if _, _, ok := parseRTP(p); !ok {
		return nil
	}
	hdr := 12 + 4*int(b[0]&0x0f)
	if b[0]&0x10 != 0 && len(b) >= hdr+4 {
		hdr += 4 + 4*int(binary.BigEndian.Uint16(b[hdr+2:]))
	}
	return g711Linear(b[hdr:], b[1]&0x7f == 8)
}
