package eval

import (
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// The simulated caller's side of a call-mode attempt is a hidden agent
// (model.Agent.SimulatedCaller): the call plane runs it like any agent, the
// API never shows it, and it is deleted when the attempt is over.

// callerNumber is the fromNumber of an attempt's calls: not a phone
// number, so they stand out in the call list.
const callerNumber = "simulated-caller"

// callerPrompt is the simulated caller's system prompt around a case's
// script. Variables in the script ({{name}}) are rendered with the case's
// variables, as a call renders its agent's prompt.
func callerPrompt(script string) string {
	return "You are role-playing a person who phones a business, to test the voice agent that answers. " +
		"Stay in character for the whole call: never say that you are an AI, a simulation or a test, and never act as the agent. " +
		"Speak as a person on the phone does: one or two short sentences a turn, no lists, no stage directions. " +
		"Follow this script:\n\n" + script + "\n\n" +
		"When the script's goal is reached, or the agent ends the conversation, say goodbye and call end_call."
}

// simulatedCaller is the hidden agent that plays an attempt's caller. It
// speaks first only when the agent under test does not (a silent pair
// would wait for each other until the silence timeout), speaks its
// language, and hangs up at limit seconds.
func simulatedCaller(a model.TestAttempt, under model.Agent, limit int, now time.Time) model.Agent {
	on := true
	cfg := model.AgentConfig{
		PromptTemplate:                 callerPrompt(a.Script),
		DefaultVariables:               a.Variables,
		EndCallEnabled:                 &on,
		MaxConversationDurationSeconds: &limit,
		Language:                       under.Config.Language,
		InterruptionThresholdMs:        model.DefaultInterruptionThresholdMs,
	}
	if !speaksFirst(under) {
		dynamic := "dynamic"
		cfg.FirstMessageMode = &dynamic
	}
	name := truncate(fmt.Sprintf("Simulated caller: %s #%d", a.TestCaseName, a.AttemptNumber), MaxNameLen)
	return model.Agent{
		ID: *a.CallerAgentID, OrgID: a.OrgID, Name: name, Status: model.AgentActive, Mode: model.ModeSinglePrompt,
		SimulatedCaller: true, Config: cfg, CreatedAt: now, UpdatedAt: now,
	}
}

// speaksFirst reports whether an agent opens its calls.
func speaksFirst(a model.Agent) bool {
	c := a.Config
	if c.FirstMessageMode != nil && *c.FirstMessageMode == "dynamic" {
		return true
	}
	return c.FirstMessage != nil && *c.FirstMessage != ""
}

// callLimit is how long an attempt's call may last: the agent under
// test's own limit, or DefaultCallSeconds.
func callLimit(under model.Agent) int {
	if m := under.Config.MaxConversationDurationSeconds; m != nil && *m > 0 {
		return *m
	}
	return DefaultCallSeconds
}
