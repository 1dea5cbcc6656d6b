package webrtc

import (
	"errors"
	"strings"
	"testing"
)

// chromeOffer is the shape of a browser's offer: audio with Opus first,
// G.722 and PCMU among the rest, and a data channel.
const chromeOffer = `v=0
o=- 4611731400430051336 2 IN IP4 127.0.0.1
s=-
t=0 0
a=group:BUNDLE 0 1
a=msid-semantic: WMS
m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126
c=IN IP4 0.0.0.0
a=rtcp:9 IN IP4 0.0.0.0
a=candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host
a=ice-ufrag:abcd
a=ice-pwd:abcdefghijklmnopqrstuvwx
a=fingerprint:sha-256 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF
a=setup:actpass
a=mid:0
a=sendrecv
a=rtcp-mux
a=rtpmap:111 opus/48000/2
a=rtpmap:63 red/48000/2
a=rtpmap:9 G722/8000
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=rtpmap:13 CN/8000
a=rtpmap:110 telephone-event/48000
a=rtpmap:126 telephone-event/8000
m=application 9 UDP/DTLS/SCTP webrtc-datachannel
c=IN IP4 0.0.0.0
a=ice-ufrag:abcd
a=ice-pwd:abcdefghijklmnopqrstuvwx
a=fingerprint:sha-256 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF
a=setup:actpass
a=mid:1
a=sctp-port:5000
`

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func TestParseOfferPicksG722ThenPCMU(t *testing.T) {
	o, err := ParseOffer(crlf(chromeOffer))
	if err != nil {
		t.Fatal(err)
	}
	if o.Codec != (Codec{Name: "G722", PayloadType: 9, Rate: 16000}) || o.EventPT != 126 {
		t.Errorf("offer %+v, want G722 on 9 and telephone-event/8000 on 126", o)
	}
	noG722 := strings.Replace(strings.Replace(chromeOffer, " 9 0 8", " 0 8", 1), "a=rtpmap:9 G722/8000\n", "", 1)
	o, err = ParseOffer(crlf(noG722))
	if err != nil {
		t.Fatal(err)
	}
	if o.Codec != (Codec{Name: "PCMU", PayloadType: 0, Rate: 8000}) {
		t.Errorf("without G.722: %+v, want PCMU on 0", o.Codec)
	}
}

func TestParseOfferRefuses(t *testing.T) {
	for _, tc := range []struct{ name, offer, want string }{
		{"empty", "  ", "empty"},
		{"not SDP", "hello", "not SDP"},
		{"too long", chromeOffer + strings.Repeat("a=x:y\n", MaxOfferBytes/6), "longer than"},
		{"no audio", strings.Replace(chromeOffer, "m=audio 9", "m=video 9", 1), "no audio"},
		{"plain RTP", strings.Replace(chromeOffer, "UDP/TLS/RTP/SAVPF 111", "RTP/AVP 111", 1), "DTLS-SRTP"},
		{"no ICE", strings.ReplaceAll(chromeOffer, "a=ice-ufrag:abcd\n", ""), "ICE"},
		{"no fingerprint", strings.ReplaceAll(chromeOffer, "a=fingerprint:sha-256", "a=x-fingerprint:sha-256"), "fingerprint"},
		{"no microphone", strings.Replace(chromeOffer, "a=sendrecv", "a=recvonly", 1), "microphone"},
		{"opus only", strings.Replace(chromeOffer, " 63 9 0 8 13 110 126", " 63", 1), "neither G722 nor PCMU"},
		{"no data channel", chromeOffer[:strings.Index(chromeOffer, "m=application")], "data channel"},
	} {
		_, err := ParseOffer(crlf(tc.offer))
		if !errors.Is(err, ErrBadOffer) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a bad offer saying %q", tc.name, err, tc.want)
		}
	}
}

func TestEventDigits(t *testing.T) {
	var r eventReader
	var got []rune
	for _, p := range []struct {
		ts      uint32
		payload []byte
	}{
		{100, []byte{5, 0x0a, 0, 160}},    // 5, going on
		{100, []byte{5, 0x8a, 1, 64}},     // 5 ends
		{100, []byte{5, 0x8a, 1, 64}},     // its end again
		{900, []byte{11, 0x8a, 1, 64}},    // # ends
		{1700, []byte{16, 0x8a, 1, 64}},   // a flash: not a digit
		{2500, []byte{1, 0x80}},           // too short
		{3300, []byte{10, 0x80, 0, 0, 9}}, // * (extra bytes ignored)
	} {
		if d, ok := r.digit(p.ts, p.payload); ok {
			got = append(got, d)
		}
	}
	if string(got) != "5#*" {
		t.Errorf("digits %q, want 5#*", string(got))
	}
}

func FuzzParseOffer(f *testing.F) {
	f.Add(crlf(chromeOffer))
	f.Add(chromeOffer)
	f.Add("v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 9\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOffer(s)
		if err != nil {
			if !errors.Is(err, ErrBadOffer) {
				t.Fatalf("error %v does not wrap ErrBadOffer", err)
			}
			return
		}
		if o.Codec.Name != "G722" && o.Codec.Name != "PCMU" {
			t.Fatalf("accepted codec %+v", o.Codec)
		}
		if o.Codec.PayloadType > 127 || o.EventPT > 127 {
			t.Fatalf("payload types %d %d", o.Codec.PayloadType, o.EventPT)
		}
	})
}

func FuzzEventDigits(f *testing.F) {
	f.Add(uint32(1), []byte{5, 0x8a, 1, 64})
	f.Add(uint32(2), []byte{1})
	f.Fuzz(func(t *testing.T, ts uint32, b []byte) {
		var r eventReader
		d, ok := r.digit(ts, b)
		if ok && !strings.ContainsRune(eventDigits, d) {
			t.Fatalf("digit %q", d)
		}
		if _, again := r.digit(ts, b); again {
			t.Fatal("one event's end reported twice")
		}
	})
}
