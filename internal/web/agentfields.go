package web

import (
	"fmt"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/model"
)

// kind is how a form input is shown and read.
type kind int

const (
	kindText      kind = iota // one line of text
	kindTextarea              // several lines of text
	kindURL                   // an http(s) URL
	kindInt                   // a whole number
	kindFloat                 // a number
	kindBool                  // unset, yes or no
	kindEnum                  // one of Options
	kindJSON                  // a JSON value (object or array) in a textarea
	kindFolder                // a folder of the organization
	kindTrunk                 // a SIP trunk of the organization
	kindMessaging             // a messaging connection of the organization
	kindKnowledge             // knowledge bases of the organization (several)
	kindAgent                 // an agent of the organization
	kindCases                 // test cases of a suite (several)
	kindDateTime              // a date and time (datetime-local)
)

// agentField is one input of the agent form. Name is the API's field name,
// so the service's errors land next to it; the limits are shown to the
// user and set as input attributes, but the service enforces them.
type agentField struct {
	Name     string
	Label    string
	Kind     kind
	Help     string
	Required bool // not null: blank is refused rather than cleared
	Options  []string
	// MaxLen, Min, Max and Step are shown as maxlength, min, max and step
	// (Min/Max only when HasMin/HasMax).
	MaxLen         int
	Min, Max, Step float64
	HasMin, HasMax bool
	CreateOnly     bool
	Placeholder    string
}

// agentSection is a group of the form's fields, shown as a fieldset.
type agentSection struct {
	Legend string
	Fields []agentField
}

func between(lo, hi float64) (float64, float64, bool, bool) { return lo, hi, true, true }

// agentForm is the whole agent form: every field of the interface but the
// custom tools, which have their own endpoints.
var agentForm = func() []agentSection {
	intRange := func(f agentField, lo, hi float64) agentField {
		f.Min, f.Max, f.HasMin, f.HasMax = between(lo, hi)
		f.Step = 1
		return f
	}
	intMin := func(f agentField, lo float64) agentField {
		f.Min, f.HasMin, f.Step = lo, true, 1
		return f
	}
	numRange := func(f agentField, lo, hi, step float64) agentField {
		f.Min, f.Max, f.HasMin, f.HasMax = between(lo, hi)
		f.Step = step
		return f
	}
	return []agentSection{
		{"Agent", []agentField{
			{Name: "name", Label: "Name", Kind: kindText, Required: true, MaxLen: agent.MaxNameLen,
				Help: fmt.Sprintf("Required; at most %d characters.", agent.MaxNameLen)},
			{Name: "status", Label: "Status", Kind: kindEnum, Required: true, Options: []string{model.AgentActive, model.AgentDisabled}},
			{Name: "mode", Label: "Mode", Kind: kindEnum, Required: true, CreateOnly: true,
				Options: []string{model.ModeSinglePrompt, model.ModeConversationFlow},
				Help:    "Cannot be changed after the agent is created."},
			{Name: "folderId", Label: "Folder", Kind: kindFolder},
			{Name: "promptTemplate", Label: "Prompt", Kind: kindTextarea, Required: true,
				Help: "Required. {{variable}} placeholders are filled from the call's variables."},
			{Name: "firstMessage", Label: "First message", Kind: kindTextarea, MaxLen: agent.MaxFirstMessageLen,
				Help: fmt.Sprintf("At most %d characters.", agent.MaxFirstMessageLen)},
			{Name: "firstMessageMode", Label: "First message mode", Kind: kindEnum, Options: []string{"static", "dynamic"}},
			{Name: "language", Label: "Language", Kind: kindText, Placeholder: "en-US", Help: "A BCP 47 tag such as en or en-US."},
			{Name: "timezone", Label: "Time zone", Kind: kindText, Placeholder: "Europe/Paris", Help: "An IANA time zone name."},
		}},
		{"Conversation", []agentField{
			numRange(agentField{Name: "llmTemperature", Label: "Model temperature", Kind: kindFloat, Help: "Between 0 and 2."}, 0, 2, 0.01),
			{Name: "llmReasoningEffort", Label: "Reasoning effort", Kind: kindEnum, Options: []string{"low", "medium", "high"}},
			intMin(agentField{Name: "turnTimeoutSeconds", Label: "Turn timeout (seconds)", Kind: kindInt, Help: "At least -1 (-1: never)."}, -1),
			intMin(agentField{Name: "silenceEndCallTimeoutSeconds", Label: "End the call after silence (seconds)", Kind: kindInt, Help: "At least -1 (-1: never)."}, -1),
			intMin(agentField{Name: "maxConversationDurationSeconds", Label: "Longest conversation (seconds)", Kind: kindInt, Help: "At least 1."}, 1),
			{Name: "disableInterruptions", Label: "Disable interruptions", Kind: kindBool},
			intRange(agentField{Name: "interruptionThresholdMs", Label: "Interruption threshold (ms)", Kind: kindInt, Help: "Between 100 and 2000; blank: 500."}, 100, 2000),
			{Name: "flowDefinition", Label: "Flow definition", Kind: kindJSON, Help: "JSON object, for conversation_flow agents (schema: /v1/flow-schema.json)."},
			{Name: "defaultVariables", Label: "Default variables", Kind: kindJSON, Help: "JSON object of variable names to values."},
			{Name: "testVariables", Label: "Test variables", Kind: kindJSON, Help: "JSON object used by test calls."},
			{Name: "runtimeConfig", Label: "Runtime configuration", Kind: kindJSON, Help: "JSON object (turn-taking settings and more)."},
		}},
		{"Voice", []agentField{
			{Name: "voiceId", Label: "Voice", Kind: kindText},
			numRange(agentField{Name: "voiceTemperature", Label: "Voice temperature", Kind: kindFloat, Help: "Between 0 and 2."}, 0, 2, 0.01),
			numRange(agentField{Name: "voiceSpeed", Label: "Voice speed", Kind: kindFloat, Help: "Between 0.5 and 1.5."}, 0.5, 1.5, 0.01),
		}},
		{"Telephony", []agentField{
			{Name: "sipTrunkId", Label: "SIP trunk", Kind: kindTrunk},
			{Name: "endCallEnabled", Label: "May end the call", Kind: kindBool},
			{Name: "endCallRulesOverride", Label: "When to end the call", Kind: kindTextarea},
			{Name: "transferEnabled", Label: "May transfer", Kind: kindBool},
			{Name: "transferMode", Label: "Transfer mode", Kind: kindEnum, Options: []string{"cold", "warm"}},
			{Name: "transferRoutes", Label: "Transfer routes", Kind: kindJSON,
				Help: fmt.Sprintf(`JSON array of at most %d {"to_number": "+14155550100", "condition": "..."}.`, agent.MaxTransferRoutes)},
			{Name: "transferDescriptionOverride", Label: "Transfer tool description", Kind: kindTextarea},
			{Name: "warmTransferConfig", Label: "Warm transfer", Kind: kindJSON, Help: "JSON object: holdMessage, holdMusicEnabled, summaryPrompt, ..."},
			{Name: "voicemailEnabled", Label: "Detect voicemail", Kind: kindBool},
			{Name: "voicemailAction", Label: "On voicemail", Kind: kindEnum, Options: []string{"hangup", "leave_message"}},
			{Name: "voicemailMessage", Label: "Voicemail message", Kind: kindTextarea},
			{Name: "playKeypadTouchToneEnabled", Label: "May press keypad keys", Kind: kindBool},
			{Name: "playKeypadTouchToneDescriptionOverride", Label: "Keypad tool description", Kind: kindTextarea, MaxLen: agent.MaxKeypadDescriptionLen,
				Help: fmt.Sprintf("At most %d characters.", agent.MaxKeypadDescriptionLen)},
		}},
		{"Webhooks", []agentField{
			{Name: "preCallWebhookUrl", Label: "Pre-call webhook URL", Kind: kindURL, Help: "An absolute http or https URL."},
			{Name: "postCallWebhookUrl", Label: "Post-call webhook URL", Kind: kindURL, Help: "An absolute http or https URL."},
		}},
		{"Messaging", []agentField{
			{Name: "messagingConnectionId", Label: "Messaging connection", Kind: kindMessaging},
			{Name: "messagingConfig", Label: "Messaging settings", Kind: kindJSON, Help: "JSON object: smsPrompt, fromNumber, inboundWebhookUrl, ..."},
		}},
		{"Knowledge", []agentField{
			{Name: "knowledgeBaseIds", Label: "Knowledge bases", Kind: kindKnowledge, Help: fmt.Sprintf("At most %d.", agent.MaxKnowledgeBases)},
			{Name: "knowledgeBaseRetrievalMode", Label: "Retrieval", Kind: kindEnum, Options: []string{"automatic", "query_tool"}},
			intRange(agentField{Name: "knowledgeBaseChunks", Label: "Chunks per retrieval", Kind: kindInt, Help: "Between 1 and 20."}, 1, 20),
			numRange(agentField{Name: "knowledgeBaseSimilarityThreshold", Label: "Similarity threshold", Kind: kindFloat, Help: "Between 0 and 1."}, 0, 1, 0.01),
		}},
	}
}()
