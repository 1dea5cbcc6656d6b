package audio

// G.722 at 64 kbit/s (mode 1), as ITU-T G.722 defines it: 16 kHz PCM is
// split by a 24-tap quadrature mirror filter into a low band (0-4 kHz) and a
// high band (4-8 kHz), each at 8 kHz; the low band is coded with 6-bit
// ADPCM and the high band with 2-bit ADPCM, one byte for every two input
// samples (high band in the top two bits). Both sides adapt the same
// predictor from the same embedded 4-bit low-band and 2-bit high-band
// codes, so encoder and decoder stay in step without side information. The
// coders work on 15-bit samples: input is halved on the way in and the
// output doubled on the way out.

// G722Encoder encodes 16 kHz PCM to G.722. Its state carries from one call
// to the next, so a leg keeps one encoder for its whole stream.
type G722Encoder struct {
	qmf       qmfHistory
	low, high adpcmBand
	pending   int16 // an odd sample waiting for its pair
	hasPend   bool
}

// NewG722Encoder returns an encoder in G.722's reset state.
func NewG722Encoder() *G722Encoder {
	e := &G722Encoder{}
	e.low.reset(lowBand)
	e.high.reset(highBand)
	return e
}

// Encode appends the G.722 codes of pcm to dst: one byte per two samples.
// An odd sample at the end is kept and coded with the first of the next
// call's.
func (e *G722Encoder) Encode(dst []byte, pcm []int16) []byte {
	if e.hasPend && len(pcm) > 0 {
		dst = append(dst, e.encodePair(e.pending, pcm[0]))
		pcm, e.hasPend = pcm[1:], false
	}
	for len(pcm) >= 2 {
		dst = append(dst, e.encodePair(pcm[0], pcm[1]))
		pcm = pcm[2:]
	}
	if len(pcm) == 1 {
		e.pending, e.hasPend = pcm[0], true
	}
	return dst
}

//go:norace
func (e *G722Encoder) encodePair(a, b int16) byte {
	// Transmit QMF: the even and odd taps of the filter give the sum and
	// difference of the two sub-bands (DC gain 4096, plus one bit for the
	// sum and one for the 15-bit coders).
	odd, even := e.qmf.filter(int(a), int(b))
	xl := limit15((even + odd) >> 14)
	xh := limit15((even - odd) >> 14)
	il := e.low.quantizeLow(xl)
	ih := e.high.quantizeHigh(xh)
	return byte(ih<<6 | il)
}

// G722Decoder decodes G.722 to 16 kHz PCM, state carried between calls.
type G722Decoder struct {
	qmf       qmfHistory
	low, high adpcmBand
}

// NewG722Decoder returns a decoder in G.722's reset state.
func NewG722Decoder() *G722Decoder {
	d := &G722Decoder{}
	d.low.reset(lowBand)
	d.high.reset(highBand)
	return d
}

// Decode appends the PCM of the G.722 codes b to dst: two samples a byte.
func (d *G722Decoder) Decode(dst []int16, b []byte) []int16 {
	for _, c := range b {
		rl := d.low.decodeLow(int(c & 0x3f))
		rh := d.high.decodeHigh(int(c >> 6))
		x2, x1 := d.qmf.filter(rl+rh, rl-rh)
		// DC gain 4096, less one bit back from the 15-bit coders.
		dst = append(dst, saturate16(x1>>11), saturate16(x2>>11))
	}
	return dst
}

// qmfTaps are half of the 24-tap QMF (it is symmetric), scaled by 8192,
// and qmfTapsReversed the same backwards.
var (
	qmfTaps         = [12]int{3, -11, 12, 32, -210, 951, 3876, -805, 362, -156, 53, -11}
	qmfTapsReversed = [12]int{-11, 53, -156, 362, -805, 3876, 951, -210, 32, 12, -11, 3}
)

// qmfHistory is the QMF's last 24 samples, kept twice over (x[k] ==
// x[k+24]) so the window x[pos:pos+24], oldest first, is contiguous
// without shifting it every pair.
type qmfHistory struct {
	x   [48]int
	pos int
}

// filter takes the next two samples and returns the two polyphase sums
// over the window: the taps at its even positions, and at its odd ones
// (the filter reversed).
//
//go:norace
func (h *qmfHistory) filter(a, b int) (evenTaps, oddTaps int) {
	h.pos += 2
	if h.pos == 24 {
		h.pos = 0
	}
	// The newest pair goes at window offsets 22 and 23, and in the copy.
	k := (h.pos + 22) % 24 // even: the pair never wraps
	h.x[k], h.x[k+1], h.x[k+24], h.x[k+25] = a, b, a, b
	w := (*[24]int)(h.x[h.pos : h.pos+24])
	for i := range 12 {
		evenTaps += w[2*i] * qmfTaps[i]
		oddTaps += w[2*i+1] * qmfTapsReversed[i]
	}
	return evenTaps, oddTaps
}

func limit15(x int) int { return min(max(x, -16384), 16383) }

func saturate16(x int) int16 { return int16(min(max(x, -32768), 32767)) }
