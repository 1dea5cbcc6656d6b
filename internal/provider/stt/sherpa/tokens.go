package sherpa

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"unicode/utf8"
)

// maxTokensFile bounds the token table read (real ones are 5 to 100 KB).
const maxTokensFile = 16 << 20

// checkTokens reads the token table at path; see parseTokens.
func checkTokens(path string, ctc bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Size() > maxTokensFile {
		return fmt.Errorf("%s: %d bytes is not a token table", path, fi.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := parseTokens(b, ctc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// parseTokens checks a sherpa-onnx token table: UTF-8 lines of "<symbol>
// <id>" (the id a non-negative integer after the last space or tab),
// at least one. A CTC model's table must name its blank (<blk>, <eps> or
// <blank>): the library exits the process without one.
func parseTokens(b []byte, ctc bool) error {
	if !utf8.Valid(b) {
		return errors.New("not UTF-8 text")
	}
	n, blank := 0, false
	for i, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		cut := bytes.LastIndexAny(line, " \t")
		if cut < 0 {
			return fmt.Errorf("line %d: %q is not \"<symbol> <id>\"", i+1, line)
		}
		if id, err := strconv.ParseUint(string(line[cut+1:]), 10, 31); err != nil {
			return fmt.Errorf("line %d: id %q: %w", i+1, line[cut+1:], err)
		} else if id > 1<<24 {
			return fmt.Errorf("line %d: id %d is out of range", i+1, id)
		}
		switch string(bytes.TrimSpace(line[:cut])) {
		case "<blk>", "<eps>", "<blank>":
			blank = true
		}
		n++
	}
	if n == 0 {
		return errors.New("no tokens")
	}
	if ctc && !blank {
		return errors.New("no <blk>, <eps> or <blank> token (a CTC model's table names its blank)")
	}
	return nil
}
