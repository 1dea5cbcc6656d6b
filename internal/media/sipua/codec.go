package sipua

import (
	"errors"
	"fmt"
	"strings"
	"time"

	dmedia "github.com/emiago/diago/media"

	"github.com/parley-voice/parley/internal/media/audio"
)

// DefaultCodecs are the audio codecs a UA offers and accepts unless
// configured otherwise, in preference order: wideband G.722 first, then
// G.711 μ-law and A-law.
var DefaultCodecs = []string{"G722", "PCMU", "PCMA"}

// codecG722 is G.722 as SDP names it (RFC 3551): static payload type 9
// and an RTP clock of 8000 Hz, though it carries 16 kHz audio (a mistake
// in RFC 1890 kept for compatibility), so timestamps advance 160 a frame
// while a frame holds 320 samples.
var codecG722 = dmedia.Codec{PayloadType: 9, SampleRate: 8000, SampleDur: 20 * time.Millisecond, NumChannels: 1, Name: "G722"}

// pcmRate is the rate of a codec's PCM: 16000 for G.722, its RTP clock
// otherwise.
func pcmRate(c dmedia.Codec) int {
	if c.PayloadType == codecG722.PayloadType {
		return 16000
	}
	return int(c.SampleRate)
}

// CheckCodecs reports whether names is a usable Config.Codecs: at least
// one, each G722, PCMU or PCMA (any case).
func CheckCodecs(names []string) error {
	if len(names) == 0 {
		return errors.New("name at least one codec (G722, PCMU, PCMA)")
	}
	_, err := mediaCodecs(names)
	return err
}

// mediaCodecs maps codec names to diago's, telephone-event last.
func mediaCodecs(names []string) ([]dmedia.Codec, error) {
	if len(names) == 0 {
		names = DefaultCodecs
	}
	var out []dmedia.Codec
	seen := map[uint8]bool{}
	for _, n := range names {
		var c dmedia.Codec
		switch strings.ToUpper(strings.TrimSpace(n)) {
		case "G722":
			c = codecG722
		case "PCMU":
			c = dmedia.CodecAudioUlaw
		case "PCMA":
			c = dmedia.CodecAudioAlaw
		default:
			return nil, fmt.Errorf("codec %q is not supported (G722, PCMU, PCMA)", n)
		}
		if !seen[c.PayloadType] {
			seen[c.PayloadType] = true
			out = append(out, c)
		}
	}
	return append(out, dmedia.CodecTelephoneEvent8000), nil
}

// coder turns a leg's PCM into RTP payloads and back. G.711 keeps no
// state; G.722's encoder and decoder do, so each leg has its own, the
// encoder used only by the leg's pacer and the decoder only by its reader.
type coder struct {
	encode func(dst []byte, pcm []int16) []byte
	decode func(dst []int16, payload []byte) []int16
}

func newCoder(c dmedia.Codec) coder {
	switch c.PayloadType {
	case codecG722.PayloadType:
		return coder{encode: audio.NewG722Encoder().Encode, decode: audio.NewG722Decoder().Decode}
	case dmedia.CodecAudioAlaw.PayloadType:
		return coder{encode: audio.EncodeALaw, decode: audio.DecodeALaw}
	default:
		return coder{encode: audio.EncodeULaw, decode: audio.DecodeULaw}
	}
}

// Answering, diago keeps the offer's order unless told to prefer ours:
// G.722 must win over G.711 when a phone lists PCMU first. The setting is
// diago's package variable, set once for the process.
func init() { dmedia.SDPCodecPreferLocalOrder = 1 }
