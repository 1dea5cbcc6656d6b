package flow

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseExprCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{{age}} >= 18`, `{{age}} >= 18`},
		{`{{plan}} == "gold"`, `{{plan}} == "gold"`},
		{`{{email}}`, `{{email}}`},
		{`!{{email}}`, `!{{email}}`},
		{`{{age}} >= 18 && {{consent}} == true`, `{{age}} >= 18 && {{consent}} == true`},
		{`({{a}} > 1 || {{b}}) and not {{c}}`, `({{a}} > 1 || {{b}}) && !{{c}}`},
		{`{{notes}} contains "urgent"`, `{{notes}} contains "urgent"`},
		{`{{ booking.status }}=='Confirmed'`, `{{booking.status}} == "Confirmed"`},
		{`{{a}}OR{{b}}`, `{{a}} || {{b}}`},
		{"{{a}}\n\tAND\r\n{{b}}", `{{a}} && {{b}}`},
		{`NOT {{a}} CONTAINS 'x'`, `not {{a}} contains "x"`},
		{`not not {{a}} == 1`, `not not {{a}} == 1`},
		{`!({{a}} == 1)`, `not {{a}} == 1`},
		{`!!{{a}}`, `!!{{a}}`},
		{`!({{a}} && {{b}})`, `!({{a}} && {{b}})`},
		{`(!{{a}}) == false`, `(!{{a}}) == false`},
		{`({{a}} == 1) != ({{b}} < 2)`, `({{a}} == 1) != ({{b}} < 2)`},
		{`(({{a}}))`, `{{a}}`},
		{`({{a}} && {{b}}) && ({{c}} && {{d}})`, `{{a}} && {{b}} && {{c}} && {{d}}`},
		{`{{a}} || ({{b}} || {{c}})`, `{{a}} || {{b}} || {{c}}`},
		{`{{a}} && {{b}} || {{c}} && {{d}}`, `{{a}} && {{b}} || {{c}} && {{d}}`},
		{`{{a}} && ({{b}} || {{c}})`, `{{a}} && ({{b}} || {{c}})`},
		{`true`, `true`},
		{`FALSE`, `false`},
		{`Null == {{x}}`, `null == {{x}}`},
		{`-1.50 < 0`, `-1.5 < 0`},
		{`-0 == 0`, `-0 == 0`},
		{`007 == 7.000`, `7 == 7`},
		{`123456789012345678901234567890 > 1`, `123456789012345680000000000000 > 1`},
		{`'it\'s' == "say \"hi\"\\\n\t"`, `"it's" == "say \"hi\"\\\n\t"`},
		{`"a'b"`, `"a'b"`},
		{`"émoji 🎉"`, `"émoji 🎉"`},
		{`{{_x.y_2.Z}}`, `{{_x.y_2.Z}}`},
	}
	for _, tt := range tests {
		e, err := ParseExpr(tt.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tt.in, err)
			continue
		}
		if got := e.String(); got != tt.want {
			t.Errorf("ParseExpr(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
		again, err := ParseExpr(e.String())
		if err != nil {
			t.Errorf("ParseExpr(%q) of the canonical form: %v", e.String(), err)
			continue
		}
		if again.String() != e.String() {
			t.Errorf("canonical form %q reparses as %q", e.String(), again.String())
		}
	}
}

func TestParseExprErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `empty expression`},
		{"  \t\n", `empty expression`},
		{`({{a}} == 1))`, `unexpected ")" at column 13`},
		{`{{a}} == 1 2`, `unexpected "2" at column 12`},
		{`{{a}} {{b}}`, `unexpected "{{b}}" at column 7`},
		{`{{a}} == ("x" "y")`, `unexpected string "y" at column 15`},
		{`{{a}} == 'it\'s' 'x'`, `unexpected string "x" at column 18`},
		{`{{a}} contains || {{b}}`, `expected an operand after "contains", found "||" at column 16`},
		{`{{a}} || "x" == 'y' "z"`, `unexpected string "z" at column 21`},
		{`1 ` + strings.Repeat("z", 65), `unexpected word "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz…" at column 3`},
		{`{{a}} == 1 == 2`, `unexpected "==" at column 12 (join comparisons with && or ||)`},
		{`)`, `unexpected ")" at column 1`},
		{`&& {{a}}`, `unexpected "&&" at column 1`},
		{`{{age`, `unclosed {{ at column 1`},
		{`{{a}} && {{b`, `unclosed {{ at column 10`},
		{`{{ }}`, `empty variable name at column 1`},
		{`{{first name}}`, `invalid variable name "first name" at column 1 (use letters, digits and _, with dots between parts, like {{booking.status}})`},
		{`{{a..b}}`, `invalid variable name "a..b" at column 1 (use letters, digits and _, with dots between parts, like {{booking.status}})`},
		{`{{1a}}`, `invalid variable name "1a" at column 1 (use letters, digits and _, with dots between parts, like {{booking.status}})`},
		{`{{age}} >= `, `expected an operand after ">=" at column 9`},
		{`{{age}} >= )`, `expected an operand after ">=", found ")" at column 12`},
		{`{{a}} AND`, `expected an operand after "AND" at column 7`},
		{`!`, `expected an operand after "!" at column 1`},
		{`(`, `expected an operand after "(" at column 1`},
		{`({{a}} || {{b}}`, `unclosed ( at column 1`},
		{`{{a}} == "gold`, `unclosed string at column 10`},
		{`'it\'`, `unclosed string at column 1`},
		{`"a\`, `unclosed string at column 1`},
		{`"a\qb"`, `unknown escape "\\q" in a string at column 3 (use \" \' \\ \n or \t)`},
		{`{{a}} = 1`, `unexpected "=" at column 7 (use == to compare)`},
		{`{{a}} & {{b}}`, `unexpected "&" at column 7 (use && or and)`},
		{`{{a}} | {{b}}`, `unexpected "|" at column 7 (use || or or)`},
		{`{{a}} @ 1`, `unexpected "@" at column 7`},
		{`é == {{a}}`, `unexpected "é" at column 1`},
		{`"é" == ~`, `unexpected "~" at column 8`},
		{"\xff", `unexpected byte 0xff at column 1`},
		{`age >= 18`, `unexpected word "age" at column 1 (write variables as {{age}})`},
		{`booking.status`, `unexpected word "booking.status" at column 1 (write variables as {{booking.status}})`},
		{`{{a}} == yes`, `unexpected word "yes" at column 10 (write variables as {{yes}})`},
		{`{{a}} > 1e5`, `invalid number "1e5" at column 9`},
		{`{{a}} > 1.`, `expected a digit after "." at column 10`},
		{`{{a}} > .5`, `unexpected "." at column 9`},
		{`{{a}} > - 5`, `unexpected "-" at column 9 (a negative number is written -5)`},
		{`{{a}} > 1` + strings.Repeat("0", 400), `number at column 9 is too large`},
		{`{{a}} }}`, `unexpected "}" at column 7`},
		{strings.Repeat("(", 33) + "{{a}}" + strings.Repeat(")", 33), `expression nests deeper than 32`},
		{strings.Repeat("!", 33) + "{{a}}", `expression nests deeper than 32`},
		{strings.Repeat("not (", 17) + "{{a}}" + strings.Repeat(")", 17), `expression nests deeper than 32`},
		{strings.Repeat("(", 100000), `expression nests deeper than 32`},
		{`{{a}} == "` + strings.Repeat("x", 40) + `" "x"`, `unexpected string "x" at column 53`},
		{`{{a}} == 1 ` + strings.Repeat("y", 40), `unexpected word "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy…" at column 12 (write variables as {{` + strings.Repeat("y", 40) + `}})`},
	}
	for _, tt := range tests {
		e, err := ParseExpr(tt.in)
		if err == nil {
			t.Errorf("ParseExpr(%q) = %q, want error %q", tt.in, e, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("ParseExpr(%q) error:\n got %s\nwant %s", tt.in, err, tt.want)
		}
	}
}

func TestParseExprDepthLimit(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("(", 32) + "{{a}}" + strings.Repeat(")", 32),
		strings.Repeat("!", 32) + "{{a}}",
		strings.Repeat("not (", 16) + "{{a}} == 1" + strings.Repeat(")", 16),
	} {
		e, err := ParseExpr(in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", in, err)
			continue
		}
		if _, err := ParseExpr(e.String()); err != nil {
			t.Errorf("canonical form %q: %v", e.String(), err)
		}
	}
}

func TestExprEval(t *testing.T) {
	vars := map[string]any{
		"age":            float64(21),
		"ageText":        " 21 ",
		"minor":          float64(12),
		"plan":           "Gold ",
		"email":          "ann@example.com",
		"blank":          "   ",
		"zero":           float64(0),
		"count":          3,
		"big":            int64(1) << 40,
		"price":          json.Number("9.50"),
		"consent":        true,
		"declined":       false,
		"consentText":    "TRUE",
		"nothing":        nil,
		"notes":          "Caller says it is URGENT, call back",
		"tags":           []any{"vip", float64(7), "Spanish"},
		"noTags":         []any{},
		"strings":        []string{"a", "B"},
		"emptyMap":       map[string]any{},
		"booking":        map[string]any{"status": "confirmed", "guests": float64(4), "room": map[string]any{"floor": "3"}},
		"booking.status": "flat wins",
		"caller":         map[string]any{"name": "Ann"},
		"word":           "apple",
		"sci":            "+1.5E3",
		"falseText":      " False ",
		"nan":            math.NaN(),
		"small":          uint8(2),
		"ratio":          float32(0.5),
		"ids":            []int{4, 5},
		"headers":        map[string]string{"lang": "en"},
		"nilMap":         map[string]any(nil),
		"nilPointer":     (*int)(nil),
		"badNumber":      json.Number("oops"),
	}
	tests := []struct {
		expr string
		want bool
	}{
		// presence and truthiness
		{`{{email}}`, true},
		{`!{{email}}`, false},
		{`{{missing}}`, false},
		{`!{{missing}}`, true},
		{`{{blank}}`, false},
		{`{{zero}}`, false},
		{`{{count}}`, true},
		{`{{nothing}}`, false},
		{`{{declined}}`, false},
		{`{{noTags}}`, false},
		{`{{tags}}`, true},
		{`{{emptyMap}}`, false},
		{`{{booking}}`, true},
		{`true`, true},
		{`false`, false},
		{`null`, false},
		{`0`, false},
		{`-2.5`, true},
		{`""`, false},
		{`"x"`, true},

		// numbers and numeric strings
		{`{{age}} >= 18`, true},
		{`{{minor}} >= 18`, false},
		{`{{ageText}} >= 18`, true},
		{`{{ageText}} == 21`, true},
		{`{{age}} == "21.0"`, true},
		{`{{age}} == "twenty-one"`, false},
		{`{{age}} != "twenty-one"`, true},
		{`{{count}} == 3`, true},
		{`{{count}} < 3.5`, true},
		{`{{big}} > 1000000000`, true},
		{`{{price}} == 9.5`, true},
		{`{{price}} > "9"`, true},
		{`"10" > "9"`, true}, // numeric strings order as numbers
		{`"10" == "10.0"`, false},
		{`{{age}} > "abc"`, false},
		{`-0 == 0`, true},
		{`1 <= 1`, true},
		{`2 < 1`, false},

		// strings
		{`{{plan}} == "gold"`, true},
		{`{{plan}} == " GOLD"`, true},
		{`{{plan}} != "silver"`, true},
		{`{{word}} < "Banana"`, true},
		{`{{word}} > "Banana"`, false},
		{`"b" >= "B"`, true},

		// booleans
		{`{{consent}} == true`, true},
		{`{{consent}} == "true"`, true},
		{`{{consentText}} == true`, true},
		{`{{consentText}} != false`, true},
		{`{{declined}} == false`, true},
		{`{{consent}} == 1`, false},
		{`{{consent}} > false`, false},

		// null and missing
		{`{{missing}} == null`, true},
		{`{{nothing}} == null`, true},
		{`{{missing}} == {{nothing}}`, true},
		{`{{email}} == null`, false},
		{`{{email}} != null`, true},
		{`{{zero}} == null`, false},
		{`{{missing}} == ""`, false},
		{`{{missing}} < 1`, false},
		{`{{missing}} >= 0`, false},
		{`{{missing}} contains "a"`, false},
		{`{{missing}} != 1`, true},

		// nested and flat dotted names
		{`{{booking.status}} == "flat wins"`, true},
		{`{{booking.guests}} > 2`, true},
		{`{{booking.room.floor}} == 3`, true},
		{`{{booking.room.door}}`, false},
		{`{{caller.name}} == "ann"`, true},
		{`{{caller.name.first}}`, false},
		{`{{email.domain}}`, false},

		// contains
		{`{{notes}} contains "urgent"`, true},
		{`{{notes}} contains "Call Back"`, true},
		{`{{notes}} contains "refund"`, false},
		{`{{tags}} contains "VIP"`, true},
		{`{{tags}} contains 7`, true},
		{`{{tags}} contains "7"`, true},
		{`{{tags}} contains "English"`, false},
		{`{{strings}} contains "b"`, true},
		{`{{age}} contains 2`, false},
		{`"order 42" contains 42`, true},
		{`"x" contains null`, false},
		{`{{booking}} contains "status"`, false},

		// other kinds a Go caller may pass
		{`{{sci}} == 1500`, true},
		{`{{sci}} > "1e2"`, true},
		{`"1e" == 1`, false},
		{`". 5" == 0.5`, false},
		{`"+" == 0`, false},
		{`" .5 " == 0.5`, true},
		{`"0x10" == 16`, false},
		{`"inf" > 1`, false},
		{`{{falseText}} == false`, true},
		{`{{falseText}}`, true}, // a non-empty string is present, whatever it says
		{`{{nan}}`, false},
		{`{{nan}} == {{nan}}`, false},
		{`{{nan}} < 1 || {{nan}} >= 1`, false},
		{`{{small}} == 2 && {{small}}`, true},
		{`{{ratio}} == 0.5`, true},
		{`{{ids}} contains 5`, true},
		{`{{ids}} contains "4"`, true},
		{`{{ids}} contains 6`, false},
		{`{{ids}}`, true},
		{`"v2" contains {{small}}`, true},
		{`"0.5" contains {{ratio}}`, true},
		{`"yes" contains {{consent}}`, false},
		{`"true" contains {{consent}}`, true},
		{`"x" contains {{tags}}`, false},
		{`{{headers.lang}} == "EN"`, true},
		{`{{headers.region}}`, false},
		{`{{headers.lang.x}}`, false},
		{`{{nilMap}}`, false},
		{`{{nilPointer}}`, false},
		{`{{nilMap.x}}`, false},
		{`{{badNumber}} == "oops"`, false},
		{`{{badNumber}} == 0`, false},
		{`{{badNumber}}`, true},

		// precedence and grouping
		{`{{age}} >= 18 && {{consent}} == true`, true},
		{`{{minor}} >= 18 && {{consent}}`, false},
		{`{{minor}} >= 18 || {{consent}}`, true},
		{`false && false || true`, true}, // (false && false) || true
		{`true || false && false`, true}, // true || (false && false)
		{`(true || false) && false`, false},
		{`not false and false`, false}, // (not false) and false
		{`!{{email}} || {{consent}}`, true},
		{`not {{age}} == 21`, false}, // not (age == 21)
		{`!{{zero}} == 1`, true},     // not (zero == 1), not (!zero) == 1
		{`(!{{zero}}) == 1`, false},
		{`({{a}} > 1 || {{email}}) and not {{missing}}`, true},
		{`({{age}} > 1) == true`, true},
		{`!!{{email}}`, true},
	}
	for _, tt := range tests {
		e, err := ParseExpr(tt.expr)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tt.expr, err)
			continue
		}
		if got := e.Eval(vars); got != tt.want {
			t.Errorf("%s = %v, want %v", tt.expr, got, tt.want)
		}
		canonical, err := ParseExpr(e.String())
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", e.String(), err)
			continue
		}
		if got := canonical.Eval(vars); got != tt.want {
			t.Errorf("canonical %s = %v, want %v", e.String(), got, tt.want)
		}
	}
}

func TestExprEvalShortCircuits(t *testing.T) {
	// Short-circuiting is invisible in the result; what matters is that the
	// right side may be anything at all when the left decides.
	e, err := ParseExpr(`{{ok}} || {{deep.a.b.c}} contains {{list}}`)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Eval(map[string]any{"ok": true}) {
		t.Error("true || ... = false")
	}
	if e.Eval(nil) {
		t.Error("with no variables: true")
	}
	var nilExpr *Expr
	if nilExpr.Eval(nil) || nilExpr.String() != "" || nilExpr.Variables() != nil {
		t.Error("a nil *Expr is not inert")
	}
}

func TestExprVariables(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`true`, nil},
		{`{{email}}`, []string{"email"}},
		{`{{b}} == {{a}} && ({{b}} || {{ c.d }}) or not {{a}} contains {{e}}`, []string{"b", "a", "c.d", "e"}},
		{`{{Name}} == {{name}}`, []string{"Name", "name"}},
	}
	for _, tt := range tests {
		e, err := ParseExpr(tt.expr)
		if err != nil {
			t.Fatalf("ParseExpr(%q): %v", tt.expr, err)
		}
		got := e.Variables()
		if !slices.Equal(got, tt.want) {
			t.Errorf("Variables(%q) = %q, want %q", tt.expr, got, tt.want)
		}
		if len(got) > 0 {
			got[0] = "changed"
			if e.Variables()[0] == "changed" {
				t.Error("Variables shares its slice with the expression")
			}
		}
	}
}
