package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/webhook"
)

// maxToolResult is how much of a custom tool's response the model gets.
const maxToolResult = 16 << 10

// customToolDef offers a custom tool as a function. Its schema is the
// function's JSON Schema parameters, or a whole function definition
// ({description, parameters}) when it has a "parameters" key.
func customToolDef(t model.CustomTool) llm.Tool {
	params, desc := t.Schema, deref(t.Description)
	if p, ok := t.Schema["parameters"].(map[string]any); ok {
		params = p
		if d, ok := t.Schema["description"].(string); ok && desc == "" {
			desc = d
		}
	}
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return llm.Tool{Name: t.Name, Description: desc, Parameters: params}
}

func (s *agentSide) customTool(name string) (model.CustomTool, bool) {
	for _, t := range s.tools {
		if t.Name == name {
			return t, true
		}
	}
	return model.CustomTool{}, false
}

// callCustomTool calls the tool's webhook, as conventions.md describes:
// POST {"event":"custom_tool","callId","agentId","tool","args"} (or the
// raw args with sendRawRequestBody), the tool's headers and query
// parameters, signed like every webhook, bounded by its timeout and the
// SSRF guard. The response body, cut at 16 KiB, is the result. callId is
// null in a text chat: it has no call record.
func (s *agentSide) callCustomTool(ctx context.Context, t model.CustomTool, args string) string {
	if s.e.Webhooks == nil {
		return "error: custom tools are not available on this server"
	}
	var parsed map[string]any
	if args == "" {
		args = "{}"
	}
	if err := opt.Unmarshal([]byte(args), &parsed); err != nil {
		// A key given twice would reach the tool as the last of them while
		// the transcript shows both: the model is asked again instead.
		if dup := (*opt.DecodeError)(nil); errors.As(err, &dup) {
			return "error: the arguments must give each key once: " + err.Error()
		}
		return "error: the arguments must be a JSON object"
	}
	var body []byte
	if t.SendRawRequestBody {
		body, _ = json.Marshal(parsed)
	} else {
		var callID any // null, never "": no call record has the empty id
		if s.call.ID != "" {
			callID = s.call.ID
		}
		body, _ = json.Marshal(map[string]any{"event": webhook.EventCustomTool, "callId": callID,
			"agentId": s.call.AgentID, "tool": t.Name, "args": parsed})
	}
	d := webhook.Delivery{Event: webhook.EventCustomTool, URL: t.WebhookURL, Body: body,
		Query: url.Values{}, MaxResponse: maxToolResult}
	for _, h := range t.Headers {
		d.Headers = append(d.Headers, webhook.Header{Key: h.Key, Value: h.Value})
	}
	for _, q := range t.QueryParams {
		d.Query.Add(q.Key, q.Value)
	}
	if t.TimeoutSeconds != nil && *t.TimeoutSeconds > 0 {
		d.Timeout = time.Duration(*t.TimeoutSeconds) * time.Second
	}
	if s.e.Secret != nil {
		secret, err := s.e.Secret(context.WithoutCancel(ctx), s.call.OrgID)
		if err != nil {
			s.e.log().Error("custom tool: signing secret", "call_id", s.call.ID, "err", err)
		}
		d.Secret = secret
	}
	res := s.e.Webhooks.Deliver(ctx, d)
	if !res.Sent {
		return "error: " + res.Err.Error()
	}
	out := res.Body
	for !utf8.Valid(out) && len(out) > 0 && res.Truncated { // do not cut a character in two
		out = out[:len(out)-1]
	}
	return string(out)
}
