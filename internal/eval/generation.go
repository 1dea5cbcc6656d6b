package eval

import (
	"context"
	"errors"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/store"
)

// UnavailableError is a request the language model could not serve: none
// is configured, it failed, or its answer was unusable twice. The API
// answers it 503 with Message.
type UnavailableError struct {
	Message string
}

func (e *UnavailableError) Error() string { return e.Message }

// GenerateInput is a POST /test-suites/{id}/generate-tests request.
type GenerateInput struct {
	Prompt           opt.Field[string]            `json:"prompt"`
	PreviousMessages opt.Field[[]PreviousMessage] `json:"previousMessages"`
}

// PreviousMessage is one message of an earlier generation, sent back to
// refine it. Role is optional: missing roles alternate, user first.
type PreviousMessage struct {
	Role    opt.Field[string] `json:"role"`
	Content opt.Field[string] `json:"content"`
}

func (in *GenerateInput) check() ([]ChatMessage, error) {
	var l invalid.List
	requiredText(&l, "prompt", in.Prompt, true, MaxGeneratePrompt)
	if in.PreviousMessages.Null {
		l.Add("previousMessages", "must not be null")
	}
	if n := len(in.PreviousMessages.V); n > MaxPreviousMessages {
		l.Add("previousMessages", "must have at most %d messages", MaxPreviousMessages)
	}
	var out []ChatMessage
	for i, m := range in.PreviousMessages.V {
		at := invalid.Index("previousMessages", i)
		if m.Role.Null || (m.Role.Set && m.Role.V != llm.RoleUser && m.Role.V != llm.RoleAssistant) {
			l.Add(at+".role", "must be one of user, assistant")
		}
		switch {
		case !m.Content.Present():
			l.Add(at+".content", "is required")
		case invalid.Len(m.Content.V) > MaxPreviousMessageContent:
			l.Add(at+".content", "must be at most %d characters", MaxPreviousMessageContent)
		}
		out = append(out, ChatMessage{Role: m.Role.V, Content: m.Content.V})
	}
	return out, l.Err()
}

// Generated is what generation answers: the tests, not saved, and the
// conversation so far, to send back as previousMessages.
type Generated struct {
	Tests    []GeneratedTest `json:"tests"`
	Messages []ChatMessage   `json:"messages"`
}

// GenerateTests writes test cases for the suite's agent from a description
// of scenarios, refining earlier ones when previousMessages are given. The
// agent's prompt is the generator's context. Nothing is saved: the user
// creates the cases they keep.
func (s *Service) GenerateTests(ctx context.Context, orgID, suiteID string, in GenerateInput) (Generated, error) {
	previous, err := in.check()
	if err != nil {
		return Generated{}, err
	}
	var prompt string
	err = s.Store.View(ctx, func(tx store.Tx) error {
		suite, err := tx.GetTestSuite(ctx, orgID, suiteID)
		if err != nil {
			return err
		}
		a, err := tx.GetAgent(ctx, orgID, suite.AgentID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return &invalid.Conflict{Message: "the test suite's agent was deleted: point the suite at another agent"}
		case err != nil:
			return err
		}
		prompt = agentContext(a)
		return nil
	})
	if err != nil {
		return Generated{}, err
	}
	if s.Generator.LLM == nil {
		return Generated{}, &UnavailableError{Message: errNoModel.Message}
	}
	tests, messages, err := s.Generator.Generate(ctx, prompt, in.Prompt.V, previous)
	if err != nil {
		if ctx.Err() != nil {
			return Generated{}, ctx.Err()
		}
		return Generated{}, &UnavailableError{Message: "test generation failed: " + err.Error()}
	}
	return Generated{Tests: tests, Messages: messages}, nil
}

// agentContext is what the generator is told about the agent: its prompt,
// and how it opens calls.
func agentContext(a model.Agent) string {
	out := a.Config.PromptTemplate
	if m := a.Config.FirstMessage; m != nil && *m != "" {
		out += "\n\nThe agent opens its calls with: " + *m
	}
	return out
}
