package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/model"
)

type knowledgeBaseJSON struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Description *string       `json:"description"`
	SourceCount int           `json:"sourceCount"`
	Sources     *[]sourceJSON `json:"sources,omitempty"`
	CreatedAt   timestamp     `json:"createdAt"`
	UpdatedAt   timestamp     `json:"updatedAt"`
}

type sourceJSON struct {
	ID              string    `json:"id"`
	KnowledgeBaseID string    `json:"knowledgeBaseId"`
	DisplayName     string    `json:"displayName"`
	Content         string    `json:"content"`
	OriginalURL     *string   `json:"originalUrl"`
	MimeType        string    `json:"mimeType"`
	FileSize        int64     `json:"fileSize"`
	ErrorMessage    *string   `json:"errorMessage"`
	CreatedAt       timestamp `json:"createdAt"`
	UpdatedAt       timestamp `json:"updatedAt"`
}

func presentKnowledgeBase(kb model.KnowledgeBase) knowledgeBaseJSON {
	return knowledgeBaseJSON{
		ID: kb.ID, Name: kb.Name, Description: kb.Description, SourceCount: kb.SourceCount,
		CreatedAt: ts(kb.CreatedAt), UpdatedAt: ts(kb.UpdatedAt),
	}
}

// withSources is a knowledge base as GET /knowledge-bases/{id} answers it,
// sources included.
func withSources(d knowledge.Detail) knowledgeBaseJSON {
	out := presentKnowledgeBase(d.KnowledgeBase)
	sources := make([]sourceJSON, len(d.Sources))
	for i, s := range d.Sources {
		sources[i] = presentSource(s)
	}
	out.Sources = &sources
	return out
}

func presentSource(s model.KnowledgeSource) sourceJSON {
	return sourceJSON{ID: s.ID, KnowledgeBaseID: s.KnowledgeBaseID, DisplayName: s.DisplayName, Content: s.Content,
		OriginalURL: s.OriginalURL, MimeType: s.MimeType, FileSize: s.FileSize, ErrorMessage: s.ErrorMessage,
		CreatedAt: ts(s.CreatedAt), UpdatedAt: ts(s.UpdatedAt)}
}

func (s *Server) addSource(w http.ResponseWriter, r *http.Request) {
	kbID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var in knowledge.SourceInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	src, err := s.KnowledgeBases.AddSource(r.Context(), orgID(r), kbID, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, presentSource(src))
}

func (s *Server) listSources(w http.ResponseWriter, r *http.Request) {
	kbID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	sources, err := s.KnowledgeBases.Sources(r.Context(), orgID(r), kbID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]sourceJSON, len(sources))
	for i, src := range sources {
		out[i] = presentSource(src)
	}
	writeData(w, http.StatusOK, out)
}

func (s *Server) getSource(w http.ResponseWriter, r *http.Request) {
	kbID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	id, ok := pathID(w, r, "sourceId")
	if !ok {
		return
	}
	src, err := s.KnowledgeBases.GetSource(r.Context(), orgID(r), kbID, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentSource(src))
}

func (s *Server) deleteSource(w http.ResponseWriter, r *http.Request) {
	kbID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	id, ok := pathID(w, r, "sourceId")
	if !ok {
		return
	}
	if err := s.KnowledgeBases.DeleteSource(r.Context(), orgID(r), kbID, id); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}

func (s *Server) queryKnowledgeBase(w http.ResponseWriter, r *http.Request) {
	kbID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var in knowledge.QueryInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	hits, err := s.KnowledgeBases.Query(r.Context(), orgID(r), kbID, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, hits)
}
