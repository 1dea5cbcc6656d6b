package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// Idempotency-Key on POST /calls and POST /messages (conventions.md,
// "Retries and text"), as Stripe defines it: the first request with a key
// stores the key in the transaction that creates its call or message, so
// a client whose connection died after the commit can send the request
// again and get the first answer back instead of a second call. A retry
// with another body is a client bug and answers 409. Requests that fail
// before anything is created (validation, the concurrency limit) store
// nothing and may be retried with the same key.

const (
	idempotencyHeader = "Idempotency-Key"
	maxIdempotencyKey = 255
	// replayedHeader marks an answer given again for a retried key.
	replayedHeader = "Idempotent-Replayed"
)

// errKeyUsed is a create transaction's failure when a concurrent request
// with the same key committed first: the request answers as that one did.
var errKeyUsed = errors.New("api: idempotency key used by a concurrent request")

// idempotent is a create request's Idempotency-Key; nil for a request
// without one.
type idempotent struct {
	orgID, scope, key, hash string
	// render answers a replay whose first response is not stored yet (a
	// message still being delivered): the resource as it is now.
	render func(ctx context.Context, orgID, id string) (any, error)
}

// idempotency reads r's Idempotency-Key: nil without one. A bad key, or
// one already used within the window, is answered here (done true): 400,
// the first response again, 409 for another body, or 400 for a body that
// repeats a key. Otherwise the body is read and hashed, and put back for
// the handler to decode.
func (s *Server) idempotency(w http.ResponseWriter, r *http.Request, render func(ctx context.Context, orgID, id string) (any, error)) (k *idempotent, done bool) {
	values := r.Header.Values(idempotencyHeader)
	if len(values) == 0 {
		return nil, false
	}
	if err := checkIdempotencyKey(values); err != nil {
		writeError(w, r, err)
		return nil, true
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, r, err)
		return nil, true
	}
	// A body that repeats a key is refused before its key is looked up:
	// it hashes as the body that keeps the last of them, so it would be
	// answered as that one was.
	if err := opt.CheckDuplicateKeys(body); err != nil {
		writeError(w, r, err)
		return nil, true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	k = &idempotent{orgID: orgID(r), scope: r.Method + " " + r.URL.Path, key: values[0], hash: requestHash(body), render: render}
	return k, s.replay(w, r, k)
}

// checkIdempotencyKey: one key of 1 to 255 printable ASCII characters.
func checkIdempotencyKey(values []string) error {
	if len(values) > 1 {
		return invalid.One(idempotencyHeader, "must be sent once")
	}
	v := values[0]
	if v == "" || len(v) > maxIdempotencyKey {
		return invalid.One(idempotencyHeader, "must be 1 to %d characters", maxIdempotencyKey)
	}
	for _, c := range []byte(v) {
		if c < 0x20 || c > 0x7e {
			return invalid.One(idempotencyHeader, "must be printable ASCII characters")
		}
	}
	return nil
}

// requestHash is the hex SHA-256 of body in canonical JSON (object keys
// sorted, no insignificant space), so a retry that reorders fields or
// spaces them differently is the same request. A body that is not JSON is
// hashed as it is (it fails validation and stores nothing anyway).
func requestHash(body []byte) string {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err == nil && !d.More() {
		if canonical, err := json.Marshal(v); err == nil {
			body = canonical
		}
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// replay answers a key already used within the window and reports whether
// it did.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, k *idempotent) bool {
	var used model.IdempotencyKey
	err := s.store.View(r.Context(), func(tx store.Tx) error {
		var err error
		used, err = tx.GetIdempotencyKey(r.Context(), k.orgID, k.scope, k.key, model.Now().Add(-model.IdempotencyWindow))
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false
	case err != nil:
		writeError(w, r, err)
		return true
	case used.RequestHash != k.hash:
		writeError(w, r, &invalid.Conflict{Message: fmt.Sprintf(
			"%s %q was already used with a different request body; use a new key for a new request", idempotencyHeader, k.key)})
		return true
	}
	w.Header().Set(replayedHeader, "true")
	if used.Response != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(used.StatusCode)
		w.Write(used.Response)
		return true
	}
	v, err := k.render(r.Context(), k.orgID, used.ResourceID)
	if err != nil {
		w.Header().Del(replayedHeader)
		writeError(w, r, err)
		return true
	}
	writeData(w, used.StatusCode, v)
	return true
}

// answerRetry answers a request whose create transaction lost the key to
// a concurrent one (errKeyUsed): as that one was answered.
func (s *Server) answerRetry(w http.ResponseWriter, r *http.Request, k *idempotent) {
	if !s.replay(w, r, k) {
		writeError(w, r, fmt.Errorf("idempotency key %q: used concurrently but not found", k.key))
	}
}

// record stores the key in a create transaction, for the resource id and
// its answer (nil when it is not known yet: see respond).
func (k *idempotent) record(ctx context.Context, tx store.Tx, id string, status int, answer []byte) error {
	now := model.Now()
	err := tx.PutIdempotencyKey(ctx, &model.IdempotencyKey{OrgID: k.orgID, Scope: k.scope, Key: k.key, RequestHash: k.hash,
		ResourceID: id, StatusCode: status, Response: answer, CreatedAt: now}, now.Add(-model.IdempotencyWindow))
	if errors.Is(err, store.ErrConflict) {
		return errKeyUsed
	}
	return err
}

// respond stores the answer of a key recorded without one, then writes it.
// Storing is best effort: a replay without it renders the resource.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, k *idempotent, status int, v any) {
	if k != nil {
		err := s.store.Update(r.Context(), func(tx store.Tx) error {
			return tx.SetIdempotencyResponse(r.Context(), k.orgID, k.scope, k.key, dataBody(v))
		})
		if err != nil {
			logger(r).WarnContext(r.Context(), "idempotency: first response not stored", "key", k.key, "err", err)
		}
	}
	writeData(w, status, v)
}

// dataBody is the body writeData writes for v.
func dataBody(v any) []byte {
	b, err := json.Marshal(single{Data: v})
	if err != nil {
		return nil
	}
	return append(b, '\n')
}
