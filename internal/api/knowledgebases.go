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
	sources := mapSlice(d.Sources, presentSource)
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
	writeData(w, http.StatusOK, mapSlice(sources, presentSource))
}

func (s *Server) getSource(w http.ResponseWriter, r *http.Request) {
	kbID, id, ok := sourcePath(w, r)
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
	kbID, id, ok := sourcePath(w, r)
	if !ok {
		return
	}
	if err := s.KnowledgeBases.DeleteSource(r.Context(), orgID(r), kbID, id); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}

// sourcePath reads the base and source ids of
// /knowledge-bases/{id}/sources/{sourceId}.
func sourcePath(w http.ResponseWriter, r *http.Request) (kbID, sourceID string, ok bool) {
	if kbID, ok = pathID(w, r, "id"); !ok {
		return "", "", false
	}
	sourceID, ok = pathID(w, r, "sourceId")
	return kbID, sourceID, ok
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
