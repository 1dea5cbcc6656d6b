package flow

import "errors"

// Expr is a parsed edge expression. (Placeholder until the expression
// language lands: every expression is refused.)
type Expr struct{}

// ParseExpr parses s.
func ParseExpr(s string) (*Expr, error) { return nil, errors.New("expressions are not supported yet") }

// Eval is whether the expression holds for vars.
func (e *Expr) Eval(vars map[string]any) bool { return false }
