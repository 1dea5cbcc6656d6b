package web

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/invalid"
)

// A do-not-call list as a CSV file: a header row naming a number column
// (number, toNumber or phone_number) and, optionally, a reason column;
// other columns are ignored. As recipients' files: UTF-8 with an optional
// BOM, CRLF or LF, RFC 4180 quoting, empty lines skipped, line numbers
// counted from the header (line 1), and one bad line refuses the file.

// maxSuppressionRows bounds an import: each number is one write.
const maxSuppressionRows = 10000

// maxLineErrors is how many refused lines are named one by one, as the
// API names a recipients file's.
const maxLineErrors = 100

// numberColumns are the headers a number column may have, in preference.
var numberColumns = []string{"number", "toNumber", "phone_number"}

// suppressionRow is one line of the file.
type suppressionRow struct {
	Line           int
	Number, Reason string
}

// parseSuppressionCSV reads the file's rows, checking each with check (the
// service's rules for one entry: nil, or what is wrong by field). Every
// refusal is an *invalid.Error whose fields carry their line.
func parseSuppressionCSV(r io.Reader, check func(number, reason string) []invalid.Field) ([]suppressionRow, error) {
	br := bufio.NewReader(r)
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1 // short or long rows are named below, by line
	cr.ReuseRecord = false
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, invalid.One("file", "is empty: the first line must be a header row naming a number column")
	}
	if err != nil {
		return nil, csvSyntax(err)
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	numberAt, reasonAt := -1, slices.Index(header, "reason")
	for _, name := range numberColumns {
		if numberAt = slices.Index(header, name); numberAt >= 0 {
			break
		}
	}
	if numberAt < 0 {
		var l invalid.List
		l.AddLine(1, "file", "the header row has no number column (number, toNumber or phone_number)")
		return nil, l.Err()
	}
	var (
		rows    []suppressionRow
		l       invalid.List
		refused int
	)
	bad := func(line int, field, format string, args ...any) {
		if refused++; refused <= maxLineErrors {
			l.AddLine(line, field, format, args...)
		}
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvSyntax(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rows) == maxSuppressionRows {
			return nil, invalid.One("file", "holds more than %d numbers: split it", maxSuppressionRows)
		}
		row := suppressionRow{Line: line}
		if numberAt < len(rec) {
			row.Number = strings.TrimSpace(rec[numberAt])
		}
		if reasonAt >= 0 && reasonAt < len(rec) {
			row.Reason = strings.TrimSpace(rec[reasonAt])
		}
		if !utf8.ValidString(row.Number) || !utf8.ValidString(row.Reason) {
			bad(line, "file", "is not valid UTF-8")
			continue
		}
		problems := check(row.Number, row.Reason)
		for _, f := range problems {
			col := header[numberAt]
			if f.Name == "reason" {
				col = "reason"
			}
			bad(line, col, "%s", f.Message)
		}
		if len(problems) == 0 {
			rows = append(rows, row)
		}
	}
	if refused > maxLineErrors {
		l.Add("file", "%d more lines are refused", refused-maxLineErrors)
	}
	if err := l.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, invalid.One("file", "holds no numbers: only a header row")
	}
	return rows, nil
}

// csvSyntax is a file encoding/csv cannot read (a malformed quote), named
// by its line.
func csvSyntax(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		var l invalid.List
		l.AddLine(pe.Line, "file", "%s", pe.Err)
		return l.Err()
	}
	return fmt.Errorf("read the file: %w", err)
}
