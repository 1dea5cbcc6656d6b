package openai

import (
	"encoding/binary"
	"slices"
	"testing"
)

func TestPCMDecoder(t *testing.T) {
	var d pcmDecoder
	var got []int16
	for _, piece := range []string{"\x01", "\x00\x02", "\x00", "\xff\xff\x00", "\x80", ""} {
		got = d.decode(got, []byte(piece))
	}
	if want := []int16{1, 2, -1, -32768}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// FuzzPCMDecoder: bytes from the network cut anywhere decode to the
// samples of the whole, the odd last byte left over.
func FuzzPCMDecoder(f *testing.F) {
	f.Add([]byte("\x01\x00\x02\x00\x03"), []byte{1, 2})
	f.Add([]byte("\xff"), []byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		var want []int16
		for i := 0; i+1 < len(data); i += 2 {
			want = append(want, int16(binary.LittleEndian.Uint16(data[i:])))
		}
		var d pcmDecoder
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
		if d.hasOdd != (len(data)%2 == 1) {
			t.Errorf("odd byte kept: %v for %d bytes", d.hasOdd, len(data))
		}
	})
}
