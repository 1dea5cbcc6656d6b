package pipeline

import (
	"context"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// Messenger sends a text message to the other party of a call
// (sms.Messages).
type Messenger interface {
	SendFromCall(ctx context.Context, c model.Call, body string) (model.Message, error)
}

const (
	toolSendMessage = "send_message"
	// sendMessageTimeout bounds the carrier while the caller waits.
	sendMessageTimeout = 10 * time.Second
)

// messagingOn: the agent may text the caller (messagingConfig.sendMessageEnabled).
func (s *agentSide) messagingOn() bool {
	mc := s.agent.MessagingConfig
	return s.e.Messages != nil && mc != nil && on(mc.SendMessageEnabled)
}

func sendMessageTool(a model.AgentConfig) llm.Tool {
	desc := "Send a text message (SMS) to the caller's phone, e.g. a confirmation, an address or a link they asked for."
	if mc := a.MessagingConfig; mc != nil {
		desc = or(mc.SendMessageDescriptionOverride, desc)
	}
	return llm.Tool{Name: toolSendMessage, Description: desc, Parameters: map[string]any{
		"type": "object", "required": []any{"body"},
		"properties": map[string]any{"body": map[string]any{"type": "string", "maxLength": 1600, "description": "the text to send"}},
	}}
}

// messageArg is send_message's text, or why the arguments are wrong.
func messageArg(args string) (body, bad string) {
	var a struct {
		Body string `json:"body"`
	}
	if err := opt.Unmarshal([]byte(args), &a); err != nil || strings.TrimSpace(a.Body) == "" {
		return "", `error: give the text as {"body": "..."}`
	}
	return a.Body, ""
}

// sendMessage texts the caller; the message is recorded with the call's id.
func (r *reply) sendMessage(ctx context.Context, body string) string {
	ctx, cancel := context.WithTimeout(ctx, sendMessageTimeout)
	defer cancel()
	m, err := r.c.e.Messages.SendFromCall(ctx, r.c.live.Call, body)
	switch {
	case err != nil:
		return "error: " + err.Error()
	case m.Status == model.MessageFailed:
		return "the message could not be sent: " + deref(m.ErrorMessage)
	}
	return "sent to " + m.ToNumber
}
