package api

import (
	"context"
	"net/http"

	"github.com/parley-voice/parley/internal/store"
)

// The handlers below serve the plain resources (folders, SIP trunks, phone
// numbers, messaging connections, knowledge bases): each reads as decode,
// act through the domain service, respond; only the types differ.

// idOf reads the path id of a route; resources with non-UUID ids bring their own.
type idOf func(http.ResponseWriter, *http.Request) (string, bool)

func uuidPath(w http.ResponseWriter, r *http.Request) (string, bool) { return pathID(w, r, "id") }

func createHandler[In, M, J any](create func(context.Context, string, In) (M, error), present func(M) J) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in In
		if err := decode(r, &in); err != nil {
			writeError(w, r, err)
			return
		}
		m, err := create(r.Context(), orgID(r), in)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeData(w, http.StatusCreated, present(m))
	}
}

func getHandler[M, J any](id idOf, get func(context.Context, string, string) (M, error), present func(M) J) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := id(w, r)
		if !ok {
			return
		}
		m, err := get(r.Context(), orgID(r), id)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeData(w, http.StatusOK, present(m))
	}
}

func updateHandler[In, M, J any](update func(context.Context, string, string, In) (M, error), present func(M) J) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "id")
		if !ok {
			return
		}
		var in In
		if err := decode(r, &in); err != nil {
			writeError(w, r, err)
			return
		}
		m, err := update(r.Context(), orgID(r), id, in)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeData(w, http.StatusOK, present(m))
	}
}

func deleteHandler(id idOf, del func(context.Context, string, string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := id(w, r)
		if !ok {
			return
		}
		if err := del(r.Context(), orgID(r), id); err != nil {
			writeError(w, r, err)
			return
		}
		writeNoContent(w)
	}
}

// listHandler serves a paged list ordered by creation time (page, pageSize, sortDir).
func listHandler[M, J any](list func(context.Context, string, store.Page) ([]M, int, error), present func(M) J) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := newQuery(r)
		p := q.page()
		sp := q.storePage(p)
		if err := q.done(); err != nil {
			writeError(w, r, err)
			return
		}
		items, total, err := list(r.Context(), orgID(r), sp)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writePage(w, mapSlice(items, present), p, total)
	}
}

// batchGetHandler serves POST .../batch-get: 1 to 100 ids, answered in the
// order asked, each once; minimal is passed to the presentation.
func batchGetHandler[M, J any](get func(context.Context, string, []string) ([]M, error), present func(M, bool) J) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req batchGetRequest
		if err := decode(r, &req); err != nil {
			writeError(w, r, err)
			return
		}
		if err := req.check(); err != nil {
			writeError(w, r, err)
			return
		}
		items, err := get(r.Context(), orgID(r), req.IDs.V)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeData(w, http.StatusOK, mapSlice(items, func(m M) J { return present(m, req.Minimal.V) }))
	}
}

// mapSlice presents each element of a list.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
