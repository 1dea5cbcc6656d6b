package webrtc

import (
	"context"
	"sync"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

// A peer's own PCM is at its codec's rate (Peer.Rate); its buffers are
// counted in 20 ms frames at that rate.
const (
	// inFrames is how many browser frames wait for a slow reader before
	// the oldest is dropped (1 s).
	inFrames = 50
	// fillAfter is how many frames overdue the browser's audio is before
	// the reader gets a frame of silence in its place, so reads keep real
	// time while nothing arrives (before the browser connects, say).
	fillAfter = 3
	// jitterFrames is the playout buffer of the recording's browser side:
	// after running dry it waits until this much is queued, so audio up
	// to 40 ms late is recorded in order instead of as gaps.
	jitterFrames = 2
	// backlogFrames bounds the browser audio held for the recording once
	// the clock has taken its frame: more means the browser's clock runs
	// fast; the oldest is dropped.
	backlogFrames = 10
)

// inFrame is a frame of the browser's audio and when the newest packet in
// it arrived (zero for filled-in silence).
type inFrame struct {
	pcm []int16
	at  time.Time
}

// Peer is one browser's call: a media.Leg over a WebRTC peer connection.
// Its clock (send) sends our audio and records both sides every 20 ms; its
// reader (receive) decodes the browser's audio as it arrives. Both are its
// own goroutines, stopped by finish.
type Peer struct {
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticRTP
	codec Codec
	rate  int // of the peer's PCM
	frame int // samples per 20 ms at rate
	cfg   Config

	eventPT   uint8
	remote    chan *webrtc.TrackRemote // the browser's track, once it arrives
	connected chan struct{}            // closed once ICE and DTLS are up
	connOnce  sync.Once
	in        chan inFrame
	digits    chan rune
	stop      chan struct{} // asks the loops to stop
	stopOnce  sync.Once
	done      chan struct{}
	loops     sync.WaitGroup

	mu        sync.Mutex
	out       [][]int16 // queued audio of ours, in order
	drained   chan struct{}
	backlog   []int16 // browser audio for the recording, not yet taken by the clock
	dry       bool    // the backlog ran out: refill to jitterFrames first
	part      []int16 // browser audio short of a whole frame for the reader
	delivered int64   // frames handed to the reader, audio or filled in
	lastRTP   time.Time
	recorder  media.Recorder
	end       media.End
	ending    bool
	hungUp    bool
	deadline  *time.Timer // the connect deadline, once started
}

func newPeer(pc *webrtc.PeerConnection, track *webrtc.TrackLocalStaticRTP, offer Offer, cfg Config) *Peer {
	p := &Peer{
		pc: pc, track: track, codec: offer.Codec, rate: offer.Codec.Rate, frame: media.FrameSamples(offer.Codec.Rate), cfg: cfg,
		eventPT:   offer.EventPT,
		remote:    make(chan *webrtc.TrackRemote, 1),
		connected: make(chan struct{}),
		in:        make(chan inFrame, inFrames),
		digits:    make(chan rune, 32),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		drained:   closedChan(),
	}
	pc.OnTrack(func(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		if t.Kind() != webrtc.RTPCodecTypeAudio {
			return
		}
		select {
		case p.remote <- t:
		default: // a second audio track: the first is the call's
		}
	})
	// The data channel is how a hang-up travels: the browser closing its
	// peer connection closes the channel at once (SCTP abort), whereas
	// its audio merely stops; and our closing it tells the browser.
	hungUp := func() { p.finish(media.End{Remote: true, Reason: "the browser hung up"}) }
	pc.OnDataChannel(func(dc *webrtc.DataChannel) { dc.OnClose(hungUp) })
	pc.SCTP().OnClose(func(error) { hungUp() }) // before the channel opened, too
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		switch s {
		case webrtc.PeerConnectionStateConnected:
			p.mu.Lock()
			p.lastRTP = time.Now() // the media timeout counts from here
			p.mu.Unlock()
			p.connOnce.Do(func() { close(p.connected) })
		case webrtc.PeerConnectionStateFailed:
			p.finish(media.End{Reason: "the connection to the browser failed"})
		}
	})
	return p
}

func closedChan() chan struct{} { c := make(chan struct{}); close(c); return c }

// start runs the clock and the reader, and the connect deadline.
func (p *Peer) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ending {
		return
	}
	p.loops.Add(2)
	go p.receive()
	go p.send()
	p.deadline = time.AfterFunc(p.cfg.ConnectTimeout, func() {
		select {
		case <-p.connected:
		default:
			p.finish(media.End{Reason: "the browser did not connect within " + p.cfg.ConnectTimeout.String()})
		}
	})
}

// abandon ends a peer whose answer was never given.
func (p *Peer) abandon() { p.finish(media.End{Reason: "not answered"}) }

// Connected is closed once the browser has connected (ICE and DTLS):
// audio flows both ways from then on.
func (p *Peer) Connected() <-chan struct{} { return p.connected }

// Codec names the negotiated audio codec (G722 or PCMU).
func (p *Peer) Codec() string { return p.codec.Name }

// Rate implements media.Leg: 16000 for G.722, 8000 for PCMU.
func (p *Peer) Rate() int { return p.rate }

// SetRecorder implements media.Leg.
func (p *Peer) SetRecorder(r media.Recorder) {
	p.mu.Lock()
	p.recorder = r
	if r == nil {
		p.backlog, p.dry = nil, false
	}
	p.mu.Unlock()
}

// finish records how the call ended (first cause wins), stops the loops
// and closes the peer connection, which tells the browser (DTLS
// close_notify).
func (p *Peer) finish(e media.End) {
	p.mu.Lock()
	if p.ending {
		p.mu.Unlock()
		return
	}
	p.ending = true
	if p.hungUp {
		e.Remote = false
	}
	e.At = time.Now()
	p.end = e
	if p.deadline != nil {
		p.deadline.Stop()
	}
	p.mu.Unlock()
	p.stopOnce.Do(func() { close(p.stop) })
	go func() {
		if err := p.pc.Close(); err != nil { // unblocks the reader
			p.cfg.Logger.Debug("webrtc close", "err", err)
		}
		p.loops.Wait()
		close(p.done)
	}()
}

// Hangup implements media.Session: our side ends the call.
func (p *Peer) Hangup(ctx context.Context) error {
	p.mu.Lock()
	p.hungUp = true
	p.mu.Unlock()
	p.finish(media.End{Reason: "hung up"})
	select {
	case <-p.done:
	case <-ctx.Done():
	}
	return nil
}

// Done implements media.Session.
func (p *Peer) Done() <-chan struct{} { return p.done }

// End implements media.Session.
func (p *Peer) End() media.End {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.end
}

// Digits implements media.Session: keypad digits the browser sent as
// RFC 4733 telephone-events.
func (p *Peer) Digits() <-chan rune { return p.digits }

// SendDigits implements media.Session. A browser plays what it receives
// and has no use for telephone-events, so the digits are played in band,
// as DTMF tones after the audio already queued.
func (p *Peer) SendDigits(ctx context.Context, digits string) error {
	var pcm []int16
	for _, d := range digits {
		tone, ok := dtmfTone(d, p.rate)
		if !ok {
			return errInvalidDigit(d)
		}
		pcm = append(pcm, tone...)
	}
	p.enqueue(pcm)
	return p.drain(ctx)
}

// Audio implements media.Session.
func (p *Peer) Audio(rate int) media.Audio {
	return &peerAudio{p: p, rate: rate, up: audio.NewResampler(p.rate, rate), down: audio.NewResampler(rate, p.rate)}
}

func (p *Peer) enqueue(pcm []int16) {
	if len(pcm) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.out) == 0 {
		p.drained = make(chan struct{})
	}
	p.out = append(p.out, pcm)
}

func (p *Peer) drain(ctx context.Context) error {
	p.mu.Lock()
	ch := p.drained
	p.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-p.done:
		return media.ErrEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

// signalDrained closes drained once nothing is queued; mu held.
func (p *Peer) signalDrained() {
	if len(p.out) == 0 {
		select {
		case <-p.drained:
		default:
			close(p.drained)
		}
	}
}

var _ media.Leg = (*Peer)(nil)
