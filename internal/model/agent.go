package model

import (
	"encoding/json"
	"time"
)

// Agent statuses and modes.
const (
	AgentActive   = "active"
	AgentDisabled = "disabled"

	ModeSinglePrompt     = "single_prompt"
	ModeConversationFlow = "conversation_flow"

	DefaultInterruptionThresholdMs = 500
)

// Agent is a voice agent. The columns the store filters, sorts or joins on
// are plain fields; everything else is Config, persisted as one document.
type Agent struct {
	ID                    string
	OrgID                 string
	Name                  string
	Status                string
	Mode                  string
	FolderID              *string
	SIPTrunkID            *string
	MessagingConnectionID *string
	Config                AgentConfig
	// SimulatedCaller marks a hidden agent that a test run creates to call
	// the agent under test: no API query sees it, and no call can dial it.
	SimulatedCaller bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// AgentConfig is the agent's configuration beyond its indexed columns. A nil
// pointer, map or slice means "not set"; the tags carry no omitempty because
// the API answers every field, null where unset.
type AgentConfig struct {
	PromptTemplate                         string              `json:"promptTemplate"`
	MessagingConfig                        *MessagingConfig    `json:"messagingConfig"`
	DefaultVariables                       map[string]any      `json:"defaultVariables"`
	FirstMessage                           *string             `json:"firstMessage"`
	FirstMessageMode                       *string             `json:"firstMessageMode"`
	TurnTimeoutSeconds                     *int                `json:"turnTimeoutSeconds"`
	SilenceEndCallTimeoutSeconds           *int                `json:"silenceEndCallTimeoutSeconds"`
	MaxConversationDurationSeconds         *int                `json:"maxConversationDurationSeconds"`
	LLMTemperature                         *float64            `json:"llmTemperature"`
	Timezone                               *string             `json:"timezone"`
	Language                               *string             `json:"language"`
	PreCallWebhookURL                      *string             `json:"preCallWebhookUrl"`
	PostCallWebhookURL                     *string             `json:"postCallWebhookUrl"`
	EndCallEnabled                         *bool               `json:"endCallEnabled"`
	EndCallRulesOverride                   *string             `json:"endCallRulesOverride"`
	TransferEnabled                        *bool               `json:"transferEnabled"`
	TransferRoutes                         []TransferRoute     `json:"transferRoutes"`
	TransferDescriptionOverride            *string             `json:"transferDescriptionOverride"`
	VoicemailEnabled                       *bool               `json:"voicemailEnabled"`
	VoicemailAction                        *string             `json:"voicemailAction"`
	VoicemailMessage                       *string             `json:"voicemailMessage"`
	VoiceID                                *string             `json:"voiceId"`
	VoiceTemperature                       *float64            `json:"voiceTemperature"`
	VoiceSpeed                             *float64            `json:"voiceSpeed"`
	RuntimeConfig                          map[string]any      `json:"runtimeConfig"`
	FlowDefinition                         map[string]any      `json:"flowDefinition"`
	TestVariables                          map[string]any      `json:"testVariables"`
	LLMReasoningEffort                     *string             `json:"llmReasoningEffort"`
	DisableInterruptions                   *bool               `json:"disableInterruptions"`
	InterruptionThresholdMs                int                 `json:"interruptionThresholdMs"`
	TransferMode                           *string             `json:"transferMode"`
	WarmTransferConfig                     *WarmTransferConfig `json:"warmTransferConfig"`
	PlayKeypadTouchToneEnabled             *bool               `json:"playKeypadTouchToneEnabled"`
	PlayKeypadTouchToneDescriptionOverride *string             `json:"playKeypadTouchToneDescriptionOverride"`
	KnowledgeBaseRetrievalMode             *string             `json:"knowledgeBaseRetrievalMode"`
	KnowledgeBaseChunks                    *int                `json:"knowledgeBaseChunks"`
	KnowledgeBaseSimilarityThreshold       *float64            `json:"knowledgeBaseSimilarityThreshold"`
}

// MessagingConfig holds an agent's SMS settings; only keys that were set are kept.
type MessagingConfig struct {
	SMSPrompt                      *string `json:"smsPrompt,omitempty"`
	InboundWebhookURL              *string `json:"inboundWebhookUrl,omitempty"`
	FromNumber                     *string `json:"fromNumber,omitempty"`
	SendMessageEnabled             *bool   `json:"sendMessageEnabled,omitempty"`
	SendMessageDescriptionOverride *string `json:"sendMessageDescriptionOverride,omitempty"`
	ConversationIdleResetDays      *int    `json:"conversationIdleResetDays,omitempty"`
}

// TransferRoute is a destination the agent may transfer to, and when.
type TransferRoute struct {
	ToNumber  string `json:"to_number"`
	Condition string `json:"condition"`
}

// WarmTransferConfig configures a warm transfer; only keys that were set are kept.
type WarmTransferConfig struct {
	HoldMessage                    *string `json:"holdMessage,omitempty"`
	HoldMusicEnabled               *bool   `json:"holdMusicEnabled,omitempty"`
	SummaryPrompt                  *string `json:"summaryPrompt,omitempty"`
	IntroMessage                   *string `json:"introMessage,omitempty"`
	ContinueRecordingAfterTransfer *bool   `json:"continueRecordingAfterTransfer,omitempty"`
}

// Clone returns a deep copy of the configuration, so a duplicate never shares
// maps or slices with its original.
func (c AgentConfig) Clone() AgentConfig {
	b, err := json.Marshal(c)
	if err != nil {
		panic("model: agent config does not marshal: " + err.Error())
	}
	var out AgentConfig
	if err := json.Unmarshal(b, &out); err != nil {
		panic("model: agent config does not unmarshal: " + err.Error())
	}
	return out
}

// KnowledgeBaseRef names a knowledge base assigned to an agent.
type KnowledgeBaseRef struct {
	ID   string
	Name string
}
