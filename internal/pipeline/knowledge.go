package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// Retriever finds the chunks of knowledge bases relevant to a query
// (knowledge.Service).
type Retriever interface {
	Retrieve(ctx context.Context, orgID string, kbIDs []string, query string, k int, threshold float64) ([]knowledge.Hit, error)
}

const (
	toolSearchKnowledge = "search_knowledge_base"
	// defaultRetrievalBudget is Engine.RetrievalBudget unless set: a
	// caller waits for the answer while the chunks are found.
	defaultRetrievalBudget = 300 * time.Millisecond
	// queryToolTimeout bounds a search the model asked for.
	queryToolTimeout = 3 * time.Second
)

// knowledgeMode is how the agent uses its knowledge bases: "" (none
// assigned), "automatic" (the default) or "query_tool".
func (s *agentSide) knowledgeMode() string {
	if len(s.kbIDs) == 0 || s.e.Knowledge == nil {
		return ""
	}
	if m := deref(s.agent.KnowledgeBaseRetrievalMode); m == "query_tool" {
		return m
	}
	return "automatic"
}

func (s *agentSide) knowledgeChunks() int {
	if v := s.agent.KnowledgeBaseChunks; v != nil && *v > 0 {
		return *v
	}
	return knowledge.DefaultChunks
}

func (s *agentSide) knowledgeThreshold() float64 {
	if v := s.agent.KnowledgeBaseSimilarityThreshold; v != nil {
		return *v
	}
	return 0
}

// retrieve runs one retrieval and records it in the conversation's metrics.
func (s *agentSide) retrieve(ctx context.Context, turnID, query string, budget time.Duration) []knowledge.Hit {
	rctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	began := time.Now()
	hits, err := s.e.Knowledge.Retrieve(rctx, s.call.OrgID, s.kbIDs, query, s.knowledgeChunks(), s.knowledgeThreshold())
	took := time.Since(began)
	if err != nil {
		s.e.log().Warn("knowledge retrieval failed", "call_id", s.call.ID, "err", err, "ms", took.Milliseconds())
		hits = nil
	}
	s.metrics.addRetrieval(turnID, query, hits, took, err)
	return hits
}

// withKnowledge is the request's messages with the chunks retrieved for the
// caller's last words placed just before them (automatic mode). They are
// not kept in the history: each turn gets its own.
func (s *agentSide) withKnowledge(ctx context.Context, turnID string, msgs []llm.Message) []llm.Message {
	if s.knowledgeMode() != "automatic" || len(msgs) == 0 || msgs[len(msgs)-1].Role != llm.RoleUser {
		return msgs
	}
	last := msgs[len(msgs)-1]
	budget := s.e.RetrievalBudget
	if budget <= 0 {
		budget = defaultRetrievalBudget
	}
	hits := s.retrieve(ctx, turnID, last.Content, budget)
	if len(hits) == 0 {
		return msgs
	}
	note := llm.Message{Role: llm.RoleSystem, Content: "Excerpts from the knowledge base that may help with the caller's next message " +
		"(use them if relevant; do not read them out verbatim):\n" + excerpts(hits)}
	out := append(append([]llm.Message{}, msgs[:len(msgs)-1]...), note, last)
	return out
}

func excerpts(hits []knowledge.Hit) string {
	var b strings.Builder
	for i, h := range hits {
		fmt.Fprintf(&b, "[%d] %s: %s\n", i+1, h.DisplayName, h.Text)
	}
	return b.String()
}

// searchTool is search_knowledge_base, offered in query_tool mode.
func searchTool() llm.Tool {
	return llm.Tool{Name: toolSearchKnowledge,
		Description: "Search the business's knowledge base for facts to answer the caller (policies, prices, hours, products). Use it before answering factual questions.",
		Parameters: map[string]any{"type": "object", "required": []any{"query"},
			"properties": map[string]any{"query": map[string]any{"type": "string", "description": "what to look up, in a few words"}}}}
}

// searchKnowledge runs the model's search.
func (s *agentSide) searchKnowledge(ctx context.Context, turnID, args string) string {
	var a struct {
		Query string `json:"query"`
	}
	if err := opt.Unmarshal([]byte(args), &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return `error: give the search as {"query": "refund policy"}`
	}
	hits := s.retrieve(ctx, turnID, a.Query, queryToolTimeout)
	if len(hits) == 0 {
		return "no results"
	}
	return excerpts(hits)
}
