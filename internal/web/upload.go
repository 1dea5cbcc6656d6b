package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/invalid"
)

// maxUpload bounds the body of a form carrying a CSV file: the API's
// limit on the file, and the form's other inputs beside it.
const maxUpload = campaign.MaxCSVBytes + maxForm

// bodyTooLarge reads an unsafe request's form (multipart for uploads)
// before its CSRF token is checked, and reports a body over its route's
// limit, which would otherwise look like a missing token.
func bodyTooLarge(r *http.Request) bool {
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		// In memory up to the limit: a CSV file is parsed whole anyway.
		err = r.ParseMultipartForm(maxUpload)
	} else {
		err = r.ParseForm()
	}
	var tooBig *http.MaxBytesError
	return errors.As(err, &tooBig)
}

// csvFile is the CSV file uploaded as input name: nil, nil when none was
// chosen. A file over the API's limit is refused under name, as the API
// refuses its body.
func csvFile(r *http.Request, name string) (io.ReadCloser, error) {
	if r.MultipartForm == nil {
		return nil, nil // a form sent without its file input
	}
	f, hdr, err := r.FormFile(name)
	switch {
	case errors.Is(err, http.ErrMissingFile):
		return nil, nil
	case err != nil:
		return nil, err
	case hdr.Size > campaign.MaxCSVBytes:
		f.Close()
		return nil, invalid.One(name, "the file holds %s; at most %d MiB is taken", byteSize(hdr.Size), campaign.MaxCSVBytes>>20)
	}
	return f, nil
}

// byteSize is n bytes in words.
func byteSize(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// lineError is one refused line of an uploaded file, as the page lists it.
type lineError struct {
	Line    int // 0: the file as a whole
	Field   string
	Message string
}

// WholeFile says the problem is the file's, not a column's.
func (l lineError) WholeFile() bool {
	return l.Field == "body" || l.Field == "recipients" || l.Field == "file"
}

// csvUpload is a CSV file input as drawn: the refused lines of the last
// file, and whether a file may be left out.
type csvUpload struct {
	Lines    []lineError
	Optional bool
}

// csvRefusal is an uploaded file's refusal, line by line: ok is false when
// err is not a refusal of the file's content.
func csvRefusal(err error) (lines []lineError, ok bool) {
	var bad *invalid.Error
	if !errors.As(err, &bad) {
		return nil, false
	}
	for _, f := range bad.Fields {
		lines = append(lines, lineError{Line: f.Line, Field: f.Name, Message: f.Message})
	}
	return lines, true
}
