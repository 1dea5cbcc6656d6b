package webrtc

import (
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

// receive is the peer's reader: once the browser's track arrives it
// decodes each audio packet as it comes and hands it on, to the Audio
// reader and the recording's backlog; telephone-events become digits.
func (p *Peer) receive() {
	defer p.loops.Done()
	var t *webrtc.TrackRemote
	select {
	case t = <-p.remote:
	case <-p.stop:
		return
	}
	decode := audio.DecodeULaw
	if p.codec.Name == codecG722.Name {
		decode = audio.NewG722Decoder().Decode
	}
	pcm := make([]int16, 0, p.frame*4)
	var lastSeq uint16
	haveSeq := false
	var events eventReader
	for {
		pkt, _, err := t.ReadRTP()
		if err != nil {
			// Our own close ends the read too; finish keeps the first cause.
			p.finish(media.End{Remote: true, Reason: "the browser closed the connection"})
			return
		}
		at := time.Now()
		switch {
		case p.eventPT != 0 && pkt.PayloadType == p.eventPT:
			if d, ok := events.digit(pkt.Timestamp, pkt.Payload); ok {
				select {
				case p.digits <- d:
				default: // nobody reads digits: drop rather than block
				}
			}
			continue
		case pkt.PayloadType != p.codec.PayloadType || len(pkt.Payload) == 0:
			continue
		}
		seq := pkt.SequenceNumber
		if haveSeq && int16(seq-lastSeq) <= 0 {
			continue // a duplicate, or later than what already played
		}
		lastSeq, haveSeq = seq, true
		pcm = decode(pcm[:0], pkt.Payload)
		p.heard(pcm, at)
	}
}

// heard hands decoded browser audio, which arrived at at, on in whole
// frames, and keeps it for the recording while there is one. Only the
// reader calls it.
func (p *Peer) heard(pcm []int16, at time.Time) {
	var ready [][]int16
	p.mu.Lock()
	p.lastRTP = at
	if p.recorder != nil {
		p.backlog = append(p.backlog, pcm...)
	}
	for len(pcm) > 0 {
		if p.part == nil {
			p.part = make([]int16, 0, p.frame)
		}
		c := min(p.frame-len(p.part), len(pcm))
		p.part = append(p.part, pcm[:c]...)
		pcm = pcm[c:]
		if len(p.part) == p.frame {
			ready = append(ready, p.part)
			p.part = nil
			p.delivered++
		}
	}
	p.mu.Unlock()
	for _, f := range ready {
		p.deliver(inFrame{f, at})
	}
}

// deliver hands a browser frame to Audio readers, dropping the oldest
// frame when they fall a second behind.
func (p *Peer) deliver(f inFrame) {
	for {
		select {
		case p.in <- f:
			return
		default:
		}
		select {
		case <-p.in:
		default:
		}
	}
}
