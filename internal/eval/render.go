package eval

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// Bounds on one tool call's text in a rendered transcript: a knowledge-base
// answer or a webhook's body can run to kilobytes the judge does not need
// whole to see what the agent was told.
const (
	maxRenderedArgs   = 2000
	maxRenderedOutput = 4000
)

// renderTranscript writes a call record's transcript entries (the engine's
// shapes: messages, tool calls, fillers) as numbered lines for the judge to read,
// from the agent under test's side: its own words are "Agent", the
// simulated caller's "Caller", and every tool call shows its name,
// arguments and result. Entries of other shapes are written out as JSON
// rather than dropped.
func renderTranscript(entries []map[string]any) string {
	if len(entries) == 0 {
		return "(The transcript is empty: nothing was said on the call.)"
	}
	var b strings.Builder
	for _, e := range entries {
		if at, ok := seconds(e["at"]); ok && at >= 0 {
			s := int(at)
			fmt.Fprintf(&b, "[%d:%02d] ", s/60, s%60)
		}
		role, _ := e["role"].(string)
		kind, _ := e["type"].(string)
		switch {
		case kind == "message" && (role == "assistant" || role == "user"):
			who := "Caller"
			if role == "assistant" {
				who = "Agent"
				if e["interrupted"] == true {
					who = "Agent (interrupted by the caller; only what was heard)"
				}
			}
			text, _ := e["text"].(string)
			fmt.Fprintf(&b, "%s: %s\n", who, text)
		case kind == "filler":
			// Said or played while a tool ran, not one of the agent's answers.
			if text, _ := e["text"].(string); text != "" {
				fmt.Fprintf(&b, "Agent (filler while a tool ran): %s\n", text)
			} else {
				b.WriteString("(A soft waiting sound played while a tool ran.)\n")
			}
		case kind == "tool_call":
			tool, _ := e["tool"].(map[string]any)
			name, _ := tool["name"].(string)
			fmt.Fprintf(&b, "Agent called the tool %q with arguments %s\n", name, shorten(asText(tool["args"]), maxRenderedArgs))
			result, ok := e["result"].(map[string]any)
			if out, has := result["output"]; ok && has {
				fmt.Fprintf(&b, "    Result: %s\n", shorten(asText(out), maxRenderedOutput))
			} else {
				b.WriteString("    Result: (none recorded)\n")
			}
		default:
			rest := maps.Clone(e)
			for _, k := range []string{"at", "endAt", "seq", "turnId", "isFinal"} {
				delete(rest, k)
			}
			fmt.Fprintf(&b, "(%s entry) %s\n", strings.TrimSpace(role+" "+kind), asText(rest))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// asText is v as the judge reads it: a string as it is (tool arguments are
// JSON text already), anything else as JSON (map keys sorted, so the text is stable).
func asText(v any) string {
	switch v := v.(type) {
	case nil:
		return "(none)"
	case string:
		return v
	}
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(out)
}

// seconds is an entry's "at": a float64 when decoded from the store's
// JSON, but an entry made in memory may hold another number type.
func seconds(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}
