package app

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/parley-voice/parley/internal/media/webrtc"
)

// newWebEndpoint is the WebRTC side of web calls, placed like the SIP
// side's media: host candidates on the RTP port range, on the SIP listen
// address when it names one, carrying the SIP public host's address
// instead when it is set (a 1:1 NAT).
func newWebEndpoint(c Config, lo, hi int, log *slog.Logger) (*webrtc.Endpoint, error) {
	cfg := webrtc.Config{PortMin: uint16(lo), PortMax: uint16(hi), Logger: log}
	if host, _, err := net.SplitHostPort(c.SIPAddr); err == nil {
		if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
			cfg.Address = ip
		}
	}
	if c.SIPPublicHost != "" {
		ip := net.ParseIP(c.SIPPublicHost)
		if ip == nil {
			ips, err := net.LookupIP(c.SIPPublicHost)
			if err != nil || len(ips) == 0 {
				return nil, fmt.Errorf("--sip-public-host %s: no address for browsers' WebRTC candidates: %v", c.SIPPublicHost, err)
			}
			ip = ips[0]
		}
		cfg.PublicIP = ip
	}
	return webrtc.New(cfg)
}
