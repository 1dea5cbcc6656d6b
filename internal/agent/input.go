package agent

import (
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// Input is a create or partial-update request. On update, absent keys keep
// their value and null clears a field (resets it to its default where it
// has one). Each json tag that is not a column of model.Agent names the
// model.AgentConfig field it sets.
type Input struct {
	Name                                   opt.Field[string]                   `json:"name"`
	PromptTemplate                         opt.Field[string]                   `json:"promptTemplate"`
	MessagingConnectionID                  opt.Field[string]                   `json:"messagingConnectionId"`
	MessagingConfig                        opt.Field[model.MessagingConfig]    `json:"messagingConfig"`
	SIPTrunkID                             opt.Field[string]                   `json:"sipTrunkId"`
	FolderID                               opt.Field[string]                   `json:"folderId"`
	Status                                 opt.Field[string]                   `json:"status"`
	DefaultVariables                       opt.Field[map[string]any]           `json:"defaultVariables"`
	FirstMessage                           opt.Field[string]                   `json:"firstMessage"`
	FirstMessageMode                       opt.Field[string]                   `json:"firstMessageMode"`
	TurnTimeoutSeconds                     opt.Field[int]                      `json:"turnTimeoutSeconds"`
	SilenceEndCallTimeoutSeconds           opt.Field[int]                      `json:"silenceEndCallTimeoutSeconds"`
	MaxConversationDurationSeconds         opt.Field[int]                      `json:"maxConversationDurationSeconds"`
	LLMTemperature                         opt.Field[float64]                  `json:"llmTemperature"`
	Timezone                               opt.Field[string]                   `json:"timezone"`
	Language                               opt.Field[string]                   `json:"language"`
	PreCallWebhookURL                      opt.Field[string]                   `json:"preCallWebhookUrl"`
	PostCallWebhookURL                     opt.Field[string]                   `json:"postCallWebhookUrl"`
	EndCallEnabled                         opt.Field[bool]                     `json:"endCallEnabled"`
	EndCallRulesOverride                   opt.Field[string]                   `json:"endCallRulesOverride"`
	TransferEnabled                        opt.Field[bool]                     `json:"transferEnabled"`
	TransferRoutes                         opt.Field[[]model.TransferRoute]    `json:"transferRoutes"`
	TransferDescriptionOverride            opt.Field[string]                   `json:"transferDescriptionOverride"`
	VoicemailEnabled                       opt.Field[bool]                     `json:"voicemailEnabled"`
	VoicemailAction                        opt.Field[string]                   `json:"voicemailAction"`
	VoicemailMessage                       opt.Field[string]                   `json:"voicemailMessage"`
	VoiceID                                opt.Field[string]                   `json:"voiceId"`
	VoiceTemperature                       opt.Field[float64]                  `json:"voiceTemperature"`
	VoiceSpeed                             opt.Field[float64]                  `json:"voiceSpeed"`
	RuntimeConfig                          opt.Field[map[string]any]           `json:"runtimeConfig"`
	Mode                                   opt.Field[string]                   `json:"mode"`
	FlowDefinition                         opt.Field[map[string]any]           `json:"flowDefinition"`
	TestVariables                          opt.Field[map[string]any]           `json:"testVariables"`
	LLMReasoningEffort                     opt.Field[string]                   `json:"llmReasoningEffort"`
	DisableInterruptions                   opt.Field[bool]                     `json:"disableInterruptions"`
	InterruptionThresholdMs                opt.Field[int]                      `json:"interruptionThresholdMs"`
	TransferMode                           opt.Field[string]                   `json:"transferMode"`
	WarmTransferConfig                     opt.Field[model.WarmTransferConfig] `json:"warmTransferConfig"`
	PlayKeypadTouchToneEnabled             opt.Field[bool]                     `json:"playKeypadTouchToneEnabled"`
	PlayKeypadTouchToneDescriptionOverride opt.Field[string]                   `json:"playKeypadTouchToneDescriptionOverride"`
	KnowledgeBaseRetrievalMode             opt.Field[string]                   `json:"knowledgeBaseRetrievalMode"`
	KnowledgeBaseChunks                    opt.Field[int]                      `json:"knowledgeBaseChunks"`
	KnowledgeBaseSimilarityThreshold       opt.Field[float64]                  `json:"knowledgeBaseSimilarityThreshold"`
	KnowledgeBaseIDs                       opt.Field[[]string]                 `json:"knowledgeBaseIds"`
	// CustomTools are created with the agent (POST only), so a flow's tool
	// node can name a tool in the same request that defines the flow.
	CustomTools opt.Field[[]ToolInput] `json:"customTools"`
}
