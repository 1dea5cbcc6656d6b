package api

import (
	"fmt"
	"net/http"
	"testing"
)

// The API's own cost per request, over loopback HTTP on the embedded SQLite
// store: make bench. Results go in docs/benchmarks.md with the command.

func BenchmarkCreateAgent(b *testing.B) {
	e := newEnv(b, withRateLimit(0, 0))
	body := map[string]any{"name": "Bench", "promptTemplate": "You are a benchmark.", "firstMessage": "Hi", "llmTemperature": 0.5}
	b.ResetTimer()
	for b.Loop() {
		if r := e.do("POST", "/v1/agents", body); r.Status != http.StatusCreated {
			b.Fatalf("create = %d", r.Status)
		}
	}
}

func BenchmarkGetAgent(b *testing.B) {
	e := newEnv(b, withRateLimit(0, 0))
	id := e.createAgent(nil)["id"].(string)
	for b.Loop() {
		if r := e.do("GET", "/v1/agents/"+id, nil); r.Status != http.StatusOK {
			b.Fatalf("get = %d", r.Status)
		}
	}
}

// A page of 25 from 2,000 agents, filtered by name, sorted by name.
func BenchmarkListAgents(b *testing.B) {
	e := newEnv(b, withRateLimit(0, 0))
	folder := e.create("/v1/folders", map[string]any{"name": "F"})
	for i := range 2000 {
		e.createAgent(map[string]any{"name": fmt.Sprintf("agent %04d", i), "folderId": folder["id"]})
	}
	for b.Loop() {
		if r := e.do("GET", "/v1/agents?q=agent+1&sortBy=name&pageSize=25&page=3", nil); r.Status != http.StatusOK {
			b.Fatalf("list = %d", r.Status)
		}
	}
}
