package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/opt"
)

// formValues are an agent form's inputs as text, by field name; Lists
// holds the multi-valued ones (knowledge bases).
type formValues struct {
	Text  map[string]string
	Lists map[string][]string
}

// agentInput turns a submitted agent form into the API's request, by way
// of the very JSON the API would receive, decoded by the API's own strict
// decoder: the form can express nothing the API refuses, and the service
// checks the rest. creating is true for a new agent: blank inputs are
// left out (defaults apply); on edit a blank input clears its field.
func agentInput(form url.Values, creating bool) (agent.Input, formValues, error) {
	vals := formValues{Text: map[string]string{}, Lists: map[string][]string{}}
	body := map[string]json.RawMessage{}
	var l invalid.List
	for _, sec := range agentForm {
		for _, f := range sec.Fields {
			if f.CreateOnly && !creating {
				continue
			}
			if f.Kind == kindKnowledge {
				ids := form[f.Name]
				vals.Lists[f.Name] = ids
				if len(ids) > 0 || !creating {
					body[f.Name] = mustJSON(nonNilStrings(ids))
				}
				continue
			}
			raw := form.Get(f.Name)
			vals.Text[f.Name] = raw
			if p := invalid.Text(raw); p != "" {
				l.Add(f.Name, "%s", p)
				continue
			}
			v := raw
			if f.Kind != kindTextarea {
				v = strings.TrimSpace(raw)
			}
			if v == "" {
				switch {
				case creating:
				case f.Required:
					body[f.Name] = mustJSON("") // "must not be empty", from the service
				default:
					body[f.Name] = json.RawMessage("null")
				}
				continue
			}
			switch f.Kind {
			case kindInt:
				n, err := strconv.Atoi(v)
				if err != nil {
					l.Add(f.Name, "must be a whole number")
					continue
				}
				body[f.Name] = mustJSON(n)
			case kindFloat:
				x, err := strconv.ParseFloat(v, 64)
				if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
					l.Add(f.Name, "must be a number")
					continue
				}
				body[f.Name] = mustJSON(x)
			case kindBool:
				if v != "true" && v != "false" {
					l.Add(f.Name, "must be yes, no or unset")
					continue
				}
				body[f.Name] = json.RawMessage(v)
			case kindJSON:
				if !json.Valid([]byte(v)) {
					l.Add(f.Name, "must be valid JSON")
					continue
				}
				body[f.Name] = json.RawMessage(v)
			default:
				body[f.Name] = mustJSON(v)
			}
		}
	}
	var in agent.Input
	err := opt.Decode(mustJSON(body), &in)
	var decode *opt.DecodeError
	if errors.As(err, &decode) {
		// Leave out what has the wrong shape and decode the rest, so its
		// rules are reported too.
		for _, f := range decode.Fields {
			l.Add(f.Name, "%s", f.Message)
			delete(body, topField(f.Name))
		}
		in = agent.Input{}
		err = opt.Decode(mustJSON(body), &in)
	}
	if err != nil {
		return agent.Input{}, vals, joinInvalid(&l, err)
	}
	if !l.Empty() {
		// Some inputs do not parse: report them with every rule the rest
		// break, so one submission shows all there is to correct.
		return agent.Input{}, vals, joinInvalid(&l, agent.Check(in, creating))
	}
	return in, vals, nil
}

// joinInvalid adds err's broken fields to l and returns them all; an
// error that is not about fields is returned as it is.
func joinInvalid(l *invalid.List, err error) error {
	var (
		bad    *invalid.Error
		decode *opt.DecodeError
	)
	switch {
	case err == nil:
	case errors.As(err, &bad):
		for _, f := range bad.Fields {
			l.Add(f.Name, "%s", f.Message)
		}
	case errors.As(err, &decode):
		for _, f := range decode.Fields {
			l.Add(f.Name, "%s", f.Message)
		}
	default:
		return err
	}
	return l.Err()
}

// agentValues are a stored agent's fields as the form shows them.
func agentValues(v agent.View) formValues {
	vals := formValues{Text: map[string]string{}, Lists: map[string][]string{}}
	fields := map[string]json.RawMessage{}
	cfg, _ := json.Marshal(v.Config) // plain data: cannot fail
	_ = json.Unmarshal(cfg, &fields)
	fields["name"] = mustJSON(v.Name)
	fields["status"] = mustJSON(v.Status)
	fields["mode"] = mustJSON(v.Mode)
	fields["folderId"] = mustJSON(v.FolderID)
	fields["sipTrunkId"] = mustJSON(v.SIPTrunkID)
	fields["messagingConnectionId"] = mustJSON(v.MessagingConnectionID)
	for _, kb := range v.KnowledgeBases {
		vals.Lists["knowledgeBaseIds"] = append(vals.Lists["knowledgeBaseIds"], kb.ID)
	}
	for _, sec := range agentForm {
		for _, f := range sec.Fields {
			raw, ok := fields[f.Name]
			if !ok || string(raw) == "null" {
				continue
			}
			var s string
			switch {
			case f.Kind == kindJSON:
				var b bytes.Buffer
				if json.Indent(&b, raw, "", "  ") == nil {
					s = b.String()
				}
			case json.Unmarshal(raw, &s) == nil:
			default:
				s = string(raw) // numbers and booleans as JSON writes them
			}
			vals.Text[f.Name] = s
		}
	}
	return vals
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("web: marshal " + err.Error()) // only plain values reach here
	}
	return b
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
