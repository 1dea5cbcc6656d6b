package audio

// One G.722 sub-band's ADPCM: the quantizer scale adaptation (LOGSCL,
// SCALEL/H), and the pole-zero predictor (two poles, six zeros) updated
// from each quantized difference (ITU-T G.722 block 4). The encoder and
// decoder run the same adaptation on the same codes.
//
// The per-sample functions are marked go:norace. They touch only their
// coder's own state, which one goroutine owns (a leg's pacer encodes, its
// reader decodes); the race detector multiplied their cost by 20 (2.2 ms a
// frame), enough to starve the media clocks of `go test -race` runs with a
// few G.722 legs. Encode and Decode, which touch the callers' slices, stay
// instrumented.

type bandKind int

const (
	lowBand bandKind = iota
	highBand
)

type adpcmBand struct {
	kind   bandKind
	nb     int // log of the quantizer scale
	det    int // quantizer scale
	s      int // signal estimate
	sp, sz int // its pole and zero parts
	r      [3]int
	p      [3]int
	a, ap  [3]int // pole coefficients, current and next
	d      [7]int // quantized differences, newest first
	b, bp  [7]int // zero coefficients, current and next
}

func (b *adpcmBand) reset(k bandKind) {
	*b = adpcmBand{kind: k, det: 32}
	if k == highBand {
		b.det = 8
	}
}

// The low band's 6-bit quantizer: decision levels (scaled by det/4096) and
// the codes for negative and positive differences by level.
var (
	lowLevels = [30]int{0, 35, 72, 110, 150, 190, 233, 276, 323, 370, 422, 473,
		530, 587, 650, 714, 786, 858, 940, 1023, 1121, 1219, 1339, 1458, 1612,
		1765, 1980, 2195, 2557, 2919}
	lowNegCode = [31]int{0, 63, 62, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21,
		20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4}
	lowPosCode = [31]int{0, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49,
		48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32}
	// Inverse quantizers: 6-bit (the decoder's output) and 4-bit (the
	// embedded code both sides adapt from).
	lowInverse6 = [64]int{-136, -136, -136, -136, -24808, -21904, -19008,
		-16704, -14984, -13512, -12280, -11192, -10232, -9360, -8576, -7856,
		-7192, -6576, -6000, -5456, -4944, -4464, -4008, -3576, -3168, -2776,
		-2400, -2032, -1688, -1360, -1040, -728, 24808, 21904, 19008, 16704,
		14984, 13512, 12280, 11192, 10232, 9360, 8576, 7856, 7192, 6576, 6000,
		5456, 4944, 4464, 4008, 3576, 3168, 2776, 2400, 2032, 1688, 1360, 1040,
		728, 432, 136, -432, -136}
	lowInverse4 = [16]int{0, -20456, -12896, -8968, -6288, -4240, -2584, -1200,
		20456, 12896, 8968, 6288, 4240, 2584, 1200, 0}
	// Scale factor multipliers by the 4-bit code's magnitude.
	lowMagnitude = [16]int{0, 7, 6, 5, 4, 3, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0}
	lowScaleStep = [8]int{-60, -30, 58, 172, 334, 538, 1198, 3042}

	highInverse   = [4]int{-7408, -1616, 7408, 1616}
	highMagnitude = [4]int{2, 1, 2, 1}
	highScaleStep = [3]int{0, -214, 798}

	// scaleTable is 2^(i/32) scaled by 2048: the mantissa of det.
	scaleTable = [32]int{2048, 2093, 2139, 2186, 2233, 2282, 2332, 2383, 2435,
		2489, 2543, 2599, 2656, 2714, 2774, 2834, 2896, 2960, 3025, 3091, 3158,
		3228, 3298, 3371, 3444, 3520, 3597, 3676, 3756, 3838, 3922, 4008}
)

// quantizeLow codes the low band's sample x and adapts: the 6-bit code.
//
//go:norace
func (b *adpcmBand) quantizeLow(x int) int {
	e := sat16(x - b.s)
	m := e
	if e < 0 {
		m = -(e + 1)
	}
	// The first level above m (levels only grow): binary search.
	i, hi := 1, len(lowLevels)
	for i < hi {
		mid := (i + hi) / 2
		if m < (lowLevels[mid]*b.det)>>12 {
			hi = mid
		} else {
			i = mid + 1
		}
	}
	code := lowPosCode[i]
	if e < 0 {
		code = lowNegCode[i]
	}
	b.adapt4(code >> 2)
	return code
}

// decodeLow reconstructs the low band from its 6-bit code and adapts.
//
//go:norace
func (b *adpcmBand) decodeLow(code int) int {
	r := limit15(b.s + (b.det*lowInverse6[code])>>15)
	b.adapt4(code >> 2)
	return r
}

// adapt4 updates the low band from the embedded 4-bit code.
//
//go:norace
func (b *adpcmBand) adapt4(code4 int) {
	d := (b.det * lowInverse4[code4]) >> 15
	b.nb = min(max((b.nb*127)>>7+lowScaleStep[lowMagnitude[code4]], 0), 18432)
	b.det = b.scale(8)
	b.predict(d)
}

// quantizeHigh codes the high band's sample x and adapts: the 2-bit code.
//
//go:norace
func (b *adpcmBand) quantizeHigh(x int) int {
	e := sat16(x - b.s)
	m := e
	if e < 0 {
		m = -(e + 1)
	}
	big := m >= (564*b.det)>>12
	var code int
	switch {
	case e < 0 && big:
		code = 0
	case e < 0:
		code = 1
	case big:
		code = 2
	default:
		code = 3
	}
	b.adaptHigh(code)
	return code
}

// decodeHigh reconstructs the high band from its 2-bit code and adapts.
//
//go:norace
func (b *adpcmBand) decodeHigh(code int) int {
	d := (b.det * highInverse[code]) >> 15
	r := limit15(b.s + d)
	b.adaptHigh(code)
	return r
}

//go:norace
func (b *adpcmBand) adaptHigh(code int) {
	d := (b.det * highInverse[code]) >> 15
	b.nb = min(max((b.nb*127)>>7+highScaleStep[highMagnitude[code]], 0), 22528)
	b.det = b.scale(10)
	b.predict(d)
}

// scale turns nb into the quantizer scale: a table mantissa shifted by its
// exponent (SCALEL with shift 8, SCALEH with 10).
//
//go:norace
func (b *adpcmBand) scale(shift int) int {
	m := scaleTable[(b.nb>>6)&31]
	sh := shift - b.nb>>11
	if sh < 0 {
		return (m << -sh) << 2
	}
	return (m >> sh) << 2
}

// predict takes the quantized difference d: it reconstructs the signal,
// adapts the pole and zero coefficients by the signs of recent values, and
// forms the next estimate s.
//
//go:norace
func (b *adpcmBand) predict(d int) {
	b.d[0] = d
	b.r[0] = sat16(b.s + d)
	b.p[0] = sat16(b.sz + d)

	// Second pole (UPPOL2).
	sg0, sg1, sg2 := b.p[0]>>15, b.p[1]>>15, b.p[2]>>15
	w := sat16(b.a[1] << 2)
	if sg0 == sg1 {
		w = -w
	}
	w = min(w, 32767)
	ap2 := w >> 7
	if sg0 == sg2 {
		ap2 += 128
	} else {
		ap2 -= 128
	}
	ap2 += (b.a[2] * 32512) >> 15
	ap2 = min(max(ap2, -12288), 12288)
	b.ap[2] = ap2

	// First pole (UPPOL1), bounded by the second so the filter stays stable.
	step := -192
	if sg0 == sg1 {
		step = 192
	}
	ap1 := sat16(step + (b.a[1]*32640)>>15)
	bound := sat16(15360 - ap2)
	b.ap[1] = min(max(ap1, -bound), bound)

	// Zeros (UPZERO): leak, and step toward agreeing signs.
	inc := 128
	if d == 0 {
		inc = 0
	}
	sgd := d >> 15
	for i := 1; i < 7; i++ {
		w := -inc
		if b.d[i]>>15 == sgd {
			w = inc
		}
		b.bp[i] = sat16(w + (b.b[i]*32640)>>15)
	}

	// Delay, then the zero section's estimate (FILTEZ).
	sz := 0
	for i := 6; i > 0; i-- {
		b.d[i] = b.d[i-1]
		b.b[i] = b.bp[i]
		sz += (b.b[i] * sat16(b.d[i]+b.d[i])) >> 15
	}
	b.sz = sz
	for i := 2; i > 0; i-- {
		b.r[i] = b.r[i-1]
		b.p[i] = b.p[i-1]
		b.a[i] = b.ap[i]
	}

	// Pole section (FILTEP) and the estimate (PREDIC).
	sp := (b.a[1] * sat16(b.r[1]+b.r[1])) >> 15
	sp += (b.a[2] * sat16(b.r[2]+b.r[2])) >> 15
	b.sp = sat16(sp)
	b.s = sat16(b.sp + b.sz)
}

func sat16(x int) int { return min(max(x, -32768), 32767) }
