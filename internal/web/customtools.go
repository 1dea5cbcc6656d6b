package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// toolFormData is a custom tool's form, on its agent.
type toolFormData struct {
	formState
	AgentID, AgentName string
	ID                 string
	Creating, Saved    bool
}

// Fields are the form's inputs, by name.
func (d toolFormData) Fields() map[string]fieldView { return fieldsOf(d.formState, toolFields) }

var toolFields = func() []agentField {
	timeout := agentField{Name: "timeoutSeconds", Label: "Timeout (seconds)", Kind: kindInt, Step: 1,
		Help: "How long the agent waits for the webhook's answer: 1 to " + strconv.Itoa(agent.MaxToolTimeoutSeconds) + "; blank: the default."}
	timeout.Min, timeout.Max, timeout.HasMin, timeout.HasMax = between(1, agent.MaxToolTimeoutSeconds)
	return []agentField{
		{Name: "name", Label: "Name", Kind: kindText, Required: true, MaxLen: 64,
			Help: "What the model calls the tool by: 1 to 64 letters, digits, _ or -, unique on this agent, not a system tool's name (" + strings.Join(agent.SystemToolNames, ", ") + ")."},
		{Name: "description", Label: "Description", Kind: kindTextarea, MaxLen: agent.MaxToolDescriptionLen,
			Help: "When and why the model should use the tool; at most " + strconv.Itoa(agent.MaxToolDescriptionLen) + " characters."},
		{Name: "webhookUrl", Label: "Webhook URL", Kind: kindURL, Required: true, Help: "An absolute http or https URL; Parley POSTs the tool's arguments to it."},
		{Name: "schema", Label: "Arguments schema", Kind: kindJSON,
			Help: `A JSON Schema object of the arguments, such as {"type": "object", "properties": {"date": {"type": "string"}}}; blank: no arguments.`},
		{Name: "headers", Label: "Headers", Kind: kindTextarea,
			Help: "One header a line, as Name: value; at most " + strconv.Itoa(agent.MaxToolKeyValues) + "."},
		{Name: "queryParams", Label: "Query parameters", Kind: kindTextarea,
			Help: "One parameter a line, as name=value; at most " + strconv.Itoa(agent.MaxToolKeyValues) + "."},
		timeout,
	}
}()

// toolInput reads the tool form.
func toolInput(form url.Values, creating bool) (agent.ToolInput, *formReader) {
	fr := newFormReader(form, creating)
	in := agent.ToolInput{
		Name:               fr.required("name"),
		Description:        fr.text("description"),
		WebhookURL:         fr.required("webhookUrl"),
		Enabled:            opt.Value(fr.checked("enabled")),
		SendRawRequestBody: opt.Value(fr.checked("sendRawRequestBody")),
		TimeoutSeconds:     fr.number("timeoutSeconds", false),
		Headers:            fr.keyValues("headers", ":", "Name: value"),
		QueryParams:        fr.keyValues("queryParams", "=", "name=value"),
	}
	in.Schema = fr.jsonObject("schema", "must be a JSON object")
	return in, fr
}

// keyValues reads a textarea of one key and value a line, split at sep;
// blank lines are skipped.
func (fr *formReader) keyValues(name, sep, shape string) opt.Field[[]model.KeyValue] {
	lines := fr.lines(name)
	if !lines.Present() {
		return opt.Field[[]model.KeyValue]{}
	}
	out := []model.KeyValue{}
	for i, line := range lines.V {
		k, v, ok := strings.Cut(line, sep)
		if !ok {
			fr.problems.Add(name, "line %d: write it as %s", i+1, shape)
			continue
		}
		out = append(out, model.KeyValue{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
	}
	return opt.Value(out)
}

// toolValues is a stored tool as the form's inputs.
func toolValues(t model.CustomTool) map[string]string {
	v := map[string]string{"name": t.Name, "webhookUrl": t.WebhookURL}
	if t.Description != nil {
		v["description"] = *t.Description
	}
	if b, err := json.MarshalIndent(t.Schema, "", "  "); err == nil {
		v["schema"] = string(b)
	}
	join := func(kvs []model.KeyValue, sep string) string {
		lines := make([]string, len(kvs))
		for i, kv := range kvs {
			lines[i] = kv.Key + sep + kv.Value
		}
		return strings.Join(lines, "\n")
	}
	v["headers"], v["queryParams"] = join(t.Headers, ": "), join(t.QueryParams, "=")
	if t.TimeoutSeconds != nil {
		v["timeoutSeconds"] = strconv.Itoa(*t.TimeoutSeconds)
	}
	if t.Enabled {
		v["enabled"] = "on"
	}
	if t.SendRawRequestBody {
		v["sendRawRequestBody"] = "on"
	}
	return v
}

// toolAgent is the agent the path names, for its tools' pages: another
// organization's is not found.
func (s *Server) toolAgent(w http.ResponseWriter, r *http.Request) (agent.View, bool) {
	v, err := s.Agents.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return agent.View{}, false
	}
	return v, true
}

// agentTool is the organization's agent and its custom tool the path
// names; on false the answer is written.
func (s *Server) agentTool(w http.ResponseWriter, r *http.Request) (agent.View, model.CustomTool, bool) {
	a, ok := s.toolAgent(w, r)
	if !ok {
		return a, model.CustomTool{}, false
	}
	t, err := s.Agents.Tool(r.Context(), orgID(r), a.ID, r.PathValue("toolId"))
	if err != nil {
		s.failFind(w, r, err)
		return a, t, false
	}
	return a, t, true
}

func (s *Server) newTool(w http.ResponseWriter, r *http.Request) {
	a, ok := s.toolAgent(w, r)
	if !ok {
		return
	}
	d := toolFormData{AgentID: a.ID, AgentName: a.Name, Creating: true}
	d.Values = map[string]string{"enabled": "on"}
	s.renderToolForm(w, r, http.StatusOK, d)
}

func (s *Server) createTool(w http.ResponseWriter, r *http.Request) {
	a, ok := s.toolAgent(w, r)
	if !ok {
		return
	}
	saveForm(s, w, r, true, toolInput,
		func(in agent.ToolInput) (model.CustomTool, error) {
			return s.Agents.CreateTool(r.Context(), orgID(r), a.ID, in)
		},
		func(t model.CustomTool) string { return toolPath(a.ID, t.ID) + "?saved=1" },
		func(values map[string]string, err error) {
			d := toolFormData{AgentID: a.ID, AgentName: a.Name, Creating: true}
			d.Values = values
			s.toolFormFailed(w, r, d, err)
		})
}

func (s *Server) editTool(w http.ResponseWriter, r *http.Request) {
	a, t, ok := s.agentTool(w, r)
	if !ok {
		return
	}
	d := toolFormData{AgentID: a.ID, AgentName: a.Name, ID: t.ID, Saved: r.URL.Query().Get("saved") == "1"}
	d.Values = toolValues(t)
	s.renderToolForm(w, r, http.StatusOK, d)
}

func (s *Server) updateTool(w http.ResponseWriter, r *http.Request) {
	a, t, ok := s.agentTool(w, r)
	if !ok {
		return
	}
	saveForm(s, w, r, false, toolInput,
		func(in agent.ToolInput) (model.CustomTool, error) {
			return s.Agents.UpdateTool(r.Context(), orgID(r), a.ID, t.ID, in)
		},
		func(model.CustomTool) string { return toolPath(a.ID, t.ID) + "?saved=1" },
		func(values map[string]string, err error) {
			d := toolFormData{AgentID: a.ID, AgentName: a.Name, ID: t.ID}
			d.Values = values
			s.toolFormFailed(w, r, d, err)
		})
}

func (s *Server) toolFormFailed(w http.ResponseWriter, r *http.Request, d toolFormData, err error) {
	s.refuseForm(w, r, &d.formState, err, "tool", func(status int) {
		d.Errors = underTopFields(d.Errors)
		s.renderToolForm(w, r, status, d)
	})
}

// underTopFields files the schema's inner rules ("schema.type") under its
// input, each message naming the rule.
func underTopFields(errs fieldErrors) fieldErrors {
	out := fieldErrors{}
	for name, msgs := range errs {
		if top := topField(name); top != name {
			for i := range msgs {
				msgs[i] = name + ": " + msgs[i]
			}
			name = top
		}
		out[name] = append(out[name], msgs...)
	}
	return out
}

func (s *Server) renderToolForm(w http.ResponseWriter, r *http.Request, status int, d toolFormData) {
	title := "New custom tool"
	if !d.Creating {
		title = "Edit tool " + d.Values["name"]
	}
	s.render(w, r, status, "tool", title, "agents", d)
}

func (s *Server) confirmDeleteTool(w http.ResponseWriter, r *http.Request) {
	a, t, ok := s.agentTool(w, r)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Delete tool "+t.Name, "agents", confirmData{
		Question: "Delete the custom tool “" + t.Name + "” of " + a.Name + "? The agent can no longer call it.",
		Action:   toolPath(a.ID, t.ID) + "/delete", Button: "Delete tool", Cancel: toolPath(a.ID, t.ID),
	})
}

func (s *Server) deleteTool(w http.ResponseWriter, r *http.Request) {
	a, ok := s.toolAgent(w, r)
	if !ok {
		return
	}
	if err := s.Agents.DeleteTool(r.Context(), orgID(r), a.ID, r.PathValue("toolId")); err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/agents/"+a.ID+"#tools", http.StatusSeeOther)
}

func toolPath(agentID, toolID string) string { return "/agents/" + agentID + "/tools/" + toolID }
