package call

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// Defaults of the system variables when the agent sets none.
const (
	DefaultTimezone = "UTC"
	DefaultLanguage = "en"
	// CurrentTimeLayout is how current_time reads, in the agent's time zone.
	CurrentTimeLayout = "Monday, January 2, 2006 3:04 PM MST"
)

// SystemVariables are the variables every call carries: direction
// ("inbound" or "outbound"), user_number (the other party), agent_number
// (the agent's side), current_time in the agent's time zone, timezone and
// language.
func SystemVariables(a model.Agent, direction, fromNumber, toNumber string, now time.Time) map[string]any {
	tz := DefaultTimezone
	if a.Config.Timezone != nil {
		tz = *a.Config.Timezone
	}
	lang := DefaultLanguage
	if a.Config.Language != nil {
		lang = *a.Config.Language
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc, tz = time.UTC, DefaultTimezone
	}
	user, agentNumber := toNumber, fromNumber
	if direction == model.Inbound {
		user, agentNumber = fromNumber, toNumber
	}
	return map[string]any{
		"direction":    strings.ToLower(direction),
		"user_number":  user,
		"agent_number": agentNumber,
		"current_time": now.In(loc).Format(CurrentTimeLayout),
		"timezone":     tz,
		"language":     lang,
	}
}

// Merge builds a call's variables. Later layers win: the agent's
// defaultVariables, then the system variables, then the caller's (the
// variables of POST /calls, or the pre-call webhook's on inbound calls),
// which may therefore override system ones such as current_time.
func Merge(defaults, system, caller map[string]any) map[string]any {
	out := make(map[string]any, len(defaults)+len(system)+len(caller))
	maps.Copy(out, defaults)
	maps.Copy(out, system)
	maps.Copy(out, caller)
	return out
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}`)

// Render replaces each {{name}} in template (names are case-sensitive;
// spaces inside the braces are allowed) with its variable. A placeholder
// with no variable renders as the empty string, so the model never sees
// template syntax. Strings render as they are, other values as JSON.
func Render(template string, vars map[string]any) string {
	return placeholder.ReplaceAllStringFunc(template, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok || v == nil {
			return ""
		}
		if s, isString := v.(string); isString {
			return s
		}
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
		return fmt.Sprint(v)
	})
}
