package api

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// Body size limits (conventions: 1 MiB; knowledge sources 2 MiB).
const (
	maxBody       = 1 << 20
	maxSourceBody = 2 << 20
)

// single is the envelope of one resource or of a list by ids.
type single struct {
	Data any `json:"data"`
}

// paginated is the envelope of a paged list.
type paginated struct {
	Data        any  `json:"data"`
	Page        int  `json:"page"`
	PageSize    int  `json:"pageSize"`
	Total       int  `json:"total"`
	HasNextPage bool `json:"hasNextPage"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal_error","message":"response did not encode"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeData(w http.ResponseWriter, status int, v any) { writeJSON(w, status, single{Data: v}) }

func writePage(w http.ResponseWriter, data any, p pageQuery, total int) {
	writeJSON(w, http.StatusOK, paginated{
		Data: data, Page: p.Number, PageSize: p.Size, Total: total,
		HasNextPage: p.Number*p.Size < total,
	})
}

func writeNoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// decode reads the request body (bounded by the limit middleware) into dst
// strictly; see package opt.
func decode(r *http.Request, dst any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	return opt.Decode(b, dst)
}

// timestamp is a time as the API answers it.
type timestamp = model.Timestamp

func ts(t time.Time) timestamp { return timestamp(t) }

// nonNil answers an empty array rather than null for list fields.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
