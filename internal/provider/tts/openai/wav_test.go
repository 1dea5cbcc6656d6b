package openai

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// wavHead is a WAV header: fmt with code, channels, rate and bits, the
// extra chunks, then the data chunk's header claiming size.
func wavHead(code, channels, rate, bits int, size uint32, extra ...[]byte) []byte {
	le := binary.LittleEndian
	var b []byte
	b = append(b, "RIFF\xff\xff\xff\xffWAVE"...)
	fmtc := le.AppendUint16(nil, uint16(code))
	fmtc = le.AppendUint16(fmtc, uint16(channels))
	fmtc = le.AppendUint32(fmtc, uint32(rate))
	fmtc = le.AppendUint32(fmtc, uint32(rate*channels*bits/8))
	fmtc = le.AppendUint16(fmtc, uint16(channels*bits/8))
	fmtc = le.AppendUint16(fmtc, uint16(bits))
	b = append(b, "fmt "...)
	b = le.AppendUint32(b, uint32(len(fmtc)))
	b = append(b, fmtc...)
	for _, e := range extra {
		b = append(b, e...)
	}
	b = append(b, "data"...)
	return le.AppendUint32(b, size)
}

// chunk is a RIFF chunk of id holding body (padded to an even size).
func chunk(id string, body []byte) []byte {
	b := append([]byte(id), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	b = append(b, body...)
	if len(body)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// extensible is a WAVE_FORMAT_EXTENSIBLE fmt chunk of 40 bytes whose
// subformat is sub.
func extensible(channels, rate, bits, sub int) []byte {
	le := binary.LittleEndian
	b := le.AppendUint16(nil, wavExtensible)
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*channels*bits/8))
	b = le.AppendUint16(b, uint16(channels*bits/8))
	b = le.AppendUint16(b, uint16(bits))
	b = le.AppendUint16(b, 22)
	b = le.AppendUint16(b, uint16(bits))
	b = le.AppendUint32(b, 4)
	b = le.AppendUint16(b, uint16(sub))
	b = append(b, "\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"...)
	return append(append([]byte("RIFF\x00\x00\x00\x00WAVE"), chunk("fmt ", b)...), "data\x10\x00\x00\x00"...)
}

func TestReadWAVHeader(t *testing.T) {
	for name, tc := range map[string]struct {
		head []byte
		want wavFormat
	}{
		"piper":         {wavHead(1, 1, 22050, 16, 0xFFFFFFFF), wavFormat{rate: 22050, channels: 1, bytes: 2, data: -1}},
		"placeholder 0": {wavHead(1, 1, 24000, 16, 0), wavFormat{rate: 24000, channels: 1, bytes: 2, data: -1}},
		"whole file":    {wavHead(1, 2, 16000, 16, 6400), wavFormat{rate: 16000, channels: 2, bytes: 2, data: 6400}},
		"ffmpeg tags": {wavHead(1, 1, 8000, 16, 0xFFFFFFFF, chunk("LIST", []byte("INFOISFT\x0e\x00\x00\x00Lavf61.7.100\x00\x00")), chunk("odd ", []byte("abc"))),
			wavFormat{rate: 8000, channels: 1, bytes: 2, data: -1}},
		"float":      {wavHead(3, 1, 44100, 32, 0xFFFFFFFF), wavFormat{rate: 44100, channels: 1, bytes: 4, float: true, data: -1}},
		"extensible": {extensible(1, 48000, 16, wavPCM), wavFormat{rate: 48000, channels: 1, bytes: 2, data: 16}},
	} {
		rest := []byte("samples")
		r := bytes.NewReader(append(tc.head, rest...))
		got, err := readWAVHeader(r)
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, tc.want)
			continue
		}
		if left, _ := io.ReadAll(r); string(left) != "samples" {
			t.Errorf("%s: left %q after the header, want the samples", name, left)
		}
	}
}

func TestReadWAVHeaderRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		head []byte
		want string
	}{
		"8-bit":       {wavHead(1, 1, 8000, 8, 100), "8-bit samples of format 1"},
		"24-bit":      {wavHead(1, 1, 48000, 24, 100), "24-bit samples"},
		"mu-law":      {wavHead(7, 1, 8000, 8, 100), "format 7"},
		"no channels": {wavHead(1, 0, 8000, 16, 100), "0 channels"},
		"rate 0":      {wavHead(1, 1, 0, 16, 100), "sample rate 0 Hz"},
		"huge rate":   {wavHead(1, 1, 1<<30, 16, 100), "sample rate 1073741824 Hz"},
		"ext float64": {extensible(1, 8000, 64, wavFloat), "64-bit samples of format 3"},
		"not riff":    {[]byte("RIFX\x00\x00\x00\x00WAVEfmt "), "not a RIFF WAVE header"},
		"data first":  {[]byte("RIFF\x00\x00\x00\x00WAVEdata\x00\x00\x00\x00"), "data chunk comes before its fmt"},
		"short fmt":   {append([]byte("RIFF\x00\x00\x00\x00WAVE"), chunk("fmt ", make([]byte, 8))...), "fewer than 16"},
	} {
		_, err := readWAVHeader(bytes.NewReader(tc.head))
		if _, ok := errors.AsType[wavError](err); !ok || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a wavError containing %q", name, err, tc.want)
		}
	}
	// Cut short: the stream's end, not a bad header.
	head := wavHead(1, 1, 8000, 16, 100)
	for _, n := range []int{0, 5, 12, 20, len(head) - 1} {
		_, err := readWAVHeader(bytes.NewReader(head[:n]))
		if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			t.Errorf("cut at %d: %v, want the end of input", n, err)
		}
	}
}

// FuzzReadWAVHeader: any bytes give a usable format or an error, and the
// header is never read past its data chunk.
func FuzzReadWAVHeader(f *testing.F) {
	f.Add(wavHead(1, 1, 22050, 16, 0xFFFFFFFF))
	f.Add(extensible(2, 48000, 32, wavFloat))
	f.Add(wavHead(1, 1, 8000, 16, 10, chunk("LIST", []byte("INFO"))))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		got, err := readWAVHeader(r)
		if err != nil {
			return
		}
		if got.rate < 1 || got.rate > maxRate || got.channels < 1 || got.channels > maxChannels ||
			(got.bytes != 2 && got.bytes != 4) || got.float != (got.bytes == 4) || got.data < -1 {
			t.Errorf("format %+v", got)
		}
		if read := len(data) - r.Len(); read < 44 || string(data[read-8:read-4]) != "data" {
			t.Errorf("read %d bytes, not up to the data chunk's header", read)
		}
	})
}
