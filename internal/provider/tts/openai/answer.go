package openai

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/provider/tts"
)

// Response formats Synthesize asks for.
const (
	FormatWAV = "wav" // the answer's header says its rate and encoding
	FormatPCM = "pcm" // raw 16-bit little-endian mono, at a rate the answer does not say
)

// source is the audio of an answer: where its samples are read from, at
// which rate, and how its bytes become mono samples.
type source struct {
	r    io.Reader
	rate int
	dec  sampleDecoder
}

// compressed are answers Parley cannot decode: a server that ignored
// response_format.
var compressed = map[string]bool{
	"audio/mpeg": true, "audio/mp3": true, "audio/ogg": true, "audio/opus": true, "audio/aac": true,
	"audio/flac": true, "audio/x-flac": true, "audio/webm": true, "audio/mp4": true,
}

var wavTypes = map[string]bool{"audio/wav": true, "audio/x-wav": true, "audio/wave": true, "audio/vnd.wave": true}

// openAnswer finds out what a 200 answer's body holds, asked for in
// format: a WAV (by its RIFF header, whatever was asked or the
// Content-Type says) is read at its header's rate and encoding; otherwise
// raw 16-bit PCM at the Content-Type's rate parameter, or at pcmRate when
// format is pcm. What cannot be told (a WAV asked for, raw samples of no
// stated rate come back) and what cannot be read (mp3, ogg, ...) are
// errors of kind tts.ErrUnavailable that say so; an error of the network
// is returned as it is.
func openAnswer(resp *http.Response, format string, pcmRate int) (source, error) {
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if compressed[mt] {
		return source{}, fmt.Errorf("%w: the answer is %s, which Parley cannot decode: the server ignored response_format %q", tts.ErrUnavailable, mt, format)
	}
	br := bufio.NewReaderSize(resp.Body, readSize)
	head, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return source{}, err
	}
	if string(head) == "RIFF" {
		f, err := readWAVHeader(br)
		if err != nil {
			_, bad := errors.AsType[wavError](err)
			if !bad && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
				return source{}, err // the network's
			}
			return source{}, fmt.Errorf("%w: the answer's WAV header: %w", tts.ErrUnavailable, err)
		}
		r := io.Reader(br)
		if f.data >= 0 {
			r = io.LimitReader(br, f.data)
		}
		return source{r: r, rate: f.rate, dec: sampleDecoder{channels: f.channels, bytes: f.bytes, float: f.float}}, nil
	}
	raw := source{r: br, dec: sampleDecoder{channels: 1, bytes: 2}}
	if len(head) == 0 {
		raw.rate = pcmRate // no audio at all, which the caller reports
		return raw, nil
	}
	if wavTypes[mt] {
		return source{}, fmt.Errorf("%w: the answer is %s but does not start with a WAV header", tts.ErrUnavailable, mt)
	}
	if r, err := strconv.Atoi(params["rate"]); err == nil {
		if r < 1 || r > maxRate {
			return source{}, fmt.Errorf("%w: the answer's sample rate %d Hz (Content-Type %s) is not usable", tts.ErrUnavailable, r, mt)
		}
		raw.rate = r
		return raw, nil
	}
	if format != FormatPCM {
		return source{}, fmt.Errorf("%w: asked for a WAV, the server answered %s without a header, so the rate of its samples is unknown: "+
			"use the pcm format with the server's sample rate (--tts-format pcm --tts-sample-rate)", tts.ErrUnavailable, cmpOr(mt, "raw bytes"))
	}
	raw.rate = pcmRate
	return raw, nil
}

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// sampleDecoder turns an answer's bytes, cut anywhere, into mono 16-bit
// samples: a frame split between reads is joined, channels are averaged,
// and float samples are scaled to 16 bits and clipped.
type sampleDecoder struct {
	channels int
	bytes    int  // per sample of one channel: 2 or 4
	float    bool // 32-bit IEEE float (else 16-bit signed integers)
	rest     []byte
}

// decode appends the samples of the frames b completes to dst.
func (d *sampleDecoder) decode(dst []int16, b []byte) []int16 {
	frame := d.channels * d.bytes
	if len(d.rest) > 0 {
		n := min(frame-len(d.rest), len(b))
		d.rest = append(d.rest, b[:n]...)
		b = b[n:]
		if len(d.rest) < frame {
			return dst
		}
		dst = append(dst, d.mix(d.rest))
		d.rest = d.rest[:0]
	}
	for len(b) >= frame {
		dst = append(dst, d.mix(b[:frame]))
		b = b[frame:]
	}
	d.rest = append(d.rest, b...)
	return dst
}

// mix is one frame as one sample.
func (d *sampleDecoder) mix(f []byte) int16 {
	le := binary.LittleEndian
	if d.channels == 1 && !d.float {
		return int16(le.Uint16(f))
	}
	var sum float64
	for c := range d.channels {
		s := f[c*d.bytes:]
		if d.float {
			v := float64(math.Float32frombits(le.Uint32(s)))
			if math.IsNaN(v) {
				v = 0
			}
			sum += v * 32767
		} else {
			sum += float64(int16(le.Uint16(s)))
		}
	}
	return int16(max(-32768, min(32767, math.Round(sum/float64(d.channels)))))
}
