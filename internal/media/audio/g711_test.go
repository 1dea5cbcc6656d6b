package audio

import (
	"math"
	"testing"
)

type law struct {
	name   string
	encode func([]byte, []int16) []byte
	decode func([]int16, []byte) []int16
	max    int16 // largest decodable magnitude
}

var laws = []law{
	{"ulaw", EncodeULaw, DecodeULaw, 32124},
	{"alaw", EncodeALaw, DecodeALaw, 32256},
}

func TestG711Vectors(t *testing.T) {
	tests := []struct {
		name string
		enc  func([]byte, []int16) []byte
		pcm  int16
		want byte
	}{
		{"ulaw 0", EncodeULaw, 0, 0xFF},
		{"ulaw max", EncodeULaw, math.MaxInt16, 0x80},
		{"ulaw min", EncodeULaw, math.MinInt16, 0x00},
		{"ulaw -1", EncodeULaw, -1, 0x7F},
		{"alaw 0", EncodeALaw, 0, 0xD5},
		{"alaw max", EncodeALaw, math.MaxInt16, 0xAA},
		{"alaw min", EncodeALaw, math.MinInt16, 0x2A},
		{"alaw -1", EncodeALaw, -1, 0x55},
	}
	for _, tt := range tests {
		if got := tt.enc(nil, []int16{tt.pcm}); len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: encode(%d) = %x, want %02x", tt.name, tt.pcm, got, tt.want)
		}
	}

	decodes := []struct {
		name string
		dec  func([]int16, []byte) []int16
		b    byte
		want int16
	}{
		{"ulaw 0xFF", DecodeULaw, 0xFF, 0},
		{"ulaw 0x7F", DecodeULaw, 0x7F, 0},
		{"ulaw 0x80", DecodeULaw, 0x80, 32124},
		{"ulaw 0x00", DecodeULaw, 0x00, -32124},
		{"alaw 0xD5", DecodeALaw, 0xD5, 8},
		{"alaw 0x55", DecodeALaw, 0x55, -8},
		{"alaw 0xAA", DecodeALaw, 0xAA, 32256},
		{"alaw 0x2A", DecodeALaw, 0x2A, -32256},
	}
	for _, tt := range decodes {
		if got := tt.dec(nil, []byte{tt.b}); len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: decode = %v, want %d", tt.name, got, tt.want)
		}
	}
}

// Over the whole int16 range the round trip is monotonic and within half a
// quantisation step: about 1/32 of the value, plus the 14- or 13-bit
// truncation near zero.
func TestG711RoundTrip(t *testing.T) {
	pcm := make([]int16, 0, 1<<16)
	for x := math.MinInt16; x <= math.MaxInt16; x++ {
		pcm = append(pcm, int16(x))
	}
	for _, l := range laws {
		t.Run(l.name, func(t *testing.T) {
			enc := l.encode(nil, pcm)
			dec := l.decode(nil, enc)
			if len(enc) != len(pcm) || len(dec) != len(pcm) {
				t.Fatalf("lengths %d, %d; want %d", len(enc), len(dec), len(pcm))
			}
			worst := 0.0
			for i, x := range pcm {
				err := math.Abs(float64(dec[i]) - float64(x))
				if bound := math.Abs(float64(x))/32 + 16; err > bound {
					t.Fatalf("%d -> %#02x -> %d: error %v, bound %v", x, enc[i], dec[i], err, bound)
				}
				worst = max(worst, err)
				if i > 0 && dec[i] < dec[i-1] {
					t.Fatalf("not monotonic: %d -> %d but %d -> %d", pcm[i-1], dec[i-1], x, dec[i])
				}
				if dec[i] > l.max || dec[i] < -l.max {
					t.Fatalf("%d decodes to %d, beyond ±%d", x, dec[i], l.max)
				}
			}
			// Full scale clips to the largest code, so the worst case is there.
			if worst > 644 {
				t.Errorf("worst error %v", worst)
			}
		})
	}
}

// Every code word decodes to a value that encodes back to it (except μ-law's
// negative zero, which becomes positive zero).
func TestG711CodeWordsStable(t *testing.T) {
	for _, l := range laws {
		for b := range 256 {
			got := l.encode(nil, l.decode(nil, []byte{byte(b)}))[0]
			if got != byte(b) && !(l.name == "ulaw" && b == 0x7F && got == 0xFF) {
				t.Errorf("%s: %#02x -> %d -> %#02x", l.name, b, l.decode(nil, []byte{byte(b)})[0], got)
			}
		}
	}
}

func TestG711Appends(t *testing.T) {
	for _, l := range laws {
		enc := l.encode([]byte{1, 2}, []int16{0, 100})
		if len(enc) != 4 || enc[0] != 1 || enc[1] != 2 {
			t.Errorf("%s: encode did not append: %v", l.name, enc)
		}
		dec := l.decode([]int16{7}, enc[2:])
		if len(dec) != 3 || dec[0] != 7 {
			t.Errorf("%s: decode did not append: %v", l.name, dec)
		}
	}
}

// The encoding tables answer exactly what the segment search computes, for
// every one of the 65,536 samples.
func TestG711TablesMatchTheSearch(t *testing.T) {
	pcm := make([]int16, 1<<16)
	for i := range pcm {
		pcm[i] = int16(uint16(i))
	}
	u, a := EncodeULaw(nil, pcm), EncodeALaw(nil, pcm)
	for i, x := range pcm {
		if u[i] != ulawEncode(x) || a[i] != alawEncode(x) {
			t.Fatalf("%d: tables say μ %02x, A %02x; the search %02x, %02x", x, u[i], a[i], ulawEncode(x), alawEncode(x))
		}
	}
}
