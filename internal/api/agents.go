package api

import (
	"encoding/json"
	"net/http"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// Agent list limits.
const (
	maxAgentQueryLen = 128
	maxBatchIDs      = 100
)

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	f := store.AgentFilter{
		Page:     q.storePage(p),
		SortBy:   q.enum("sortBy", store.SortCreatedAt, store.SortCreatedAt, store.SortUpdatedAt, store.SortName),
		Status:   q.enum("status", "", model.AgentActive, model.AgentDisabled),
		FolderID: q.folder("folderId"),
		Query:    q.string("q", maxAgentQueryLen),
	}
	minimal := q.bool("minimal", false)
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	views, total, err := s.Agents.List(r.Context(), orgID(r), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, presentAgents(views, minimal), p, total)
}

// batchGetRequest asks for several resources by id.
type batchGetRequest struct {
	IDs     opt.Field[[]string] `json:"ids"`
	Minimal opt.Field[bool]     `json:"minimal"`
}

func (b *batchGetRequest) check() error {
	var l invalid.List
	switch {
	case !b.IDs.Present():
		l.Add("ids", "is required")
	case len(b.IDs.V) < 1 || len(b.IDs.V) > maxBatchIDs:
		l.Add("ids", "must have 1 to %d elements", maxBatchIDs)
	}
	for i, id := range b.IDs.V {
		if !model.IsUUID(id) {
			l.Add(invalid.Index("ids", i), "must be a UUID")
		}
	}
	if b.Minimal.Null {
		l.Add("minimal", "must not be null")
	}
	return l.Err()
}

func (s *Server) duplicateAgent(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	v, err := s.Agents.Duplicate(r.Context(), orgID(r), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, presentFullAgent(v))
}

// agentJSON is an agent as the API answers it: every field of the interface,
// null where unset.
type agentJSON struct {
	ID                    string          `json:"id"`
	Name                  string          `json:"name"`
	Status                string          `json:"status"`
	Mode                  string          `json:"mode"`
	FolderID              *string         `json:"folderId"`
	Folder                *folderRefJSON  `json:"folder"`
	SIPTrunkID            *string         `json:"sipTrunkId"`
	SIPTrunk              *trunkRefJSON   `json:"sipTrunk"`
	MessagingConnectionID *string         `json:"messagingConnectionId"`
	PhoneNumbers          []phoneRefJSON  `json:"phoneNumbers"`
	CustomTools           []toolJSON      `json:"customTools"`
	KnowledgeBaseIDs      []string        `json:"knowledgeBaseIds"`
	KnowledgeBases        []kbRefJSON     `json:"knowledgeBases"`
	CreatedAt             timestamp       `json:"createdAt"`
	UpdatedAt             timestamp       `json:"updatedAt"`
	model.AgentConfig                     // promoted: the configuration fields
	omit                  map[string]bool // keys left out of a minimal answer
}

type folderRefJSON struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Color *string `json:"color"`
}

type trunkRefJSON struct {
	ID           string `json:"id"`
	FriendlyName string `json:"friendlyName"`
}

type phoneRefJSON struct {
	ID        string    `json:"id"`
	E164      string    `json:"e164"`
	CreatedAt timestamp `json:"createdAt"`
	UpdatedAt timestamp `json:"updatedAt"`
}

type kbRefJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// minimalOmits are the keys a minimal agent leaves out: the prompt, the flow,
// the variables, the runtime configuration, tools and knowledge bases.
var minimalOmits = map[string]bool{
	"promptTemplate": true, "flowDefinition": true, "defaultVariables": true, "testVariables": true,
	"runtimeConfig": true, "customTools": true, "knowledgeBaseIds": true, "knowledgeBases": true,
}

// MarshalJSON drops the omitted keys of a minimal answer.
func (a agentJSON) MarshalJSON() ([]byte, error) {
	type plain agentJSON // without this method
	b, err := json.Marshal(plain(a))
	if err != nil || len(a.omit) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k := range a.omit {
		delete(m, k)
	}
	return json.Marshal(m)
}

func presentAgent(v agent.View, minimal bool) agentJSON {
	out := agentJSON{
		ID: v.ID, Name: v.Name, Status: v.Status, Mode: v.Mode,
		FolderID: v.FolderID, SIPTrunkID: v.SIPTrunkID, MessagingConnectionID: v.MessagingConnectionID,
		PhoneNumbers: []phoneRefJSON{}, CustomTools: []toolJSON{}, KnowledgeBaseIDs: []string{}, KnowledgeBases: []kbRefJSON{},
		CreatedAt: ts(v.CreatedAt), UpdatedAt: ts(v.UpdatedAt), AgentConfig: v.Config,
	}
	if v.Folder != nil {
		out.Folder = &folderRefJSON{ID: v.Folder.ID, Name: v.Folder.Name, Color: v.Folder.Color}
	}
	if v.SIPTrunk != nil {
		out.SIPTrunk = &trunkRefJSON{ID: v.SIPTrunk.ID, FriendlyName: v.SIPTrunk.FriendlyName}
	}
	for _, n := range v.PhoneNumbers {
		out.PhoneNumbers = append(out.PhoneNumbers, phoneRefJSON{ID: n.ID, E164: n.E164, CreatedAt: ts(n.CreatedAt), UpdatedAt: ts(n.UpdatedAt)})
	}
	for _, t := range v.CustomTools {
		out.CustomTools = append(out.CustomTools, presentTool(t))
	}
	for _, kb := range v.KnowledgeBases {
		out.KnowledgeBaseIDs = append(out.KnowledgeBaseIDs, kb.ID)
		out.KnowledgeBases = append(out.KnowledgeBases, kbRefJSON{ID: kb.ID, Name: kb.Name})
	}
	if minimal {
		out.omit = minimalOmits
	}
	return out
}

// presentFullAgent is an agent answered on its own: never minimal.
func presentFullAgent(v agent.View) agentJSON { return presentAgent(v, false) }

func presentAgents(views []agent.View, minimal bool) []agentJSON {
	out := make([]agentJSON, len(views))
	for i, v := range views {
		out[i] = presentAgent(v, minimal)
	}
	return out
}
