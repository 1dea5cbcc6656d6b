package api

import (
	"net/http"
	"testing"
)

// runtimeConfig is free-form, but its turn-taking keys (endpointing,
// interruption, filler) have rules: a bad type or value is 400
// validation_failed naming its path, on create and on update, and changes
// nothing; unknown keys, at any depth, are kept as given.
func TestAgentRuntimeConfigTurnTaking(t *testing.T) {
	e := newEnv(t)
	good := map[string]any{
		"endpointing":  map[string]any{"minSilenceMs": 250, "maxSilenceMs": 1000, "vadSensitivity": 0.5, "vendorKnob": "kept"},
		"interruption": map[string]any{"minWords": 2},
		"filler":       map[string]any{"enabled": true, "afterMs": 1500, "phrases": []any{"One moment.", "Let me check that."}, "sound": "soft"},
		"vad":          map[string]any{"threshold": 0.5},
	}
	a := e.createAgent(map[string]any{"runtimeConfig": good})
	id := a["id"].(string)
	if !jsonEqual(a["runtimeConfig"], good) {
		t.Fatalf("runtimeConfig = %v, want %v", a["runtimeConfig"], good)
	}
	for _, c := range []struct {
		name   string
		rc     map[string]any
		fields []string
	}{
		{"endpointing not an object", map[string]any{"endpointing": 300}, []string{"runtimeConfig.endpointing"}},
		{"minSilenceMs too short", map[string]any{"endpointing": map[string]any{"minSilenceMs": 50}}, []string{"runtimeConfig.endpointing.minSilenceMs"}},
		{"minSilenceMs a string", map[string]any{"endpointing": map[string]any{"minSilenceMs": "300"}}, []string{"runtimeConfig.endpointing.minSilenceMs"}},
		{"minSilenceMs fractional", map[string]any{"endpointing": map[string]any{"minSilenceMs": 300.5}}, []string{"runtimeConfig.endpointing.minSilenceMs"}},
		{"maxSilenceMs too long", map[string]any{"endpointing": map[string]any{"maxSilenceMs": 6000}}, []string{"runtimeConfig.endpointing.maxSilenceMs"}},
		{"maxSilenceMs under minSilenceMs", map[string]any{"endpointing": map[string]any{"minSilenceMs": 900, "maxSilenceMs": 600}}, []string{"runtimeConfig.endpointing.maxSilenceMs"}},
		{"vadSensitivity over 1", map[string]any{"endpointing": map[string]any{"vadSensitivity": 1.5}}, []string{"runtimeConfig.endpointing.vadSensitivity"}},
		{"minWords negative", map[string]any{"interruption": map[string]any{"minWords": -1}}, []string{"runtimeConfig.interruption.minWords"}},
		{"minWords a boolean", map[string]any{"interruption": map[string]any{"minWords": true}}, []string{"runtimeConfig.interruption.minWords"}},
		{"filler.enabled a string", map[string]any{"filler": map[string]any{"enabled": "no"}}, []string{"runtimeConfig.filler.enabled"}},
		{"filler.afterMs too short", map[string]any{"filler": map[string]any{"afterMs": 100}}, []string{"runtimeConfig.filler.afterMs"}},
		{"filler.phrases empty", map[string]any{"filler": map[string]any{"phrases": []any{}}}, []string{"runtimeConfig.filler.phrases"}},
		{"a blank phrase", map[string]any{"filler": map[string]any{"phrases": []any{"One moment.", "  "}}}, []string{"runtimeConfig.filler.phrases[1]"}},
		{"filler.sound unknown", map[string]any{"filler": map[string]any{"sound": "beep"}}, []string{"runtimeConfig.filler.sound"}},
		{"every key at once", map[string]any{
			"endpointing":  map[string]any{"minSilenceMs": 0, "vadSensitivity": -1},
			"interruption": map[string]any{"minWords": 11},
			"filler":       map[string]any{"afterMs": 20000, "sound": 1},
		}, []string{"runtimeConfig.endpointing.minSilenceMs", "runtimeConfig.endpointing.vadSensitivity",
			"runtimeConfig.interruption.minWords", "runtimeConfig.filler.afterMs", "runtimeConfig.filler.sound"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.invalid("validation_failed", "POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P", "runtimeConfig": c.rc}, c.fields...)
			e.invalid("validation_failed", "PATCH", "/v1/agents/"+id, map[string]any{"runtimeConfig": c.rc, "name": "Renamed"}, c.fields...)
		})
	}
	got := e.must(http.StatusOK, "GET", "/v1/agents/"+id, nil).Data(t)
	if !jsonEqual(got["runtimeConfig"], good) || got["name"] != a["name"] {
		t.Errorf("refused updates changed the agent: %v %v", got["name"], got["runtimeConfig"])
	}
	if n := countAgents(e); n != 1 {
		t.Errorf("refused creates stored agents: %d agents", n)
	}
	// Every limit is inclusive, and a PATCH replaces runtimeConfig whole;
	// null clears it.
	edge := map[string]any{
		"endpointing":  map[string]any{"minSilenceMs": 100, "maxSilenceMs": 5000, "vadSensitivity": 0},
		"interruption": map[string]any{"minWords": 0},
		"filler":       map[string]any{"enabled": false, "afterMs": 10000, "phrases": []any{"x"}, "sound": "none"},
	}
	p := e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"runtimeConfig": edge}).Data(t)
	if !jsonEqual(p["runtimeConfig"], edge) {
		t.Errorf("runtimeConfig after PATCH = %v", p["runtimeConfig"])
	}
	p = e.must(http.StatusOK, "PATCH", "/v1/agents/"+id, map[string]any{"runtimeConfig": nil}).Data(t)
	if p["runtimeConfig"] != nil {
		t.Errorf("runtimeConfig after null = %v", p["runtimeConfig"])
	}
	// Documented objects given as null are the defaults, not errors.
	e.createAgent(map[string]any{"runtimeConfig": map[string]any{"endpointing": nil, "filler": map[string]any{"phrases": nil}}})
}
