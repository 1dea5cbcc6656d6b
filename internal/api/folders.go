package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/folder"
	"github.com/parley-voice/parley/internal/model"
)

type folderJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Color     *string   `json:"color"`
	CreatedAt timestamp `json:"createdAt"`
	UpdatedAt timestamp `json:"updatedAt"`
}

func presentFolder(f model.Folder) folderJSON {
	return folderJSON{ID: f.ID, Name: f.Name, Color: f.Color, CreatedAt: ts(f.CreatedAt), UpdatedAt: ts(f.UpdatedAt)}
}

func (s *Server) createFolder(w http.ResponseWriter, r *http.Request) {
	var in folder.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	f, err := s.Folders.Create(r.Context(), orgID(r), in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, presentFolder(f))
}

func (s *Server) listFolders(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	sp := q.storePage(p)
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	list, total, err := s.Folders.List(r.Context(), orgID(r), sp)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(list, presentFolder), p, total)
}

func (s *Server) getFolder(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	f, err := s.Folders.Get(r.Context(), orgID(r), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentFolder(f))
}

func (s *Server) updateFolder(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var in folder.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	f, err := s.Folders.Update(r.Context(), orgID(r), id, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentFolder(f))
}

func (s *Server) deleteFolder(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	if err := s.Folders.Delete(r.Context(), orgID(r), id); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}

// mapSlice presents each element of a list.
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
