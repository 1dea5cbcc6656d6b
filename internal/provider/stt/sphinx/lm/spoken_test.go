package lm

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"testing"
)

// copiedFromBench are the declarations numbers.go and spoken.go copy from
// bench/wer (numbers.go, normalise.go): the model must spell numbers the
// way the benchmark scores them.
var copiedFromBench = []string{
	"ones", "tens", "scales", "cardinal", "ordinalOf", "digitsAloud", "parseDigits", "number", "allDigits",
	"symbols", "spoken", "isWordRune", "letterDigitRuns", "isDigit", "money", "clock",
}

func TestWordingMatchesBench(t *testing.T) {
	ours := decls(t, "numbers.go", "spoken.go")
	bench := decls(t, filepath.Join("../../../../../bench/wer", "numbers.go"), filepath.Join("../../../../../bench/wer", "normalise.go"))
	for _, name := range copiedFromBench {
		switch {
		case ours[name] == "":
			t.Errorf("%s is missing here", name)
		case bench[name] == "":
			t.Errorf("%s is missing from bench/wer: update copiedFromBench", name)
		case ours[name] != bench[name]:
			t.Errorf("%s differs from bench/wer's: change both together", name)
		}
	}
}

// decls prints each top-level func and var of files (without comments),
// by name.
func decls(t *testing.T, files ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			var b bytes.Buffer
			switch d := d.(type) {
			case *ast.FuncDecl:
				printer.Fprint(&b, fset, d)
				out[d.Name.Name] = b.String()
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if v, ok := s.(*ast.ValueSpec); ok {
						for i, n := range v.Names {
							b.Reset()
							if i < len(v.Values) {
								printer.Fprint(&b, fset, v.Values[i])
							}
							out[n.Name] = b.String()
						}
					}
				}
			}
		}
	}
	return out
}
