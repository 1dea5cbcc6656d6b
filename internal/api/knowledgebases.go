package api

import (
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
