package openaitest

import (
	"hash/fnv"
	"math"
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"I'd like to book a table.", []string{"lik", "book", "tabl"}},
		{"Bookings, BOOKED, booking and books", []string{"book", "book", "book", "book"}},
		{"tables table tabled", []string{"tabl", "tabl", "tabl"}},
		{"classes class glasses boxes", []string{"class", "class", "glass", "box"}},
		{"reserve reserved reserves reserving", []string{"reserv", "reserv", "reserv", "reserv"}},
		{"bus sing red use", []string{"bus", "sing", "red", "use"}},
		{"Café über naïve x", []string{"café", "über", "naïv"}},
		{"the of and is it 42 -- !", nil},
		{"", nil},
	} {
		if got := terms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestVector(t *testing.T) {
	for _, dim := range []int{3, 256, 1536} {
		v := Vector("Opening hours are nine to five", dim)
		if len(v) != dim {
			t.Fatalf("dim %d: length %d", dim, len(v))
		}
		var sq float64
		for _, x := range v {
			sq += float64(x) * float64(x)
		}
		if math.Abs(sq-1) > 1e-6 {
			t.Errorf("dim %d: norm² %v, want 1", dim, sq)
		}
		if !slices.Equal(v, Vector("Opening hours are nine to five", dim)) {
			t.Errorf("dim %d: not deterministic", dim)
		}
	}
	if v := Vector("hello", 1); v[0] != 1 && v[0] != -1 {
		t.Errorf("dim 1: %v", v)
	}
	if v := Vector("the of and", 8); !slices.Equal(v, make([]float32, 8)) {
		t.Errorf("no words: %v, want zeros", v)
	}
	if v := Vector("words", 0); v != nil {
		t.Errorf("dim 0: %v", v)
	}
	// The same words in another order and form are the same vector.
	if !slices.Equal(Vector("Tables booked", 64), Vector("the booking of a table", 64)) {
		t.Error("word order or form changes the vector")
	}
}

func TestSimilarity(t *testing.T) {
	const dim = DefaultDim
	q := Vector("When do you open on Sundays?", dim)
	near := Vector("We open at noon on Sunday.", dim)
	far := Vector("Parking is free in the garage.", dim)
	if s := Cosine(q, near); s < 0.5 {
		t.Errorf("shared words: cosine %.2f", s)
	}
	if s := Cosine(q, far); math.Abs(s) > 0.2 {
		t.Errorf("no shared words: cosine %.2f", s)
	}
	if s := Cosine(q, q); math.Abs(s-1) > 1e-6 {
		t.Errorf("itself: cosine %v", s)
	}
	if Cosine(q, near[:10]) != 0 || Cosine(q, make([]float32, dim)) != 0 {
		t.Error("cosine of mismatched or zero vectors is not 0")
	}
}

// TestVectorRule: the vector is the documented rule, computed here
// independently: each stem's FNV-1a hash picks its bucket (modulo dim) and
// its top bit the sign.
func TestVectorRule(t *testing.T) {
	const dim = 64
	want := make([]float32, dim)
	for _, w := range []string{"book", "tabl", "dinner"} {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := float32(1)
		if x&(1<<63) != 0 {
			sign = -1
		}
		if want[x%dim] != 0 {
			t.Fatalf("%q collides: pick other words", w)
		}
		want[x%dim] = sign / float32(math.Sqrt(3))
	}
	got := Vector("Tables booked for dinner!", dim)
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("bucket %d: %v, want %v\n got %v\nwant %v", i, got[i], want[i], got, want)
		}
	}
}
