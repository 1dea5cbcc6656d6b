package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxExprDepth bounds how deeply parentheses and negations nest. Expressions
// come from customers, and parsing, printing and evaluating all recurse.
const maxExprDepth = 32

// Expr is a parsed edge expression.
type Expr struct {
	root node
	vars []string
}

// ParseExpr parses s; the error says what is wrong and where (character offset, 1-based column), e.g. `unexpected ")" at column 12`, `unclosed {{ at column 1`, `expected an operand after ">=" at column 9`, `expression nests deeper than 32`, `empty expression`.
func ParseExpr(s string) (*Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	if toks[0].kind == tokEOF {
		return nil, errors.New("empty expression")
	}
	p := &parser{src: s, toks: toks}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.unexpected(t)
	}
	e := &Expr{root: root}
	walk(root, func(n node) {
		if v, ok := n.(variable); ok && !slices.Contains(e.vars, v.name) {
			e.vars = append(e.vars, v.name)
		}
	})
	return e, nil
}

// Eval is whether the expression holds for vars.
func (e *Expr) Eval(vars map[string]any) bool {
	if e == nil || e.root == nil {
		return false
	}
	return truthy(e.root.eval(vars))
}

// Variables are the variable names the expression reads, in order of first appearance, without duplicates.
func (e *Expr) Variables() []string {
	if e == nil {
		return nil
	}
	return slices.Clone(e.vars)
}

// String is the expression in a canonical form (parseable again to an equal expression).
func (e *Expr) String() string {
	if e == nil || e.root == nil {
		return ""
	}
	var b strings.Builder
	write(&b, e.root)
	return b.String()
}

// The syntax tree. and/or are n-ary and never directly contain their own
// kind, so that the canonical form needs no parentheses the source lacked.
type (
	node interface {
		eval(vars map[string]any) any
	}
	literal  struct{ v any } // float64, string, bool or nil
	variable struct{ name string }
	notExpr  struct{ x node }
	andExpr  struct{ xs []node }
	orExpr   struct{ xs []node }
	compare  struct {
		op   string
		l, r node
	}
)

func (n literal) eval(map[string]any) any       { return n.v }
func (n variable) eval(vars map[string]any) any { return lookup(vars, n.name) }
func (n notExpr) eval(vars map[string]any) any  { return !truthy(n.x.eval(vars)) }

func (n andExpr) eval(vars map[string]any) any {
	for _, x := range n.xs {
		if !truthy(x.eval(vars)) {
			return false
		}
	}
	return true
}

func (n orExpr) eval(vars map[string]any) any {
	for _, x := range n.xs {
		if truthy(x.eval(vars)) {
			return true
		}
	}
	return false
}

func (n compare) eval(vars map[string]any) any {
	l, r := n.l.eval(vars), n.r.eval(vars)
	switch n.op {
	case "==":
		return equal(l, r)
	case "!=":
		return !equal(l, r)
	case "contains":
		return contains(l, r)
	default:
		return order(n.op, l, r)
	}
}

func walk(n node, visit func(node)) {
	visit(n)
	switch n := n.(type) {
	case notExpr:
		walk(n.x, visit)
	case andExpr:
		for _, x := range n.xs {
			walk(x, visit)
		}
	case orExpr:
		for _, x := range n.xs {
			walk(x, visit)
		}
	case compare:
		walk(n.l, visit)
		walk(n.r, visit)
	}
}

// write prints n canonically: symbols for operators, lower-case keywords,
// double-quoted strings, and parentheses only where the grammar needs them
// (never more deeply nested than the source, so the result parses again).
func write(b *strings.Builder, n node) {
	switch n := n.(type) {
	case literal:
		writeLiteral(b, n.v)
	case variable:
		b.WriteString("{{" + n.name + "}}")
	case notExpr:
		if negatesComparison(n) {
			// "!" reads as binding tighter than ==, and parentheses here would
			// nest deeper than the source did; "not a == b" reads right.
			b.WriteString("not ")
			write(b, n.x)
			return
		}
		b.WriteString("!")
		writeGrouped(b, n.x, func(x node) bool { _, isNot := x.(notExpr); return isAtom(x) || isNot })
	case andExpr:
		for i, x := range n.xs {
			if i > 0 {
				b.WriteString(" && ")
			}
			writeGrouped(b, x, func(x node) bool { _, isOr := x.(orExpr); return !isOr })
		}
	case orExpr:
		for i, x := range n.xs {
			if i > 0 {
				b.WriteString(" || ")
			}
			write(b, x)
		}
	case compare:
		writeGrouped(b, n.l, isAtom)
		b.WriteString(" " + n.op + " ")
		writeGrouped(b, n.r, isAtom)
	}
}

func writeGrouped(b *strings.Builder, n node, bare func(node) bool) {
	if bare(n) {
		write(b, n)
		return
	}
	b.WriteString("(")
	write(b, n)
	b.WriteString(")")
}

func isAtom(n node) bool {
	switch n.(type) {
	case literal, variable:
		return true
	}
	return false
}

// negatesComparison is whether a chain of negations ends in a comparison.
func negatesComparison(n notExpr) bool {
	for {
		switch x := n.x.(type) {
		case notExpr:
			n = x
		case compare:
			return true
		default:
			return false
		}
	}
}

func writeLiteral(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		b.WriteString(formatNumber(v))
	case string:
		b.WriteByte('"')
		for i := 0; i < len(v); i++ {
			switch c := v[i]; c {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	}
}

// formatNumber writes f without an exponent, which the grammar lacks.
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// column is the 1-based character column of byte offset off in s.
func column(s string, off int) int { return utf8.RuneCountInString(s[:off]) + 1 }

// quote shows a piece of the customer's text in a message, shortened.
func quote(s string) string {
	const limit = 30
	if utf8.RuneCountInString(s) > limit {
		i := 0
		for range limit {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
		s = s[:i] + "…"
	}
	return strconv.Quote(s)
}

// Lexing.

type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokVar
	tokLiteral
	tokLParen
	tokRParen
	tokNot
	tokAnd
	tokOr
	tokCompare
)

type token struct {
	kind     tokenKind
	pos, end int    // byte offsets in the source
	name     string // tokVar: the variable; tokCompare: the operator
	v        any    // tokLiteral: the value
}

var keywords = map[string]token{
	"or":       {kind: tokOr},
	"and":      {kind: tokAnd},
	"not":      {kind: tokNot},
	"contains": {kind: tokCompare, name: "contains"},
	"true":     {kind: tokLiteral, v: true},
	"false":    {kind: tokLiteral, v: false},
	"null":     {kind: tokLiteral, v: nil},
}

var symbols = []token{ // two-character symbols before their one-character prefixes
	{kind: tokCompare, name: "=="},
	{kind: tokCompare, name: "!="},
	{kind: tokCompare, name: "<="},
	{kind: tokCompare, name: ">="},
	{kind: tokAnd, name: "&&"},
	{kind: tokOr, name: "||"},
	{kind: tokCompare, name: "<"},
	{kind: tokCompare, name: ">"},
	{kind: tokNot, name: "!"},
	{kind: tokLParen, name: "("},
	{kind: tokRParen, name: ")"},
}

// misspelt symbols, with what the customer probably meant.
var hints = map[byte]string{
	'=': "use == to compare",
	'&': "use && or and",
	'|': "use || or or",
}

func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return append(toks, token{kind: tokEOF, pos: i, end: i}), nil
		}
		t, err := lexToken(s, i)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		i = t.end
	}
}

func lexToken(s string, i int) (token, error) {
	c := s[i]
	switch {
	case strings.HasPrefix(s[i:], "{{"):
		return lexVariable(s, i)
	case c == '"' || c == '\'':
		return lexString(s, i)
	case c == '-' || isDigit(c):
		return lexNumber(s, i)
	case isLetter(c):
		j := i
		for j < len(s) && (isLetter(s[j]) || isDigit(s[j]) || s[j] == '.') {
			j++
		}
		word := s[i:j]
		t, ok := keywords[strings.ToLower(word)]
		if !ok {
			if validName(word) && len(word) <= 64 {
				return token{}, fmt.Errorf("unexpected word %s at column %d (write variables as {{%s}})", quote(word), column(s, i), word)
			}
			return token{}, fmt.Errorf("unexpected word %s at column %d", quote(word), column(s, i))
		}
		t.pos, t.end = i, j
		return t, nil
	}
	for _, t := range symbols {
		if strings.HasPrefix(s[i:], t.name) {
			t.pos, t.end = i, i+len(t.name)
			if t.kind != tokCompare {
				t.name = ""
			}
			return t, nil
		}
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if hint, ok := hints[c]; ok {
		return token{}, fmt.Errorf("unexpected %s at column %d (%s)", quote(s[i:i+size]), column(s, i), hint)
	}
	if r == utf8.RuneError && size == 1 {
		return token{}, fmt.Errorf("unexpected byte %#x at column %d", c, column(s, i))
	}
	return token{}, fmt.Errorf("unexpected %s at column %d", quote(s[i:i+size]), column(s, i))
}

func lexVariable(s string, i int) (token, error) {
	n := strings.Index(s[i+2:], "}}")
	if n < 0 {
		return token{}, fmt.Errorf("unclosed {{ at column %d", column(s, i))
	}
	name := strings.Trim(s[i+2:i+2+n], " \t")
	switch {
	case name == "":
		return token{}, fmt.Errorf("empty variable name at column %d", column(s, i))
	case !validName(name):
		return token{}, fmt.Errorf("invalid variable name %s at column %d (use letters, digits and _, with dots between parts, like {{booking.status}})", quote(name), column(s, i))
	}
	return token{kind: tokVar, pos: i, end: i + 2 + n + 2, name: name}, nil
}

// validName is whether s is dot-separated parts of letters, digits and _,
// each part starting with a letter or _.
func validName(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || isDigit(part[0]) {
			return false
		}
		for i := 0; i < len(part); i++ {
			if !isLetter(part[i]) && !isDigit(part[i]) {
				return false
			}
		}
	}
	return true
}

func lexString(s string, i int) (token, error) {
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == q:
			return token{kind: tokLiteral, pos: i, end: j + 1, v: b.String()}, nil
		case c != '\\':
			b.WriteByte(c)
		case j+1 == len(s):
			// an unclosed string, reported below
		default:
			j++
			switch e := s[j]; e {
			case '"', '\'', '\\':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				_, size := utf8.DecodeRuneInString(s[j:])
				return token{}, fmt.Errorf(`unknown escape %s in a string at column %d (use \" \' \\ \n or \t)`, quote(s[j-1:j+size]), column(s, j-1))
			}
		}
	}
	return token{}, fmt.Errorf("unclosed string at column %d", column(s, i))
}

func lexNumber(s string, i int) (token, error) {
	j := i
	if s[j] == '-' {
		j++
		if j == len(s) || !isDigit(s[j]) {
			return token{}, fmt.Errorf(`unexpected "-" at column %d (a negative number is written -5)`, column(s, i))
		}
	}
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '.' {
		j++
		if j == len(s) || !isDigit(s[j]) {
			return token{}, fmt.Errorf(`expected a digit after "." at column %d`, column(s, j-1))
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (isLetter(s[j]) || s[j] == '.') {
		k := j
		for k < len(s) && (isLetter(s[k]) || isDigit(s[k]) || s[k] == '.') {
			k++
		}
		return token{}, fmt.Errorf("invalid number %s at column %d", quote(s[i:k]), column(s, i))
	}
	f, err := strconv.ParseFloat(s[i:j], 64)
	if err != nil { // only out of range: the syntax was checked above
		return token{}, fmt.Errorf("number at column %d is too large", column(s, i))
	}
	return token{kind: tokLiteral, pos: i, end: j, v: f}, nil
}

func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }

// Parsing: recursive descent over the grammar
//
//	or = and { ("||" | "or") and }
//	and = not { ("&&" | "and") not }
//	not = ("!" | "not") not | cmp
//	cmp = operand [ op operand ]
//	operand = variable | number | string | true | false | null | "(" or ")"

type parser struct {
	src   string
	toks  []token
	pos   int
	depth int
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *parser) text(t token) string { return p.src[t.pos:t.end] }

// enter goes one level deeper into parentheses or negations.
func (p *parser) enter() error {
	p.depth++
	if p.depth > maxExprDepth {
		return fmt.Errorf("expression nests deeper than %d", maxExprDepth)
	}
	return nil
}

func (p *parser) unexpected(t token) error {
	msg := fmt.Sprintf("unexpected %s at column %d", p.describe(t), column(p.src, t.pos))
	if t.kind == tokCompare { // a comparison right after a complete one
		msg += " (join comparisons with && or ||)"
	}
	return errors.New(msg)
}

func (p *parser) parseOr() (node, error) {
	return p.parseList(tokOr, p.parseAnd, func(xs []node) node { return orExpr{xs} }, func(n node) ([]node, bool) {
		x, ok := n.(orExpr)
		return x.xs, ok
	})
}

func (p *parser) parseAnd() (node, error) {
	return p.parseList(tokAnd, p.parseNot, func(xs []node) node { return andExpr{xs} }, func(n node) ([]node, bool) {
		x, ok := n.(andExpr)
		return x.xs, ok
	})
}

// parseList parses operands joined by sep, flattening parenthesized lists of
// the same kind: (a && b) && c is a && b && c.
func (p *parser) parseList(sep tokenKind, operand func() (node, error), build func([]node) node, split func(node) ([]node, bool)) (node, error) {
	var xs []node
	for {
		x, err := operand()
		if err != nil {
			return nil, err
		}
		if inner, ok := split(x); ok {
			xs = append(xs, inner...)
		} else {
			xs = append(xs, x)
		}
		if p.peek().kind != sep {
			break
		}
		p.next()
	}
	if len(xs) == 1 {
		return xs[0], nil
	}
	return build(xs), nil
}

func (p *parser) parseNot() (node, error) {
	if p.peek().kind != tokNot {
		return p.parseCmp()
	}
	p.next()
	if err := p.enter(); err != nil {
		return nil, err
	}
	x, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	p.depth--
	return notExpr{x}, nil
}

func (p *parser) parseCmp() (node, error) {
	l, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokCompare {
		return l, nil
	}
	op := p.next()
	r, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	return compare{op: op.name, l: l, r: r}, nil
}

func (p *parser) parseOperand() (node, error) {
	t := p.peek()
	switch t.kind {
	case tokVar:
		p.next()
		return variable{t.name}, nil
	case tokLiteral:
		p.next()
		return literal{t.v}, nil
	case tokLParen:
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		x, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		switch end := p.peek(); end.kind {
		case tokRParen:
			p.next()
		case tokEOF:
			return nil, fmt.Errorf("unclosed ( at column %d", column(p.src, t.pos))
		default:
			return nil, p.unexpected(end)
		}
		p.depth--
		return x, nil
	}
	if p.pos == 0 {
		return nil, p.unexpected(t)
	}
	prev := p.toks[p.pos-1]
	if t.kind == tokEOF {
		return nil, fmt.Errorf("expected an operand after %s at column %d", quote(p.text(prev)), column(p.src, prev.pos))
	}
	return nil, fmt.Errorf("expected an operand after %s, found %s at column %d", quote(p.text(prev)), p.describe(t), column(p.src, t.pos))
}

// describe names a token in a message, keeping quotes around quotes out.
func (p *parser) describe(t token) string {
	if s, ok := t.v.(string); ok {
		return "string " + quote(s)
	}
	return quote(p.text(t))
}

// Values. Variables come from JSON (float64, string, bool, nil, maps and
// arrays), and from Go code as other numeric kinds; customers' values are
// loosely typed ("18" from a speech transcript is 18), so comparisons are
// forgiving and a missing variable is null.

// lookup finds name in vars: the exact key first ("booking.status" may be
// stored flat), else by walking nested maps along the dotted parts.
func lookup(vars map[string]any, name string) any {
	if v, ok := vars[name]; ok {
		return v
	}
	if !strings.Contains(name, ".") {
		return nil
	}
	var cur any = vars
	for part := range strings.SplitSeq(name, ".") {
		switch m := cur.(type) {
		case map[string]any:
			cur = m[part]
		case map[string]string:
			v, ok := m[part]
			if !ok {
				return nil
			}
			cur = v
		default:
			return nil
		}
	}
	return cur
}

// truthy is whether v holds as a condition: present and not empty, zero or false.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return strings.TrimSpace(v) != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	if f, ok := number(v); ok {
		return f != 0 && f == f // NaN is no number to hold
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return rv.Len() > 0
	case reflect.String:
		return strings.TrimSpace(rv.String()) != ""
	case reflect.Pointer, reflect.Interface:
		return !rv.IsNil()
	}
	return true
}

// number is v as a number, for numeric kinds only.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		return numericString(string(n))
	}
	return 0, false
}

// numericString is s as a number when, trimmed, it is written like one:
// an optional sign, digits with an optional fraction, an optional exponent.
// (Not strconv's wider syntax: "inf", "nan" and "0x1p3" are words here.)
func numericString(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	i, digits := 0, 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for ; i < len(s) && isDigit(s[i]); i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(s[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == exp {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64) // out of range is ±Inf or 0, still a number
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// numeric is v as a number, counting numeric strings.
func numeric(v any) (float64, bool) {
	if s, ok := v.(string); ok {
		return numericString(s)
	}
	return number(v)
}

// equal is the == rule: numbers numerically (a numeric string against a
// number counts as its number), strings trimmed and case-insensitively,
// booleans with booleans or with "true"/"false", null only with null.
func equal(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if aStr && bStr {
		return strings.EqualFold(strings.TrimSpace(as), strings.TrimSpace(bs))
	}
	if an, ok := number(a); ok {
		bn, ok := numeric(b)
		return ok && an == bn
	}
	if bn, ok := number(b); ok {
		an, ok := numeric(a)
		return ok && an == bn
	}
	ab, aBool := a.(bool)
	bb, bBool := b.(bool)
	switch {
	case aBool && bBool:
		return ab == bb
	case aBool && bStr:
		v, ok := boolString(bs)
		return ok && v == ab
	case aStr && bBool:
		v, ok := boolString(as)
		return ok && v == bb
	}
	return false
}

func boolString(s string) (v, ok bool) {
	switch s = strings.TrimSpace(s); {
	case strings.EqualFold(s, "true"):
		return true, true
	case strings.EqualFold(s, "false"):
		return false, true
	}
	return false, false
}

// order is the <, <=, >, >= rule: numbers (numeric strings included)
// numerically, other strings case-insensitively; anything else is false.
func order(op string, a, b any) bool {
	var c int
	an, aNum := numeric(a)
	bn, bNum := numeric(b)
	as, aStr := a.(string)
	bs, bStr := b.(string)
	switch {
	case aNum && bNum:
		if an != an || bn != bn { // NaN is not ordered
			return false
		}
		c = cmpFloat(an, bn)
	case aStr && bStr:
		c = strings.Compare(strings.ToLower(strings.TrimSpace(as)), strings.ToLower(strings.TrimSpace(bs)))
	default:
		return false
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// contains is the contains rule: a case-insensitive substring of a string,
// or an element of an array by the == rule.
func contains(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return false
	case string:
		sub, ok := stringForm(b)
		return ok && strings.Contains(strings.ToLower(a), strings.ToLower(sub))
	case []any:
		return slices.ContainsFunc(a, func(x any) bool { return equal(x, b) })
	}
	rv := reflect.ValueOf(a)
	if k := rv.Kind(); k != reflect.Slice && k != reflect.Array {
		return false
	}
	for i := range rv.Len() {
		if equal(rv.Index(i).Interface(), b) {
			return true
		}
	}
	return false
}

// stringForm is how a value reads as text, for contains.
func stringForm(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case json.Number:
		return string(v), true
	case int:
		return strconv.Itoa(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	}
	if f, ok := number(v); ok {
		return formatNumber(f), true
	}
	return "", false
}
