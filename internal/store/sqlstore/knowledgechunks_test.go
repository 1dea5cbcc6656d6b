package sqlstore

import (
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSearchTerms(t *testing.T) {
	for query, want := range map[string][]string{
		"":            nil,
		"What is it?": nil,
		`what's your "refund" policy? (AND) NEAR*`:  {"refund", "policy", "near"},
		"Refunds, REFUNDS & refunds!":               {"refunds"},
		"e-mail me@example.com: 2 x 4.5":            {"e", "mail", "example", "com", "2", "x", "4", "5"},
		"Crème brûlée, naïve café":                  {"crème", "brûlée", "naïve", "café"},
		"cre\u0300me \u0301 x\u0301":                {"cre\u0300me", "x\u0301"},
		"日本語の質問 😀 Ωmega":                            {"日本語の質問", "ωmega"},
		"col:value {a b} ^start NOT(x) \x00y":       {"col", "value", "b", "start", "x", "y"},
		strings.Repeat("z", maxTermBytes+1) + " ok": {"ok"},
	} {
		if d := cmp.Diff(want, searchTerms(query), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("searchTerms(%q) (-want +got):\n%s", query, d)
		}
	}
	var many []string
	for i := range 3 * maxTerms {
		many = append(many, "w"+strings.Repeat("x", i))
	}
	if got := searchTerms(strings.Join(many, " ")); !slices.Equal(got, many[:maxTerms]) {
		t.Errorf("searchTerms of %d words = %d terms, want the first %d", len(many), len(got), maxTerms)
	}
}

// FuzzSearchTerms checks that whatever the query, every term is a short
// lower-case run of letters, digits and marks, with a letter or digit, and
// no term comes twice: nothing a search engine could read as syntax.
func FuzzSearchTerms(f *testing.F) {
	for _, s := range []string{"", `what's your "refund" policy? (AND) NEAR*`, "a:b -c ^d* 'e' \\f", "\u0301\u0301", "İSTANBUL ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		terms := searchTerms(query)
		if len(terms) > maxTerms {
			t.Fatalf("%d terms", len(terms))
		}
		seen := map[string]bool{}
		for _, term := range terms {
			if term == "" || len(term) > maxTermBytes || seen[term] || stopWords[term] || term != strings.ToLower(term) {
				t.Fatalf("term %q of %q", term, query)
			}
			seen[term] = true
			letter := false
			for _, r := range term {
				switch {
				case unicode.IsLetter(r) || unicode.IsNumber(r):
					letter = true
				case unicode.Is(unicode.Mn, r):
				default:
					t.Fatalf("term %q of %q holds %q", term, query, r)
				}
			}
			if !letter {
				t.Fatalf("term %q of %q has no letter or digit", term, query)
			}
		}
	})
}

func TestVector(t *testing.T) {
	for _, v := range [][]float32{
		{1.5, -2, 0.25, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(1)), float32(math.Copysign(0, -1))},
		{0},
	} {
		var got []float32
		if err := (vectorDest{&got}).Scan(vector(v)); err != nil {
			t.Fatal(err)
		}
		for i := range v {
			if math.Float32bits(got[i]) != math.Float32bits(v[i]) {
				t.Fatalf("vector %v read back as %v", v, got)
			}
		}
		if len(got) != len(v) {
			t.Fatalf("vector %v read back as %v", v, got)
		}
	}
	b := vector([]float32{1, -1}).([]byte)
	if want := []byte{0, 0, 0x80, 0x3f, 0, 0, 0x80, 0xbf}; !slices.Equal(b, want) {
		t.Fatalf("vector bytes % x, want little-endian float32s % x", b, want)
	}
	for _, empty := range [][]float32{nil, {}} {
		if v := vector(empty); v != nil {
			t.Fatalf("vector(%#v) = %#v, want NULL", empty, v)
		}
	}
	got := []float32{1}
	if err := (vectorDest{&got}).Scan(nil); err != nil || got != nil {
		t.Fatalf("NULL read as %v, %v", got, err)
	}
	for _, bad := range []any{[]byte{1, 2, 3}, "abcd", int64(1)} {
		if err := (vectorDest{&got}).Scan(bad); err == nil {
			t.Fatalf("%#v read as a vector", bad)
		}
	}
}
