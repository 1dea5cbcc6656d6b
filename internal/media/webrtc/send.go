package webrtc

import (
	"time"

	"github.com/pion/rtp"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

const (
	// ticksPerFrame is how far the RTP timestamp moves each 20 ms: both
	// codecs run an 8000 Hz RTP clock.
	ticksPerFrame = 160
	// maxCatchUp is how many overdue frames the clock still sends after
	// waking late; beyond that it skips them (the browser re-syncs on the
	// marker bit) rather than send a burst.
	maxCatchUp = 5
)

// send is the peer's clock: every 20 ms it sends our next frame (silence
// when nothing is queued), hands the recorder the browser's frame and
// ours, keeps the reader in real time and watches for a silent browser.
func (p *Peer) send() {
	defer p.loops.Done()
	encode := audio.EncodeULaw
	if p.codec.Name == codecG722.Name {
		encode = audio.NewG722Encoder().Encode
	}
	ours := make([]int16, p.frame)
	heard := make([]int16, p.frame)
	payload := make([]byte, 0, p.frame)
	var seq uint16
	var ts uint32
	marker := true
	t0 := time.Now()
	var n int64 // frames done
	timer := time.NewTimer(media.FrameDuration)
	defer timer.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-timer.C:
		}
		now := time.Now()
		due := int64(now.Sub(t0) / media.FrameDuration)
		if skip := due - n - maxCatchUp; skip > 0 {
			n += skip
			ts += uint32(skip) * ticksPerFrame
			marker = true
		}
		for ; n < due; n++ {
			p.takeOurs(ours)
			payload = encode(payload[:0], ours)
			pkt := &rtp.Packet{Header: rtp.Header{Version: 2, Marker: marker, PayloadType: p.codec.PayloadType,
				SequenceNumber: seq, Timestamp: ts}, Payload: payload}
			if err := p.track.WriteRTP(pkt); err == nil {
				seq++
				marker = false
			}
			ts += ticksPerFrame
			p.record(heard, ours)
		}
		p.keepReaderInTime(due)
		if p.silent(now) {
			p.finish(media.End{Reason: "media timeout: the browser sent no audio for " + p.cfg.MediaTimeout.String()})
			return
		}
		timer.Reset(t0.Add(time.Duration(n+1) * media.FrameDuration).Sub(time.Now()))
	}
}

// takeOurs fills f with the next frame of ours, silence past what is
// queued.
func (p *Peer) takeOurs(f []int16) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for n < len(f) && len(p.out) > 0 {
		c := copy(f[n:], p.out[0])
		n += c
		p.out[0] = p.out[0][c:]
		if len(p.out[0]) == 0 {
			p.out = p.out[1:]
		}
	}
	clear(f[n:])
	p.signalDrained()
}

// record gives the recorder, if any, one frame of the browser's (from the
// backlog, silence when there is none) with ours.
func (p *Peer) record(heard, ours []int16) {
	p.mu.Lock()
	r := p.recorder
	if r == nil {
		p.mu.Unlock()
		return
	}
	k := 0
	if !p.dry || len(p.backlog) >= jitterFrames*p.frame {
		k = copy(heard, p.backlog)
		p.backlog = append(p.backlog[:0], p.backlog[k:]...)
		p.dry = k < p.frame
	}
	clear(heard[k:])
	if over := len(p.backlog) - backlogFrames*p.frame; over > 0 {
		p.backlog = append(p.backlog[:0], p.backlog[over:]...)
	}
	p.mu.Unlock()
	r(heard, ours)
}

// keepReaderInTime gives the reader silence for the frames the browser's
// audio is more than fillAfter frames overdue by the clock's due frames,
// and forgets frames that came early (a burst after a delay), so reads
// keep real time.
func (p *Peer) keepReaderInTime(due int64) {
	p.mu.Lock()
	fill := min(due-fillAfter-p.delivered, inFrames)
	if fill > 0 {
		p.delivered += fill
	}
	p.delivered = min(p.delivered, due)
	p.mu.Unlock()
	for range max(fill, 0) {
		p.deliver(inFrame{pcm: make([]int16, p.frame)})
	}
}

// silent reports whether a connected browser has sent no audio for the
// media timeout.
func (p *Peer) silent(now time.Time) bool {
	select {
	case <-p.connected:
	default:
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return now.Sub(p.lastRTP) > p.cfg.MediaTimeout
}
