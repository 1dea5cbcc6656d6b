package audio

import "math/bits"

// G.711 as in ITU-T G.711 and its G.191 reference code: 16-bit linear PCM is
// reduced to 14 bits (μ-law) or 13 bits (A-law), negative values by ones'
// complement so that both signs quantise alike, and companded into 8
// segments of 16 steps. Decoding returns the middle of each step, so the
// round-trip error is at most half a step (about 3% of the value).

var ulawToLinear, alawToLinear = decodeTables()

// Encoding by table: μ-law depends only on the sample's top 14 bits and
// A-law on its top 13 (the low bits are dropped before companding, and
// ones' complement commutes with the arithmetic shift), so 16 KiB and
// 8 KiB hold every answer. A lookup is a few times cheaper than the
// segment search, and every frame of every G.711 leg is encoded.
var ulawFromLinear, alawFromLinear = encodeTables()

func encodeTables() (u *[1 << 14]byte, a *[1 << 13]byte) {
	u, a = new([1 << 14]byte), new([1 << 13]byte)
	for i := range 1 << 16 {
		x := int16(uint16(i))
		u[uint16(x)>>2] = ulawEncode(x)
		a[uint16(x)>>3] = alawEncode(x)
	}
	return u, a
}

func decodeTables() (u, a [256]int16) {
	for i := range 256 {
		u[i] = ulawDecode(byte(i))
		a[i] = alawDecode(byte(i))
	}
	return u, a
}

// EncodeULaw appends the μ-law encoding of pcm to dst.
func EncodeULaw(dst []byte, pcm []int16) []byte {
	for _, x := range pcm {
		dst = append(dst, ulawFromLinear[uint16(x)>>2])
	}
	return dst
}

// DecodeULaw appends the linear PCM of the μ-law bytes b to dst.
func DecodeULaw(dst []int16, b []byte) []int16 {
	for _, c := range b {
		dst = append(dst, ulawToLinear[c])
	}
	return dst
}

// EncodeALaw appends the A-law encoding of pcm to dst.
func EncodeALaw(dst []byte, pcm []int16) []byte {
	for _, x := range pcm {
		dst = append(dst, alawFromLinear[uint16(x)>>3])
	}
	return dst
}

// DecodeALaw appends the linear PCM of the A-law bytes b to dst.
func DecodeALaw(dst []int16, b []byte) []int16 {
	for _, c := range b {
		dst = append(dst, alawToLinear[c])
	}
	return dst
}

const (
	ulawBias = 0x84 >> 2 // bias in the 14-bit domain; makes segments start at powers of two
	ulawClip = 8159      // largest 14-bit magnitude before the bias overflows segment 7
)

func ulawEncode(x int16) byte {
	mask := byte(0xFF)
	if x < 0 {
		x = ^x // ones' complement, as ITU-T G.191 does: -1 is the mirror of 0
		mask = 0x7F
	}
	v := int(x) >> 2
	v = min(v, ulawClip) + ulawBias // 33..8192
	seg := bits.Len(uint(v)) - 6    // 33..63 is segment 0
	if seg >= 8 {
		return 0x7F ^ mask
	}
	return byte(seg<<4|(v>>(seg+1))&0x0F) ^ mask
}

func ulawDecode(u byte) int16 {
	u = ^u
	t := (int(u&0x0F)<<3 + 0x84) << ((u & 0x70) >> 4)
	if u&0x80 != 0 {
		return int16(0x84 - t)
	}
	return int16(t - 0x84)
}

func alawEncode(x int16) byte {
	mask := byte(0xD5) // even bits inverted, sign bit set for positive
	if x < 0 {
		x = ^x
		mask = 0x55
	}
	v := int(x) >> 3
	seg := 0
	if v >= 32 { // segments 0 and 1 share the same step
		seg = bits.Len(uint(v)) - 5
	}
	shift := max(seg, 1)
	return byte(seg<<4|(v>>shift)&0x0F) ^ mask
}

func alawDecode(a byte) int16 {
	a ^= 0x55
	t := int(a&0x0F) << 4
	switch seg := int(a&0x70) >> 4; seg {
	case 0:
		t += 8
	case 1:
		t += 0x108
	default:
		t = (t + 0x108) << (seg - 1)
	}
	if a&0x80 == 0 {
		t = -t
	}
	return int16(t)
}
