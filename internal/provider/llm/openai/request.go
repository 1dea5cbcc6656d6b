package openai

import (
	"fmt"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/parley-voice/parley/internal/provider/llm"
)

// params translates r into the SDK's request body.
func (c *Client) params(r llm.Request) (sdk.ChatCompletionNewParams, error) {
	model := r.Model
	if model == "" {
		model = c.model
	}
	if model == "" {
		return sdk.ChatCompletionNewParams{}, fmt.Errorf("%w: no model named", llm.ErrRejected)
	}
	p := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	for i, m := range r.Messages {
		msg, err := message(m)
		if err != nil {
			return sdk.ChatCompletionNewParams{}, fmt.Errorf("%w: message %d: %w", llm.ErrRejected, i, err)
		}
		p.Messages = append(p.Messages, msg)
	}
	for _, t := range r.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		if t.Parameters != nil {
			def.Parameters = shared.FunctionParameters(t.Parameters)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(def))
	}
	if r.Temperature != nil {
		p.Temperature = param.NewOpt(*r.Temperature)
	}
	if r.ReasoningEffort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(r.ReasoningEffort)
	}
	if r.MaxTokens > 0 {
		p.MaxCompletionTokens = param.NewOpt(int64(r.MaxTokens))
	}
	if f := r.ResponseFormat; f != nil {
		if f.Name == "" {
			return sdk.ChatCompletionNewParams{}, fmt.Errorf("%w: response format without a name", llm.ErrRejected)
		}
		s := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: f.Name}
		if f.Description != "" {
			s.Description = param.NewOpt(f.Description)
		}
		if f.Schema != nil {
			s.Schema = f.Schema
		}
		if f.Strict {
			s.Strict = param.NewOpt(true)
		}
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: s}
	}
	return p, nil
}

// message translates one message.
func message(m llm.Message) (sdk.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleSystem:
		return sdk.SystemMessage(m.Content), nil
	case "developer":
		return sdk.DeveloperMessage(m.Content), nil
	case llm.RoleUser:
		return sdk.UserMessage(m.Content), nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message without a tool call id")
		}
		return sdk.ToolMessage(m.Content, m.ToolCallID), nil
	case llm.RoleAssistant:
		var a sdk.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	default:
		return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
	}
}
