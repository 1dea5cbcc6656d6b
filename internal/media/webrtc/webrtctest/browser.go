// Package webrtctest is a browser for tests: a pion peer on 127.0.0.1
// that offers audio in the codecs a test names, sends what the test plays
// (silence otherwise, as a browser's microphone does) every 20 ms, and
// keeps what it hears decoded. Parley's web calls are tested through it
// without a browser.
package webrtctest

import (
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	pmedia "github.com/pion/webrtc/v4/pkg/media"

	"github.com/parley-voice/parley/internal/media/audio"
)

// Browser is one test browser's peer connection.
type Browser struct {
	t     testing.TB
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticSample
	codec string
	rate  int

	connected chan struct{}
	connOnce  sync.Once
	ended     chan struct{} // the data channel closed: Parley hung up (or we did)
	endOnce   sync.Once
	open      chan struct{} // the data channel is open
	stop      chan struct{}
	stopOnce  sync.Once
	loops     sync.WaitGroup

	mu      sync.Mutex
	queue   []int16 // what to play, at rate
	drained chan struct{}
	heard   []int16
}

// New is a browser offering codecs in order ("G722", "PCMU"); it speaks
// G.722 when it offers it (as Parley's answer picks), PCMU otherwise. It
// is closed when the test ends.
func New(t testing.TB, codecs ...string) *Browser {
	t.Helper()
	m := &webrtc.MediaEngine{}
	for _, c := range codecs {
		p := webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}, PayloadType: 0}
		if c == "G722" {
			p = webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeG722, ClockRate: 8000}, PayloadType: 9}
		}
		if err := m.RegisterCodec(p, webrtc.RTPCodecTypeAudio); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.RegisterCodec(webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: "audio/telephone-event", ClockRate: 8000, SDPFmtpLine: "0-15"}, PayloadType: 101,
	}, webrtc.RTPCodecTypeAudio); err != nil {
		t.Fatal(err)
	}
	var s webrtc.SettingEngine
	s.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	s.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
	s.SetIncludeLoopbackCandidate(true)
	api := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(s))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{t: t, pc: pc, codec: "PCMU", rate: 8000, connected: make(chan struct{}), ended: make(chan struct{}), open: make(chan struct{}),
		stop: make(chan struct{}), drained: closed()}
	if slices.Contains(codecs, "G722") {
		b.codec, b.rate = "G722", 16000
	}
	b.track, err = webrtc.NewTrackLocalStaticSample(m2cap(b.codec), "mic", "browser")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTrack(b.track); err != nil {
		t.Fatal(err)
	}
	// As a web page must: hang-ups travel over a data channel.
	dc, err := pc.CreateDataChannel("parley", nil)
	if err != nil {
		t.Fatal(err)
	}
	dc.OnOpen(func() { close(b.open) })
	dc.OnClose(func() { b.endOnce.Do(func() { close(b.ended) }) })
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateConnected {
			b.connOnce.Do(func() { close(b.connected) })
		}
	})
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		b.loops.Add(1)
		go b.listen(tr)
	})
	t.Cleanup(b.Close)
	return b
}

func m2cap(codec string) webrtc.RTPCodecCapability {
	if codec == "G722" {
		return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeG722, ClockRate: 8000}
	}
	return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}
}

func closed() chan struct{} { c := make(chan struct{}); close(c); return c }

// Offer is the browser's SDP offer, with its candidates (no trickle).
func (b *Browser) Offer() string {
	b.t.Helper()
	o, err := b.pc.CreateOffer(nil)
	if err != nil {
		b.t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(b.pc)
	if err := b.pc.SetLocalDescription(o); err != nil {
		b.t.Fatal(err)
	}
	<-gathered
	return b.pc.LocalDescription().SDP
}

// Accept takes Parley's answer and starts the microphone.
func (b *Browser) Accept(answer string) {
	b.t.Helper()
	if err := b.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		b.t.Fatal(err)
	}
	b.loops.Add(1)
	go b.speak()
}

// Rate is the sample rate of the browser's PCM: its codec's.
func (b *Browser) Rate() int { return b.rate }

// Connected is closed once the browser has connected to Parley.
func (b *Browser) Connected() <-chan struct{} { return b.connected }

// Open is closed once the call's data channel is open: from then on a
// hang-up on either side reaches the other at once.
func (b *Browser) Open() <-chan struct{} { return b.open }

// Ended is closed once the call's data channel has closed (Parley hung
// up, or the browser did).
func (b *Browser) Ended() <-chan struct{} { return b.ended }

// Play queues pcm (at Rate) after what is already queued.
func (b *Browser) Play(pcm []int16) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		b.drained = make(chan struct{})
	}
	b.queue = append(b.queue, pcm...)
}

// Played is closed once everything queued has been sent.
func (b *Browser) Played() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.drained
}

// Heard is everything Parley sent so far, decoded at Rate.
func (b *Browser) Heard() []int16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int16(nil), b.heard...)
}

// Close hangs up: the peer connection is closed (DTLS close_notify).
func (b *Browser) Close() {
	b.stopOnce.Do(func() {
		close(b.stop)
		_ = b.pc.Close()
		b.loops.Wait()
	})
}

// speak sends a frame every 20 ms: queued audio, else silence.
func (b *Browser) speak() {
	defer b.loops.Done()
	frame := b.rate / 50
	encode := audio.EncodeULaw
	if b.codec == "G722" {
		encode = audio.NewG722Encoder().Encode
	}
	pcm := make([]int16, frame)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		b.mu.Lock()
		n := copy(pcm, b.queue)
		b.queue = b.queue[n:]
		if len(b.queue) == 0 {
			select {
			case <-b.drained:
			default:
				close(b.drained)
			}
		}
		b.mu.Unlock()
		clear(pcm[n:])
		_ = b.track.WriteSample(pmedia.Sample{Data: encode(nil, pcm), Duration: 20 * time.Millisecond})
	}
}

// listen decodes what Parley sends.
func (b *Browser) listen(tr *webrtc.TrackRemote) {
	defer b.loops.Done()
	decode := audio.DecodeULaw
	if b.codec == "G722" {
		decode = audio.NewG722Decoder().Decode
	}
	pt := uint8(tr.PayloadType())
	var pcm []int16
	for {
		p, _, err := tr.ReadRTP()
		if err != nil {
			return
		}
		if p.PayloadType != pt {
			continue
		}
		pcm = decode(pcm[:0], p.Payload)
		b.mu.Lock()
		b.heard = append(b.heard, pcm...)
		b.mu.Unlock()
	}
}
