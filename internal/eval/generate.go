package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// Limits of a generate-tests request, for the API's validation.
const (
	MaxGeneratePrompt         = 5000  // characters of prompt
	MaxPreviousMessages       = 50    // entries of previousMessages
	MaxPreviousMessageContent = 20000 // characters of one previous message's content
)

// Limits of what the generator accepts from the model: a test case's own
// limits, so every generated test can be saved as a case. An answer over
// them is malformed (asked for again), not cut: a cut script or rubric
// would silently test something else.
const (
	MaxGeneratedTests     = 20
	maxGeneratedName      = 128
	maxGeneratedScript    = 10000
	maxGeneratedRubric    = 5000
	maxAgentPromptContext = 20000 // characters of the agent's prompt shown to the generator
)

// ErrMalformedGeneration: the model's answer was not a valid list of tests
// twice in a row. The error wrapping it says what was wrong with the second.
var ErrMalformedGeneration = errors.New("the model's tests were not valid twice")

// Generator writes test cases for an agent with the language model.
type Generator struct {
	LLM   llm.Client
	Model string // "": the client's configured model
}

// GeneratedTest is one test case the generator wrote, not saved.
type GeneratedTest struct {
	Name          string `json:"name"`
	Script        string `json:"script"`
	ScoringRubric string `json:"scoringRubric"`
}

// ChatMessage is one message of a generation conversation.
type ChatMessage struct {
	Role    string `json:"role"` // user or assistant
	Content string `json:"content"`
}

// generatorSystemPrompt is the generator's task; the agent's prompt
// follows it.
const generatorSystemPrompt = `You write test cases for a voice agent: an AI agent that talks with people on the phone. Each test case is one simulated phone call: another AI plays the caller, following the test's script, and talks with the agent; afterwards a judge reads the call's transcript (what both said, and every tool the agent called with its arguments and result) and decides by the test's scoring rubric whether the agent passed.

Every test case has:
- "name": a short title of the scenario, at most 128 characters, such as "Books a table for four on Friday".
- "script": instructions for the simulated caller, written to them in the second person: "You are a caller who ...". Say who the caller is, what they want, the facts they know (names, numbers, dates), how they behave (for example impatient, confused, changing their mind) and when to end the call. The caller cannot see the agent's prompt, so the script must contain everything the caller needs. At most 10000 characters.
- "scoringRubric": the pass criteria for the agent, not the caller: concrete requirements that can be checked from the transcript, such as what the agent must say, ask or confirm, which tools it must call with which arguments, and what it must not do. The test passes only if every requirement is met. At most 5000 characters.

Write the test cases the user asks for, between 1 and 20. Cover the scenarios the user describes; make the tests realistic for this agent and independent of each other. When the user asks you to change tests you wrote earlier in this conversation, answer with the whole revised list.

Answer with a JSON object {"tests": [...]} and nothing else.`

// testsSchema is the structured output the generator asks for.
var testsSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"tests": map[string]any{
			"type": "array",
			"items": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name":          map[string]any{"type": "string", "description": "short title of the scenario"},
					"script":        map[string]any{"type": "string", "description": "instructions for the simulated caller, second person"},
					"scoringRubric": map[string]any{"type": "string", "description": "pass criteria for the agent under test"},
				},
				"required":             []any{"name", "script", "scoringRubric"},
				"additionalProperties": false,
			},
		},
	},
	"required":             []any{"tests"},
	"additionalProperties": false,
}

// Generate writes test cases for the agent whose prompt is agentPrompt,
// from prompt, a description of the scenarios to test. previous is the
// conversation of earlier generations (the messages an earlier call
// returned), for refining them ("make them harder"); a message without a
// role takes the one its position implies, the roles alternating from user:
// the opposite of the message before it, user for the first.
//
// messages is the conversation to send back next time: previous with its
// roles filled in, then prompt as a user message, then the model's answer
// (the tests as JSON) as an assistant message. An answer that is not a
// valid list of tests is shown to the model and asked for again once; a
// second invalid one is an error wrapping ErrMalformedGeneration. Errors
// of the model itself are returned wrapped. The request limits
// (MaxGeneratePrompt, ...) are the API's to check; Generate refuses only
// a blank prompt and unknown roles.
func (g Generator) Generate(ctx context.Context, agentPrompt string, prompt string, previous []ChatMessage) (tests []GeneratedTest, messages []ChatMessage, err error) {
	if strings.TrimSpace(prompt) == "" {
		return nil, nil, errors.New("generating tests needs a prompt describing the scenarios")
	}
	history, err := NormalizeMessages(previous)
	if err != nil {
		return nil, nil, err
	}
	if g.LLM == nil {
		return nil, nil, fmt.Errorf("generating tests needs a language model: %w", ErrNoLLM)
	}
	about := strings.TrimSpace(agentPrompt)
	if about == "" {
		about = "(The agent has no prompt.)"
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: generatorSystemPrompt +
		"\n\nThe prompt of the agent under test, for context:\n<agent_prompt>\n" + shorten(about, maxAgentPromptContext) + "\n</agent_prompt>"}}
	for _, m := range history {
		msgs = append(msgs, llm.Message{Role: m.Role, Content: m.Content})
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: prompt})
	req := llm.Request{
		Model:    g.Model,
		Messages: msgs,
		ResponseFormat: &llm.JSONSchema{
			Name:        "test_cases",
			Description: "Test cases for the voice agent",
			Schema:      testsSchema,
			Strict:      true,
		},
	}
	tests, err = askStructured(ctx, g.LLM, req, parseTests)
	if m, ok := errors.AsType[*malformedError](err); ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrMalformedGeneration, m.reason)
	}
	if err != nil {
		return nil, nil, err
	}
	// The answer goes back as the tests accepted, in compact JSON: the
	// model sees its own earlier answer next time, without any code fence
	// or stray spaces it came with, and a person reading it sees & and <
	// rather than their \u escapes.
	var answer strings.Builder
	enc := json.NewEncoder(&answer)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"tests": tests}); err != nil {
		return nil, nil, err
	}
	messages = append(history,
		ChatMessage{Role: llm.RoleUser, Content: prompt},
		ChatMessage{Role: llm.RoleAssistant, Content: strings.TrimSuffix(answer.String(), "\n")})
	return tests, messages, nil
}

// NormalizeMessages fills in the roles of previous messages: a message
// without one takes the opposite of the message before it, user for the
// first. A role other than user, assistant or "" is an error. previous is
// not changed.
func NormalizeMessages(previous []ChatMessage) ([]ChatMessage, error) {
	out := make([]ChatMessage, len(previous))
	for i, m := range previous {
		switch m.Role {
		case llm.RoleUser, llm.RoleAssistant:
		case "":
			m.Role = llm.RoleUser
			if i > 0 && out[i-1].Role == llm.RoleUser {
				m.Role = llm.RoleAssistant
			}
		default:
			return nil, fmt.Errorf("previous message %d: role %q is not user or assistant", i, m.Role)
		}
		out[i] = m
	}
	return out, nil
}

// parseTests decodes doc as {"tests": [...]}: 1 to MaxGeneratedTests
// tests, each with exactly a name, a script and a scoringRubric, strings
// that are not blank and within their limits. The strings come back
// trimmed.
func parseTests(doc string) ([]GeneratedTest, error) {
	fields, err := jsonObject(doc, "the answer")
	if err != nil {
		return nil, err
	}
	if err := exactFields(fields, "", "tests"); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(fields["tests"], &items); err != nil || items == nil {
		return nil, errors.New(`"tests" is not an array`)
	}
	switch {
	case len(items) == 0:
		return nil, errors.New(`"tests" is empty: write at least 1 test`)
	case len(items) > MaxGeneratedTests:
		return nil, fmt.Errorf(`"tests" has %d tests: write at most %d`, len(items), MaxGeneratedTests)
	}
	tests := make([]GeneratedTest, len(items))
	for i, item := range items {
		at := fmt.Sprintf("tests[%d].", i)
		f, err := jsonObject(string(item), fmt.Sprintf("tests[%d]", i))
		if err != nil {
			return nil, err
		}
		if err := exactFields(f, at, "name", "script", "scoringRubric"); err != nil {
			return nil, err
		}
		t := &tests[i]
		for _, s := range []struct {
			name string
			max  int
			dst  *string
		}{
			{"name", maxGeneratedName, &t.Name},
			{"script", maxGeneratedScript, &t.Script},
			{"scoringRubric", maxGeneratedRubric, &t.ScoringRubric},
		} {
			v, err := jsonString(f, at, s.name)
			if err != nil {
				return nil, err
			}
			if n := invalid.Len(v); n > s.max {
				return nil, fmt.Errorf("%q has %d characters: at most %d", at+s.name, n, s.max)
			}
			*s.dst = invalid.Storable(v)
		}
	}
	return tests, nil
}
