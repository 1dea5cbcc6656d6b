package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/model"
)

type toolJSON struct {
	ID                 string           `json:"id"`
	AgentID            string           `json:"agentId"`
	Name               string           `json:"name"`
	Description        *string          `json:"description"`
	WebhookURL         string           `json:"webhookUrl"`
	Enabled            bool             `json:"enabled"`
	Schema             map[string]any   `json:"schema"`
	Headers            []model.KeyValue `json:"headers"`
	QueryParams        []model.KeyValue `json:"queryParams"`
	SendRawRequestBody bool             `json:"sendRawRequestBody"`
	TimeoutSeconds     *int             `json:"timeoutSeconds"`
	CreatedAt          timestamp        `json:"createdAt"`
	UpdatedAt          timestamp        `json:"updatedAt"`
}

func presentTool(t model.CustomTool) toolJSON {
	return toolJSON{
		ID: t.ID, AgentID: t.AgentID, Name: t.Name, Description: t.Description, WebhookURL: t.WebhookURL,
		Enabled: t.Enabled, Schema: t.Schema, Headers: nonNil(t.Headers), QueryParams: nonNil(t.QueryParams),
		SendRawRequestBody: t.SendRawRequestBody, TimeoutSeconds: t.TimeoutSeconds,
		CreatedAt: ts(t.CreatedAt), UpdatedAt: ts(t.UpdatedAt),
	}
}

func (s *Server) listCustomTools(w http.ResponseWriter, r *http.Request) {
	agentID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	tools, err := s.Agents.Tools(r.Context(), orgID(r), agentID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, mapSlice(tools, presentTool))
}

func (s *Server) createCustomTool(w http.ResponseWriter, r *http.Request) {
	agentID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var in agent.ToolInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.Agents.CreateTool(r.Context(), orgID(r), agentID, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, presentTool(t))
}

func (s *Server) getCustomTool(w http.ResponseWriter, r *http.Request) {
	agentID, toolID, ok := toolPath(w, r)
	if !ok {
		return
	}
	t, err := s.Agents.Tool(r.Context(), orgID(r), agentID, toolID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentTool(t))
}

func (s *Server) updateCustomTool(w http.ResponseWriter, r *http.Request) {
	agentID, toolID, ok := toolPath(w, r)
	if !ok {
		return
	}
	var in agent.ToolInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.Agents.UpdateTool(r.Context(), orgID(r), agentID, toolID, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentTool(t))
}

func (s *Server) deleteCustomTool(w http.ResponseWriter, r *http.Request) {
	agentID, toolID, ok := toolPath(w, r)
	if !ok {
		return
	}
	if err := s.Agents.DeleteTool(r.Context(), orgID(r), agentID, toolID); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}

// toolPath reads the agent and tool ids of /agents/{id}/custom-tools/{toolId}.
func toolPath(w http.ResponseWriter, r *http.Request) (agentID, toolID string, ok bool) {
	return pathIDs(w, r, "id", "toolId")
}
