package openai

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

func TestSampleDecoderMono(t *testing.T) {
	d := sampleDecoder{channels: 1, bytes: 2}
	var got []int16
	for _, piece := range []string{"\x01", "\x00\x02", "\x00", "\xff\xff\x00", "\x80", ""} {
		got = d.decode(got, []byte(piece))
	}
	if want := []int16{1, 2, -1, -32768}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSampleDecoderStereoAndFloat(t *testing.T) {
	le := binary.LittleEndian
	var stereo []byte
	for _, s := range []int16{100, 300, -32768, -32768, 32767, -32767} {
		stereo = le.AppendUint16(stereo, uint16(s))
	}
	d := sampleDecoder{channels: 2, bytes: 2}
	if got := d.decode(nil, stereo); !slices.Equal(got, []int16{200, -32768, 0}) {
		t.Errorf("stereo: %v, want the channels averaged", got)
	}
	var floats []byte
	for _, f := range []float32{0.5, -1, 2, float32(math.NaN()), -3} {
		floats = le.AppendUint32(floats, math.Float32bits(f))
	}
	d = sampleDecoder{channels: 1, bytes: 4, float: true}
	var got []int16
	for _, b := range floats { // one byte at a time
		got = d.decode(got, []byte{b})
	}
	if want := []int16{16384, -32767, 32767, 0, -32768}; !slices.Equal(got, want) {
		t.Errorf("float: %v, want %v (scaled, clipped, NaN silent)", got, want)
	}
}

// FuzzSampleDecoder: bytes from the network cut anywhere decode to the
// samples of the whole, the bytes of an incomplete last frame left over.
func FuzzSampleDecoder(f *testing.F) {
	f.Add([]byte("\x01\x00\x02\x00\x03"), []byte{1, 2}, uint8(1), false)
	f.Add([]byte("\xff\x00\x00\x80\x3f\x00\x00"), []byte{0, 0, 3}, uint8(2), true)
	f.Fuzz(func(t *testing.T, data, cuts []byte, channels uint8, float bool) {
		ch := int(channels%maxChannels) + 1
		size := 2
		if float {
			size = 4
		}
		whole := sampleDecoder{channels: ch, bytes: size, float: float}
		want := whole.decode(nil, data)
		d := sampleDecoder{channels: ch, bytes: size, float: float}
		var got []int16
		rest := data
		for _, c := range cuts {
			n := min(int(c), len(rest))
			got = d.decode(got, rest[:n])
			rest = rest[n:]
		}
		got = d.decode(got, rest)
		if !slices.Equal(got, want) {
			t.Fatalf("cut at %v: %v, want %v", cuts, got, want)
		}
		frame := ch * size
		if len(got) != len(data)/frame || len(d.rest) != len(data)%frame {
			t.Errorf("%d samples and %d bytes left of %d bytes in frames of %d", len(got), len(d.rest), len(data), frame)
		}
	})
}
