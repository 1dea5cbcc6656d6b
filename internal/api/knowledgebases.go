package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/model"
)

type knowledgeBaseJSON struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	SourceCount int       `json:"sourceCount"`
	Sources     *[]any    `json:"sources,omitempty"`
	CreatedAt   timestamp `json:"createdAt"`
	UpdatedAt   timestamp `json:"updatedAt"`
}

func presentKnowledgeBase(kb model.KnowledgeBase) knowledgeBaseJSON {
	return knowledgeBaseJSON{
		ID: kb.ID, Name: kb.Name, Description: kb.Description, SourceCount: kb.SourceCount,
		CreatedAt: ts(kb.CreatedAt), UpdatedAt: ts(kb.UpdatedAt),
	}
}

// withSources is a knowledge base as GET /knowledge-bases/{id} answers it,
// sources included. Sources are added by the knowledge issue; until then a
// base has none, and says so.
func withSources(kb model.KnowledgeBase) knowledgeBaseJSON {
	out := presentKnowledgeBase(kb)
	sources := []any{}
	out.Sources = &sources
	return out
}

func (s *Server) createKnowledgeBase(w http.ResponseWriter, r *http.Request) {
	var in knowledge.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	kb, err := s.KnowledgeBases.Create(r.Context(), orgID(r), in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, withSources(kb))
}

func (s *Server) listKnowledgeBases(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	sp := q.storePage(p)
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	list, total, err := s.KnowledgeBases.List(r.Context(), orgID(r), sp)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(list, presentKnowledgeBase), p, total)
}

func (s *Server) getKnowledgeBase(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	kb, err := s.KnowledgeBases.Get(r.Context(), orgID(r), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, withSources(kb))
}

func (s *Server) updateKnowledgeBase(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var in knowledge.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	kb, err := s.KnowledgeBases.Update(r.Context(), orgID(r), id, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, withSources(kb))
}

func (s *Server) deleteKnowledgeBase(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	if err := s.KnowledgeBases.Delete(r.Context(), orgID(r), id); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
