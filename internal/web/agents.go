package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// Agent list parameters: the ones GET /v1/agents reads, with its rules.
const (
	maxAgentQueryLen = 128
	defaultPageSize  = 25
	maxPageSize      = 100
)

// option is one choice of a select or a checkbox list.
type option struct {
	Value, Label string
}

type agentListData struct {
	Filter store.AgentFilter
	Agents []agent.View
	pager
	Folders []option
	Errors  []string
}

// agentFilter reads the list's query with GET /v1/agents' parameters and
// rules; broken ones are reported and fall back to their defaults.
func agentFilter(q url.Values) (store.AgentFilter, []string) {
	f := store.AgentFilter{Page: store.Page{Number: 1, Size: defaultPageSize, SortDir: store.Desc}, SortBy: store.SortCreatedAt}
	var problems []string
	bad := func(name, msg string) { problems = append(problems, name+": "+msg) }
	if v := q.Get("q"); invalid.Text(v) != "" || invalid.Len(v) > maxAgentQueryLen {
		bad("q", "must be at most 128 characters of text")
	} else {
		f.Query = v
	}
	enum := func(name string, dst *string, allowed ...string) {
		if v := q.Get(name); v != "" {
			if slices.Contains(allowed, v) {
				*dst = v
			} else {
				bad(name, "must be one of the listed values")
			}
		}
	}
	enum("status", &f.Status, model.AgentActive, model.AgentDisabled)
	enum("sortBy", &f.SortBy, store.SortCreatedAt, store.SortUpdatedAt, store.SortName)
	enum("sortDir", &f.SortDir, store.Asc, store.Desc)
	if v := q.Get("folderId"); v != "" {
		if v == store.FolderNone || model.IsUUID(v) {
			f.FolderID = v
		} else {
			bad("folderId", "must be a folder id or none")
		}
	}
	number := func(name string, dst *int, lo, hi int) {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				bad(name, "must be a whole number between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
				return
			}
			*dst = n
		}
	}
	number("page", &f.Number, 1, 1<<31-1)
	number("pageSize", &f.Size, 1, maxPageSize)
	return f, problems
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	f, problems := agentFilter(r.URL.Query())
	views, total, err := s.Agents.List(r.Context(), orgID(r), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	folders, err := s.folderOptions(r.Context(), orgID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data := agentListData{Filter: f, Agents: views, pager: newPager(r.URL, f.Page, total, nil), Folders: folders, Errors: problems}
	status := http.StatusOK
	if len(problems) > 0 {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "agents", "Agents", "agents", data)
}

// agentFormData is the agent form: its sections, the values shown, the
// errors beside each field, and the organization's choices for references.
type agentFormData struct {
	ID       string
	Creating bool
	Sections []agentSection
	Values   formValues
	Errors   fieldErrors
	Message  string
	Choices  map[kind][]option
	Saved    bool
	// Tools and Numbers are the agent's custom tools and the phone
	// numbers that route to it, shown on edit.
	Tools   []model.CustomTool
	Numbers []model.PhoneNumber
}

func (s *Server) newAgent(w http.ResponseWriter, r *http.Request) {
	vals := formValues{Text: map[string]string{"status": model.AgentActive, "mode": model.ModeSinglePrompt}, Lists: map[string][]string{}}
	s.renderAgentForm(w, r, http.StatusOK, agentFormData{Creating: true, Values: vals})
}

func (s *Server) createAgent(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	in, vals, err := agentInput(r.PostForm, true)
	if err == nil {
		var v agent.View
		if v, err = s.Agents.Create(r.Context(), orgID(r), in); err == nil {
			http.Redirect(w, r, "/agents/"+v.ID+"?saved=1", http.StatusSeeOther)
			return
		}
	}
	s.agentFormFailed(w, r, agentFormData{Creating: true, Values: vals}, err)
}

func (s *Server) editAgent(w http.ResponseWriter, r *http.Request) {
	v, err := s.Agents.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.renderAgentForm(w, r, http.StatusOK, agentFormData{ID: v.ID, Values: agentValues(v), Saved: r.URL.Query().Get("saved") == "1",
		Tools: v.CustomTools, Numbers: v.PhoneNumbers})
}

func (s *Server) updateAgent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, err := s.Agents.Get(r.Context(), orgID(r), id)
	if err != nil {
		s.failFind(w, r, err) // another organization's agent is not found, form or not
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	in, vals, err := agentInput(r.PostForm, false)
	if err == nil {
		if _, err = s.Agents.Update(r.Context(), orgID(r), id, in); err == nil {
			http.Redirect(w, r, "/agents/"+id+"?saved=1", http.StatusSeeOther)
			return
		}
	}
	s.agentFormFailed(w, r, agentFormData{ID: id, Values: vals, Tools: v.CustomTools, Numbers: v.PhoneNumbers}, err)
}

// agentFormFailed shows the form again with what the service refused.
func (s *Server) agentFormFailed(w http.ResponseWriter, r *http.Request, d agentFormData, err error) {
	var (
		bad      *invalid.Error
		decode   *opt.DecodeError
		conflict *invalid.Conflict
	)
	switch {
	case errors.As(err, &bad):
		d.Errors = errorsByField(bad.Fields)
	case errors.As(err, &decode):
		d.Errors = errorsByField(decode.Fields)
	case errors.As(err, &conflict):
		d.Message = conflict.Message
	case errors.Is(err, store.ErrNotFound):
		s.failFind(w, r, err)
		return
	default:
		s.fail(w, r, err)
		return
	}
	if d.Message == "" {
		d.Message = "The agent was not saved: correct the fields marked below."
	}
	s.renderAgentForm(w, r, http.StatusBadRequest, d)
}

func (s *Server) renderAgentForm(w http.ResponseWriter, r *http.Request, status int, d agentFormData) {
	choices, err := s.agentChoices(r.Context(), orgID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Choices, d.Sections = choices, agentForm
	title := "New agent"
	if !d.Creating {
		title = "Edit " + d.Values.Text["name"]
	}
	s.render(w, r, status, "agent", title, "agents", d)
}

func (s *Server) duplicateAgent(w http.ResponseWriter, r *http.Request) {
	v, err := s.Agents.Duplicate(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/agents/"+v.ID, http.StatusSeeOther)
}

func (s *Server) confirmDeleteAgent(w http.ResponseWriter, r *http.Request) {
	v, err := s.Agents.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Delete "+v.Name, "agents", confirmData{
		Question: "Delete the agent “" + v.Name + "”? Its calls and messages keep its name; its phone numbers become unassigned.",
		Action:   "/agents/" + v.ID + "/delete", Button: "Delete agent", Cancel: "/agents/" + v.ID,
	})
}

func (s *Server) deleteAgent(w http.ResponseWriter, r *http.Request) {
	if err := s.Agents.Delete(r.Context(), orgID(r), r.PathValue("id")); err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/agents", http.StatusSeeOther)
}

// confirmData is a confirmation page for a destructive action.
type confirmData struct {
	Question, Action, Button, Cancel string
}

// failFind answers a lookup's error: not found (another organization's id
// too, or a malformed one) is the 404 page.
func (s *Server) failFind(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.renderError(w, r, http.StatusNotFound, "There is no such page.")
		return
	}
	s.fail(w, r, err)
}

// Choices for an agent's references: the organization's folders, trunks,
// messaging connections and knowledge bases, all of them.
func (s *Server) agentChoices(ctx context.Context, orgID string) (map[kind][]option, error) {
	out := map[kind][]option{}
	var err error
	if out[kindFolder], err = s.folderOptions(ctx, orgID); err != nil {
		return nil, err
	}
	trunks, err := allPages(func(p store.Page) ([]model.SIPTrunk, int, error) { return s.SIPTrunks.List(ctx, orgID, p) })
	if err != nil {
		return nil, err
	}
	for _, t := range trunks {
		out[kindTrunk] = append(out[kindTrunk], option{t.ID, t.FriendlyName})
	}
	conns, err := allPages(func(p store.Page) ([]model.MessagingConnection, int, error) {
		return s.MessagingConnections.List(ctx, orgID, p)
	})
	if err != nil {
		return nil, err
	}
	for _, c := range conns {
		out[kindMessaging] = append(out[kindMessaging], option{c.ID, connectionLabel(c)})
	}
	kbs, err := allPages(func(p store.Page) ([]model.KnowledgeBase, int, error) { return s.KnowledgeBases.List(ctx, orgID, p) })
	if err != nil {
		return nil, err
	}
	for _, kb := range kbs {
		out[kindKnowledge] = append(out[kindKnowledge], option{kb.ID, kb.Name})
	}
	return out, nil
}

func (s *Server) folderOptions(ctx context.Context, orgID string) ([]option, error) {
	folders, err := allPages(func(p store.Page) ([]model.Folder, int, error) { return s.Folders.List(ctx, orgID, p) })
	if err != nil {
		return nil, err
	}
	out := make([]option, len(folders))
	for i, f := range folders {
		out[i] = option{f.ID, f.Name}
	}
	return out, nil
}
