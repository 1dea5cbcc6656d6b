package campaign

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parley-voice/parley/internal/invalid"
)

// Columns of a recipients CSV with a meaning of their own; every other
// column is a variable named by its header.
const (
	colToNumber    = "toNumber"
	colPhoneNumber = "phone_number" // accepted for toNumber
	colTimezone    = "timezone"
)

var errTooLarge = errors.New("body too large")

// limitReader reads at most MaxCSVBytes, then fails with errTooLarge: the
// HTTP layer caps the body too, but a parser of untrusted bytes must never
// read without bound on its own.
type limitReader struct {
	r    io.Reader
	left int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more than allowed tells a body of exactly MaxCSVBytes
		// from a longer one.
		var one [1]byte
		if n, _ := io.ReadFull(l.r, one[:]); n > 0 {
			return 0, errTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// csvErrors collects the broken fields of an upload: the first maxDetails,
// and how many more lines are refused.
type csvErrors struct {
	l         invalid.List
	lastLine  int // the last line recorded, to count lines not fields
	moreLines int
}

func (e *csvErrors) add(line int, field, format string, args ...any) {
	if e.l.Len() >= maxDetails {
		if line != e.lastLine {
			e.moreLines++
		}
	} else {
		e.l.AddLine(line, field, format, args...)
	}
	e.lastLine = line
}

func (e *csvErrors) empty() bool { return e.l.Empty() }

func (e *csvErrors) err() error {
	err := e.l.Err()
	if err != nil && e.moreLines > 0 {
		ie := err.(*invalid.Error)
		ie.Fields = capFields(ie.Fields, e.moreLines, "lines")
	}
	return err
}

// csvColumns is what each column of the header means.
type csvColumns struct {
	names    []string
	toNumber int
	timezone int // -1: none
}

// ParseCSV checks a UTF-8 CSV of recipients: an optional BOM, CRLF or LF,
// RFC 4180 quotes (commas and newlines inside them), empty lines (and lines
// whose every cell is empty) skipped; a header row holding a toNumber
// column (or phone_number), an optional timezone column (an empty cell:
// none), and other columns, which become string variables named by their
// header. Numbers are trimmed of spaces and must be E.164. Errors are an
// *invalid.Error whose fields carry the file's line (the header is line 1)
// and "toNumber", "timezone", a column's name, or "body" for the file as a
// whole: no toNumber column, more than MaxCSVRows rows or MaxCSVBytes bytes,
// invalid UTF-8, a NUL, a malformed quote, a row with too many or too few
// cells. At most 100 are listed, then one saying how many more lines are
// refused.
func ParseCSV(r io.Reader) (Batch, error) {
	br := bufio.NewReaderSize(&limitReader{r: r, left: MaxCSVBytes}, 64<<10)
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\uFEFF")) {
		br.Discard(3) //nolint:errcheck // peeked: cannot fail
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true

	var errs csvErrors
	var cols *csvColumns
	var b Batch
	seen := map[string]struct{}{}
	rows := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			readError(&errs, err)
			return Batch{}, errs.err()
		}
		line, _ := cr.FieldPos(0)
		if cols == nil { // the first record that is not an empty line
			if textProblem(&errs, cr, rec) {
				return Batch{}, errs.err()
			}
			if cols = readHeader(&errs, line, rec); cols == nil {
				return Batch{}, errs.err()
			}
			continue
		}
		if blankRecord(rec) {
			continue
		}
		if rows++; rows > MaxCSVRows {
			errs.add(line, "body", "must hold at most %d rows", MaxCSVRows)
			return Batch{}, errs.err()
		}
		if textProblem(&errs, cr, rec) {
			continue
		}
		if len(rec) != len(cols.names) {
			errs.add(line, "body", "has %d cells, the header has %d columns", len(rec), len(cols.names))
			continue
		}
		cols.row(&errs, &b, seen, line, rec)
	}
	switch {
	case !errs.empty():
		return Batch{}, errs.err()
	case cols == nil || rows == 0:
		return Batch{}, invalid.One("body", "must hold a header row and at least one recipient")
	}
	return b, nil
}

// readError records what stopped the reading: the size cap, a malformed
// quote, or the reader's own failure.
func readError(errs *csvErrors, err error) {
	var pe *csv.ParseError
	switch {
	case errors.Is(err, errTooLarge):
		errs.add(0, "body", "must be at most %d MiB", MaxCSVBytes>>20)
	case errors.As(err, &pe):
		msg := pe.Err.Error()
		if pe.Line != pe.StartLine {
			msg = fmt.Sprintf("%s (at line %d, column %d)", msg, pe.Line, pe.Column)
		}
		errs.add(pe.StartLine, "body", "%s", msg)
	default:
		errs.add(0, "body", "could not be read: %v", err)
	}
}

// textProblem records, and reports, a cell of rec that no store can hold:
// invalid UTF-8 or a NUL.
func textProblem(errs *csvErrors, cr *csv.Reader, rec []string) bool {
	for i, cell := range rec {
		if p := invalid.Text(cell); p != "" {
			line, _ := cr.FieldPos(i)
			errs.add(line, "body", "%s", p)
			return true
		}
	}
	return false
}

// readHeader reads the header row, on line (1 unless empty lines come first),
// or records why it cannot be used.
func readHeader(errs *csvErrors, line int, rec []string) *csvColumns {
	c := &csvColumns{names: make([]string, len(rec)), toNumber: -1, timezone: -1}
	ok := true
	where := map[string]int{}
	for i, name := range rec {
		name = strings.TrimSpace(name)
		c.names[i] = name
		key := name
		if name == colPhoneNumber {
			key = colToNumber
		}
		switch j, dup := where[key]; {
		case name == "":
			errs.add(line, "body", "column %d has no name in the header", i+1)
			ok = false
		case dup:
			errs.add(line, name, "names the same column as column %d (%s) of the header", j+1, c.names[j])
			ok = false
		default:
			where[key] = i
		}
	}
	if i, found := where[colToNumber]; found {
		c.toNumber = i
	} else {
		errs.add(line, "body", "must have a %s (or %s) column in its header row", colToNumber, colPhoneNumber)
		ok = false
	}
	if i, found := where[colTimezone]; found {
		c.timezone = i
	}
	if !ok {
		return nil
	}
	return c
}

func blankRecord(rec []string) bool {
	for _, cell := range rec {
		if strings.TrimSpace(cell) != "" {
			return false
		}
	}
	return true
}

// row checks one data row and adds its recipient to b.
func (c *csvColumns) row(errs *csvErrors, b *Batch, seen map[string]struct{}, line int, rec []string) {
	ok := true
	to := strings.TrimSpace(rec[c.toNumber])
	if !invalid.IsE164(to) {
		errs.add(line, colToNumber, "%s", msgE164)
		ok = false
	}
	var tz *string
	if c.timezone >= 0 {
		if v := strings.TrimSpace(rec[c.timezone]); v != "" {
			if isTimezone(v) {
				tz = &v
			} else {
				errs.add(line, colTimezone, "%s", msgTimezone)
				ok = false
			}
		}
	}
	if !ok || !errs.empty() {
		return // the upload is refused: only the rest is checked
	}
	vars := make(map[string]any, len(rec)-1)
	for i, cell := range rec {
		if i != c.toNumber && i != c.timezone {
			vars[c.names[i]] = cell
		}
	}
	b.add(seen, to, vars, tz)
}
