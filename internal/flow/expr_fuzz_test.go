package flow

import (
	"encoding/json"
	"slices"
	"testing"
)

// fuzzVars are the variable maps every parsed expression is evaluated over.
var fuzzVars = []map[string]any{
	nil,
	{},
	{
		"a": float64(2), "b": "", "c": true, "age": "18", "plan": "GOLD", "email": "x@y.z",
		"consent": "true", "notes": "urgent: call", "tags": []any{"vip", float64(1), nil},
		"booking": map[string]any{"status": "ok", "n": json.Number("3")}, "x": nil,
	},
	{
		"a": "-1.5", "b": []any{}, "c": map[string]any{}, "age": 17, "plan": " gold ", "email": " ",
		"consent": false, "notes": float64(0), "tags": []string{"A"}, "booking.status": "flat", "x": int64(-3),
	},
}

func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{
		`{{age}} >= 18`,
		`{{plan}} == "gold"`,
		`{{email}}`,
		`!{{email}}`,
		`{{age}} >= 18 && {{consent}} == true`,
		`({{a}} > 1 || {{b}}) and not {{c}}`,
		`{{notes}} contains "urgent"`,
		`{{tags}} contains 'VIP' OR {{booking.status}} != null`,
		`not {{a}} == -0.50`,
		`(!{{x}}) == false`,
		`"it\'s \"q\"\n\t\\" contains {{ b }}`,
		`true`,
		`((({{a}})))`,
		`{{a}} == 1 2`,
		`{{age`,
		`"é" < '🎉'`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExpr(s)
		if err != nil {
			if e != nil {
				t.Fatalf("ParseExpr(%q) returned both an expression and %v", s, err)
			}
			if err.Error() == "" {
				t.Fatalf("ParseExpr(%q): empty error message", s)
			}
			return
		}
		canonical := e.String()
		again, err := ParseExpr(canonical)
		if err != nil {
			t.Fatalf("ParseExpr(%q) = %q, which does not parse: %v", s, canonical, err)
		}
		if again.String() != canonical {
			t.Fatalf("ParseExpr(%q) = %q, which reparses as %q", s, canonical, again.String())
		}
		if !slices.Equal(e.Variables(), again.Variables()) {
			t.Fatalf("ParseExpr(%q): variables %q, canonical %q has %q", s, e.Variables(), canonical, again.Variables())
		}
		for _, vars := range fuzzVars {
			if got, want := again.Eval(vars), e.Eval(vars); got != want {
				t.Fatalf("ParseExpr(%q) = %v on %v, but its canonical form %q = %v", s, want, vars, canonical, got)
			}
		}
	})
}
