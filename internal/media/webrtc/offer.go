package webrtc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pion/sdp/v3"
)

// MaxOfferBytes bounds an offer's SDP: a browser's is a few kilobytes.
const MaxOfferBytes = 32 << 10

// ErrBadOffer is wrapped by every reason an offer is refused.
var ErrBadOffer = errors.New("bad WebRTC offer")

// Codec is the audio codec a web call speaks.
type Codec struct {
	// Name is G722 or PCMU.
	Name string
	// PayloadType is the offer's payload type for it.
	PayloadType uint8
	// Rate is the sample rate of its PCM: 16000 for G.722, 8000 for PCMU.
	// Both run an 8000 Hz RTP clock (RFC 3551 keeps G.722's at 8000).
	Rate int
}

var (
	codecG722 = Codec{Name: "G722", PayloadType: 9, Rate: 16000}
	codecPCMU = Codec{Name: "PCMU", PayloadType: 0, Rate: 8000}
)

// Offer is a browser's SDP offer, checked: it sends and receives audio
// over DTLS-SRTP with ICE, in a codec Parley speaks.
type Offer struct {
	SDP   string
	Codec Codec
	// EventPT is the payload type of telephone-event/8000 (RFC 4733), 0
	// when the offer has none.
	EventPT uint8
}

// ParseOffer checks an SDP offer and picks its codec: G.722 when offered,
// PCMU otherwise. The errors wrap ErrBadOffer and say what is wrong.
func ParseOffer(s string) (Offer, error) {
	if strings.TrimSpace(s) == "" {
		return Offer{}, bad("the offer is empty")
	}
	if len(s) > MaxOfferBytes {
		return Offer{}, bad("the offer is longer than %d bytes", MaxOfferBytes)
	}
	var d sdp.SessionDescription
	if err := d.UnmarshalString(s); err != nil {
		return Offer{}, bad("the offer is not SDP: %v", err)
	}
	var audio *sdp.MediaDescription
	for _, m := range d.MediaDescriptions {
		if m.MediaName.Media == "audio" && m.MediaName.Port.Value != 0 {
			audio = m
			break
		}
	}
	if audio == nil {
		return Offer{}, bad("the offer has no audio")
	}
	if !hasDataChannel(&d) {
		return Offer{}, bad("the offer has no data channel: open one (any label) before making the offer; hang-ups travel over it")
	}
	if !secured(audio.MediaName.Protos) {
		return Offer{}, bad("the offer's audio is not DTLS-SRTP (UDP/TLS/RTP/SAVPF)")
	}
	if !attribute(&d, audio, "ice-ufrag") || !attribute(&d, audio, "ice-pwd") {
		return Offer{}, bad("the offer has no ICE credentials")
	}
	if !attribute(&d, audio, "fingerprint") {
		return Offer{}, bad("the offer has no DTLS fingerprint")
	}
	for _, dir := range []string{"recvonly", "inactive"} {
		if _, ok := audio.Attribute(dir); ok {
			return Offer{}, bad("the offer does not send audio (%s): the browser's microphone is needed", dir)
		}
	}
	o := Offer{SDP: s}
	var g722, pcmu *Codec
	for _, f := range audio.MediaName.Formats {
		pt, err := strconv.ParseUint(f, 10, 8)
		if err != nil || pt > 127 {
			continue
		}
		name, clock := rtpmap(audio, f)
		if name == "" { // static payload types need no rtpmap (RFC 3551)
			switch pt {
			case 9:
				name, clock = "G722", "8000"
			case 0:
				name, clock = "PCMU", "8000"
			}
		}
		if clock != "8000" {
			continue
		}
		switch strings.ToUpper(name) {
		case "G722":
			if g722 == nil {
				g722 = &Codec{Name: codecG722.Name, PayloadType: uint8(pt), Rate: codecG722.Rate}
			}
		case "PCMU":
			if pcmu == nil {
				pcmu = &Codec{Name: codecPCMU.Name, PayloadType: uint8(pt), Rate: codecPCMU.Rate}
			}
		case "TELEPHONE-EVENT":
			if o.EventPT == 0 {
				o.EventPT = uint8(pt)
			}
		}
	}
	switch {
	case g722 != nil:
		o.Codec = *g722
	case pcmu != nil:
		o.Codec = *pcmu
	default:
		return Offer{}, bad("the offer has neither G722 nor PCMU audio")
	}
	return o, nil
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadOffer, fmt.Sprintf(format, args...))
}

// secured reports whether protos is RTP over DTLS (UDP/TLS/RTP/SAVPF, or
// its TCP form).
func secured(protos []string) bool {
	p := strings.ToUpper(strings.Join(protos, "/"))
	return strings.Contains(p, "TLS/RTP/SAVP")
}

// hasDataChannel reports whether d offers an SCTP data channel section.
func hasDataChannel(d *sdp.SessionDescription) bool {
	for _, m := range d.MediaDescriptions {
		if m.MediaName.Media == "application" && m.MediaName.Port.Value != 0 &&
			strings.Contains(strings.ToUpper(strings.Join(m.MediaName.Protos, "/")), "SCTP") {
			return true
		}
	}
	return false
}

// attribute reports whether key is set on m or, failing that, on the
// session.
func attribute(d *sdp.SessionDescription, m *sdp.MediaDescription, key string) bool {
	if v, ok := m.Attribute(key); ok && v != "" {
		return true
	}
	v, ok := d.Attribute(key)
	return ok && v != ""
}

// rtpmap returns the encoding name and clock rate m's rtpmap gives payload
// type pt ("" when it has none).
func rtpmap(m *sdp.MediaDescription, pt string) (name, clock string) {
	for _, a := range m.Attributes {
		if a.Key != "rtpmap" {
			continue
		}
		num, enc, ok := strings.Cut(a.Value, " ")
		if !ok || num != pt {
			continue
		}
		parts := strings.Split(enc, "/")
		if len(parts) < 2 {
			return "", ""
		}
		return parts[0], parts[1]
	}
	return "", ""
}
