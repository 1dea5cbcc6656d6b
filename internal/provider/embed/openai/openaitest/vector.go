package openaitest

import (
	"hash/fnv"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultDim is the length of the fake's vectors when neither
// Options.Dim nor the request's "dimensions" says otherwise.
const DefaultDim = 256

// Vector is the fake's embedding of text: a hashed bag of words of length
// dim (nil when dim <= 0). Texts sharing words get a high cosine
// similarity, texts sharing none about 0 (a word hashed into the bucket of
// another adds a little noise), so tests can rank them with expectations
// that make sense.
//
// The text is lower-cased and split on everything that is not a letter;
// words of one letter and a short list of English stop words ("the",
// "is", "to", ...) are dropped; each word is stemmed crudely: a plural
// "es" or "s" (not "ss") is trimmed, then "ing" or "ed", then a final "e",
// each only when three letters stay ("bookings", "booked", "book" →
// "book"; "tables", "table" → "tabl"). Each stem adds ±1 to one bucket:
// the FNV-1a hash of the stem modulo dim picks it, the hash's top bit the
// sign. The sum is scaled to length 1 (a text with no words left is all
// zeros).
func Vector(text string, dim int) []float32 {
	if dim <= 0 {
		return nil
	}
	sum := make([]float64, dim)
	for _, w := range terms(text) {
		h := fnv.New64a()
		_, _ = h.Write([]byte(w))
		x := h.Sum64()
		if x>>63 == 1 {
			sum[x%uint64(dim)]--
		} else {
			sum[x%uint64(dim)]++
		}
	}
	var sq float64
	for _, v := range sum {
		sq += v * v
	}
	vec := make([]float32, dim)
	if sq == 0 {
		return vec
	}
	norm := math.Sqrt(sq)
	for i, v := range sum {
		vec[i] = float32(v / norm)
	}
	return vec
}

// terms is the stems [Vector] hashes, in the order of the text, repeats
// kept.
func terms(text string) []string {
	var terms []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if utf8.RuneCountInString(w) < 2 || stopWords[w] {
			continue
		}
		terms = append(terms, stem(w))
	}
	return terms
}

// stem trims a plural ending ("es", or "s" but not "ss"), then "ing" or
// "ed", then a final "e", each only when three letters stay.
func stem(w string) string {
	trim := func(suffixes ...string) {
		for _, suffix := range suffixes {
			if rest, ok := strings.CutSuffix(w, suffix); ok && utf8.RuneCountInString(rest) >= 3 {
				w = rest
				return
			}
		}
	}
	if !strings.HasSuffix(w, "ss") {
		trim("es", "s")
	}
	trim("ing", "ed")
	trim("e")
	return w
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		an the and or but if then than so not no nor
		of to in on at by for with from into onto about as up out off over
		is are was were be been being am do does did done have has had
		it its this that these those there here
		me my mine you your yours he him his she her hers we us our ours they them their theirs
		what which who whom whose when where why how
		can could will would shall should may might must
		all any some each every very too just also only
		ll re ve don doesn didn isn aren wasn weren won`) {
		stopWords[w] = true
	}
}

// Cosine is the cosine similarity of a and b (0 when either is all zeros
// or their lengths differ).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
