package webrtc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/pion/webrtc/v4"
)

// Config is how an Endpoint reaches browsers.
type Config struct {
	// PortMin and PortMax bound the UDP ports of host candidates (the
	// server's RTP port range; 0: any free port).
	PortMin, PortMax uint16
	// PublicIP, when set, replaces the interfaces' addresses in host
	// candidates: the server is behind a 1:1 NAT and browsers reach it
	// there (the SIP side's --sip-public-host).
	PublicIP net.IP
	// Address, when set, is the one local address candidates are
	// gathered on (the SIP listen address, when it names one); nil: every
	// interface's.
	Address net.IP
	// Loopback also offers candidates on loopback addresses: a browser on
	// the same machine (development, tests). Implied by a loopback
	// Address.
	Loopback bool
	// ConnectTimeout bounds the wait for the browser to connect once it
	// has the answer (default 30 s).
	ConnectTimeout time.Duration
	// MediaTimeout ends a connected call whose browser has sent no audio
	// for this long (default 20 s; browsers send audio, silent or not,
	// all the time).
	MediaTimeout time.Duration
	Logger       *slog.Logger
}

// Endpoint answers browsers' offers.
type Endpoint struct {
	cfg      Config
	settings webrtc.SettingEngine
}

// New checks cfg and returns an Endpoint.
func New(cfg Config) (*Endpoint, error) {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 30 * time.Second
	}
	if cfg.MediaTimeout <= 0 {
		cfg.MediaTimeout = 20 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var s webrtc.SettingEngine
	if cfg.PortMin != 0 || cfg.PortMax != 0 {
		if err := s.SetEphemeralUDPPortRange(cfg.PortMin, cfg.PortMax); err != nil {
			return nil, fmt.Errorf("webrtc port range %d-%d: %w", cfg.PortMin, cfg.PortMax, err)
		}
	}
	s.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6})
	if a := cfg.Address; a != nil {
		s.SetIPFilter(func(ip net.IP) bool { return ip.Equal(a) })
		cfg.Loopback = cfg.Loopback || a.IsLoopback()
	}
	s.SetIncludeLoopbackCandidate(cfg.Loopback)
	if cfg.PublicIP != nil {
		err := s.SetICEAddressRewriteRules(webrtc.ICEAddressRewriteRule{
			External: []string{cfg.PublicIP.String()}, AsCandidateType: webrtc.ICECandidateTypeHost, Mode: webrtc.ICEAddressRewriteReplace,
		})
		if err != nil {
			return nil, fmt.Errorf("webrtc public address %s: %w", cfg.PublicIP, err)
		}
	}
	// A browser that vanished without closing its connection is noticed
	// in seconds (consent checks every 2 s), not after the defaults' 30.
	s.SetICETimeouts(5*time.Second, 15*time.Second, 2*time.Second)
	return &Endpoint{cfg: cfg, settings: s}, nil
}

// Answer accepts offer: it returns the peer, not connected yet, and the
// SDP answer with every candidate in it (no trickle), for the browser.
// The peer is the caller's to end (Hangup) whatever happens next; it also
// ends itself when the browser has not connected within ConnectTimeout.
func (e *Endpoint) Answer(ctx context.Context, offer Offer) (*Peer, string, error) {
	m := &webrtc.MediaEngine{}
	c := offer.Codec
	mime := webrtc.MimeTypePCMU
	if c.Name == codecG722.Name {
		mime = webrtc.MimeTypeG722
	}
	// Only the chosen codec is registered, so the answer names it alone.
	codecs := []webrtc.RTPCodecParameters{{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: mime, ClockRate: 8000}, PayloadType: webrtc.PayloadType(c.PayloadType)}}
	if offer.EventPT != 0 {
		codecs = append(codecs, webrtc.RTPCodecParameters{
			RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: mimeTelephoneEvent, ClockRate: 8000, SDPFmtpLine: "0-16"},
			PayloadType:        webrtc.PayloadType(offer.EventPT),
		})
	}
	for _, p := range codecs {
		if err := m.RegisterCodec(p, webrtc.RTPCodecTypeAudio); err != nil {
			return nil, "", fmt.Errorf("webrtc codec %s: %w", p.MimeType, err)
		}
	}
	api := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(e.settings))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, "", fmt.Errorf("webrtc peer connection: %w", err)
	}
	p, answer, err := e.answer(ctx, pc, offer, mime)
	if err != nil {
		_ = pc.Close()
		return nil, "", err
	}
	return p, answer, nil
}

// mimeTelephoneEvent is RFC 4733's media type.
const mimeTelephoneEvent = "audio/telephone-event"

func (e *Endpoint) answer(ctx context.Context, pc *webrtc.PeerConnection, offer Offer, mime string) (*Peer, string, error) {
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	track, err := webrtc.NewTrackLocalStaticRTP(webrtc.RTPCodecCapability{MimeType: mime, ClockRate: 8000}, "audio", "parley")
	if err != nil {
		return nil, "", fmt.Errorf("webrtc track: %w", err)
	}
	if _, err := pc.AddTrack(track); err != nil {
		return nil, "", fmt.Errorf("webrtc track: %w", err)
	}
	p := newPeer(pc, track, offer, e.cfg)
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		p.abandon()
		return nil, "", fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(answer); err != nil {
		p.abandon()
		return nil, "", fmt.Errorf("webrtc answer: %w", err)
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		p.abandon()
		return nil, "", ctx.Err()
	}
	local := pc.LocalDescription()
	if local == nil {
		p.abandon()
		return nil, "", errors.New("webrtc answer: no local description")
	}
	p.start()
	return p, local.SDP, nil
}
