package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/store"
)

// Error codes of the house error shape.
const (
	codeInvalidJSON       = "invalid_json"
	codeValidationFailed  = "validation_failed"
	codeUnauthorized      = "unauthorized"
	codeNotFound          = "not_found"
	codeMethodNotAllowed  = "method_not_allowed"
	codeConflict          = "conflict"
	codePayloadTooLarge   = "payload_too_large"
	codeRateLimited       = "rate_limited"
	codeInternal          = "internal_error"
	codeConcurrencyLimit  = "concurrency_limit_reached"
	codeUnavailable       = "unavailable"
	messageInternal       = "internal error; quote the X-Request-Id header when reporting it"
	messageNotFound       = "no such resource"
	messageRouteNotFound  = "no such route"
	messageUnauthorized   = "x-api-key header is missing, unknown or revoked"
	messagePayloadTooBig  = "request body is too large"
	messageConflictCommon = "the request conflicts with the current state"
	messageUnavailable    = "the database is unavailable; retry later"
	messageShuttingDown   = "the server is shutting down; retry later"
)

// retryAfterUnavailable is the Retry-After of a 503 unavailable, in
// seconds: long enough for a dropped connection to be made again or a
// failover to finish, short enough that a client retrying does not wait
// long (docs/api.md).
const retryAfterUnavailable = "5"

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details []invalid.Field `json:"details,omitempty"`
}

// writeError answers err in the house shape. It is the one place where
// errors become status codes.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var (
		decodeErr *opt.DecodeError
		invalidEr *invalid.Error
		conflict  *invalid.Conflict
		tooLarge  *http.MaxBytesError
		limited   *sms.RateLimitError
		noModel   *eval.UnavailableError
	)
	switch {
	case errors.As(err, &decodeErr):
		writeProblem(w, http.StatusBadRequest, codeInvalidJSON, decodeErr.Error(), decodeErr.Fields)
	case errors.As(err, &invalidEr):
		writeProblem(w, http.StatusBadRequest, codeValidationFailed, invalidEr.Error(), invalidEr.Fields)
	case errors.As(err, &conflict):
		writeProblem(w, http.StatusConflict, codeConflict, conflict.Message, nil)
	case errors.As(err, &tooLarge):
		writeProblem(w, http.StatusRequestEntityTooLarge, codePayloadTooLarge, messagePayloadTooBig, nil)
	case errors.As(err, &limited):
		w.Header().Set("Retry-After", "60")
		writeProblem(w, http.StatusTooManyRequests, codeRateLimited, limited.Message, nil)
	case errors.As(err, &noModel):
		writeProblem(w, http.StatusServiceUnavailable, codeUnavailable, noModel.Message, nil)
	case errors.Is(err, store.ErrUnavailable):
		// An outage, not a bug: the client retries, the operator sees /healthz.
		logger(r).WarnContext(r.Context(), "request failed: database unavailable", "err", err)
		writeUnavailable(w, messageUnavailable)
	case errors.Is(err, callqueue.ErrDraining): // a request that was in before the drain began
		writeUnavailable(w, messageShuttingDown)
	case errors.Is(err, store.ErrNotFound):
		writeProblem(w, http.StatusNotFound, codeNotFound, messageNotFound, nil)
	case errors.Is(err, store.ErrConflict):
		writeProblem(w, http.StatusConflict, codeConflict, messageConflictCommon, nil)
	case errors.Is(err, org.ErrUnauthorized):
		writeProblem(w, http.StatusUnauthorized, codeUnauthorized, messageUnauthorized, nil)
	default:
		logger(r).ErrorContext(r.Context(), "request failed", "err", err)
		writeProblem(w, http.StatusInternalServerError, codeInternal, messageInternal, nil)
	}
}

// writeUnavailable answers 503 unavailable with Retry-After: the request
// did nothing and may be sent again.
func writeUnavailable(w http.ResponseWriter, message string) {
	w.Header().Set("Retry-After", retryAfterUnavailable)
	writeProblem(w, http.StatusServiceUnavailable, codeUnavailable, message, nil)
}

func writeProblem(w http.ResponseWriter, status int, code, message string, details []invalid.Field) {
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: message, Details: details}})
}

// logger is the request's logger, carrying its request id.
func logger(r *http.Request) *slog.Logger {
	if l, ok := r.Context().Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
