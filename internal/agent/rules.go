package agent

import (
	"slices"
	"strings"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/pipeline/turntaking"
)

// Limits of the interface.
const (
	MaxNameLen              = 128
	MaxFirstMessageLen      = 4000
	MaxKeypadDescriptionLen = 2000
	MaxKnowledgeBases       = 100
	MaxTransferRoutes       = 50
)

// Enumerations of the interface.
var (
	statuses             = []string{model.AgentActive, model.AgentDisabled}
	modes                = []string{model.ModeSinglePrompt, model.ModeConversationFlow}
	firstMessageModes    = []string{"static", "dynamic"}
	voicemailActions     = []string{"hangup", "leave_message"}
	reasoningEfforts     = []string{"low", "medium", "high"}
	transferModes        = []string{"cold", "warm"}
	kbRetrievalModes     = []string{"automatic", "query_tool"}
	notNullOnUpdateNames = []string{"name", "promptTemplate", "status", "mode"}
)

// check records every rule in broken by in. creating is true for POST, where
// name and promptTemplate are required and mode may be chosen.
func check(in *Input, creating bool, l *invalid.List) {
	for _, name := range notNullOnUpdateNames {
		if name == "mode" && !creating {
			continue // reported below: mode cannot change at all
		}
		if f := fieldSet(in, name); f.Set && f.Null {
			l.Add(name, "must not be null")
		}
	}
	if creating {
		if !in.Name.Present() {
			required(l, "name", in.Name.Null)
		}
		if !in.PromptTemplate.Present() {
			required(l, "promptTemplate", in.PromptTemplate.Null)
		}
	} else {
		if in.Mode.Set {
			l.Add("mode", "cannot be changed after creation")
		}
		if in.CustomTools.Set {
			l.Add("customTools", "can only be given when the agent is created: use /agents/{id}/custom-tools")
		}
	}
	if in.Name.Present() {
		switch n := invalid.Len(in.Name.V); {
		case invalid.IsBlank(in.Name.V):
			l.Add("name", "must not be empty")
		case n > MaxNameLen:
			l.Add("name", "must be at most %d characters", MaxNameLen)
		}
	}
	if in.PromptTemplate.Present() && invalid.IsBlank(in.PromptTemplate.V) {
		l.Add("promptTemplate", "must not be empty")
	}
	uuidField(l, "messagingConnectionId", in.MessagingConnectionID.V, in.MessagingConnectionID.Present(), false)
	uuidField(l, "sipTrunkId", in.SIPTrunkID.V, in.SIPTrunkID.Present(), true)
	uuidField(l, "folderId", in.FolderID.V, in.FolderID.Present(), true)
	enum(l, "status", in.Status.V, in.Status.Present(), statuses)
	enum(l, "mode", in.Mode.V, creating && in.Mode.Present(), modes)
	enum(l, "firstMessageMode", in.FirstMessageMode.V, in.FirstMessageMode.Present(), firstMessageModes)
	enum(l, "voicemailAction", in.VoicemailAction.V, in.VoicemailAction.Present(), voicemailActions)
	enum(l, "llmReasoningEffort", in.LLMReasoningEffort.V, in.LLMReasoningEffort.Present(), reasoningEfforts)
	enum(l, "transferMode", in.TransferMode.V, in.TransferMode.Present(), transferModes)
	enum(l, "knowledgeBaseRetrievalMode", in.KnowledgeBaseRetrievalMode.V, in.KnowledgeBaseRetrievalMode.Present(), kbRetrievalModes)
	maxLen(l, "firstMessage", in.FirstMessage.V, in.FirstMessage.Present(), MaxFirstMessageLen)
	maxLen(l, "playKeypadTouchToneDescriptionOverride", in.PlayKeypadTouchToneDescriptionOverride.V,
		in.PlayKeypadTouchToneDescriptionOverride.Present(), MaxKeypadDescriptionLen)
	intMin(l, "turnTimeoutSeconds", in.TurnTimeoutSeconds.V, in.TurnTimeoutSeconds.Present(), -1)
	intMin(l, "silenceEndCallTimeoutSeconds", in.SilenceEndCallTimeoutSeconds.V, in.SilenceEndCallTimeoutSeconds.Present(), -1)
	intMin(l, "maxConversationDurationSeconds", in.MaxConversationDurationSeconds.V, in.MaxConversationDurationSeconds.Present(), 1)
	intRange(l, "interruptionThresholdMs", in.InterruptionThresholdMs.V, in.InterruptionThresholdMs.Present(), 100, 2000)
	intRange(l, "knowledgeBaseChunks", in.KnowledgeBaseChunks.V, in.KnowledgeBaseChunks.Present(), 1, 20)
	numRange(l, "llmTemperature", in.LLMTemperature.V, in.LLMTemperature.Present(), 0, 2)
	numRange(l, "voiceTemperature", in.VoiceTemperature.V, in.VoiceTemperature.Present(), 0, 2)
	numRange(l, "voiceSpeed", in.VoiceSpeed.V, in.VoiceSpeed.Present(), 0.5, 1.5)
	numRange(l, "knowledgeBaseSimilarityThreshold", in.KnowledgeBaseSimilarityThreshold.V, in.KnowledgeBaseSimilarityThreshold.Present(), 0, 1)
	if in.Timezone.Present() && !invalid.IsTimezone(in.Timezone.V) {
		l.Add("timezone", "must be an IANA time zone name such as Europe/Paris")
	}
	if in.Language.Present() && !invalid.IsLanguage(in.Language.V) {
		l.Add("language", "must be a BCP 47 language tag such as en or en-US")
	}
	httpURL(l, "preCallWebhookUrl", in.PreCallWebhookURL.V, in.PreCallWebhookURL.Present())
	httpURL(l, "postCallWebhookUrl", in.PostCallWebhookURL.V, in.PostCallWebhookURL.Present())
	if in.MessagingConfig.Present() {
		checkMessagingConfig(in.MessagingConfig.V, l)
	}
	if in.TransferRoutes.Present() {
		checkTransferRoutes(in.TransferRoutes.V, l)
	}
	if in.RuntimeConfig.Present() {
		// Free-form, but its documented keys (turn-taking) have rules.
		turntaking.Check(in.RuntimeConfig.V, "runtimeConfig", l)
	}
	if in.KnowledgeBaseIDs.Present() {
		ids := in.KnowledgeBaseIDs.V
		if len(ids) > MaxKnowledgeBases {
			l.Add("knowledgeBaseIds", "must have at most %d elements", MaxKnowledgeBases)
		}
		for i, id := range ids {
			if !model.IsUUID(id) {
				l.Add(invalid.Index("knowledgeBaseIds", i), "must be a UUID")
			}
		}
	}
}

func checkMessagingConfig(c model.MessagingConfig, l *invalid.List) {
	if c.FromNumber != nil && !invalid.IsE164(*c.FromNumber) {
		l.Add("messagingConfig.fromNumber", "must be an E.164 number such as +14155550100")
	}
	if c.InboundWebhookURL != nil && !invalid.IsHTTPURL(*c.InboundWebhookURL) {
		l.Add("messagingConfig.inboundWebhookUrl", "must be an absolute http or https URL")
	}
	if c.ConversationIdleResetDays != nil && *c.ConversationIdleResetDays < 1 {
		l.Add("messagingConfig.conversationIdleResetDays", "must be at least 1")
	}
}

func checkTransferRoutes(routes []model.TransferRoute, l *invalid.List) {
	if len(routes) > MaxTransferRoutes {
		l.Add("transferRoutes", "must have at most %d elements", MaxTransferRoutes)
	}
	for i, r := range routes {
		p := invalid.Index("transferRoutes", i)
		if !invalid.IsE164(r.ToNumber) {
			l.Add(p+".to_number", "must be an E.164 number such as +14155550100")
		}
		if invalid.IsBlank(r.Condition) {
			l.Add(p+".condition", "is required")
		}
	}
}

func required(l *invalid.List, name string, null bool) {
	if null {
		return // already reported as "must not be null"
	}
	l.Add(name, "is required")
}

func uuidField(l *invalid.List, name, v string, present, mustBeUUID bool) {
	switch {
	case !present:
	case mustBeUUID && !model.IsUUID(v):
		l.Add(name, "must be a UUID")
	case v == "":
		l.Add(name, "must not be empty")
	}
}

func enum(l *invalid.List, name, v string, present bool, allowed []string) {
	if present && !slices.Contains(allowed, v) {
		l.Add(name, "must be one of %s", strings.Join(allowed, ", "))
	}
}

func maxLen(l *invalid.List, name, v string, present bool, n int) {
	if present && invalid.Len(v) > n {
		l.Add(name, "must be at most %d characters", n)
	}
}

func intMin(l *invalid.List, name string, v int, present bool, lo int) {
	if present && v < lo {
		l.Add(name, "must be at least %d", lo)
	}
}

func intRange(l *invalid.List, name string, v int, present bool, lo, hi int) {
	if present && (v < lo || v > hi) {
		l.Add(name, "must be between %d and %d", lo, hi)
	}
}

func numRange(l *invalid.List, name string, v float64, present bool, lo, hi float64) {
	if present && (v < lo || v > hi) {
		l.Add(name, "must be between %g and %g", lo, hi)
	}
}

func httpURL(l *invalid.List, name, v string, present bool) {
	if present && !invalid.IsHTTPURL(v) {
		l.Add(name, "must be an absolute http or https URL")
	}
}

// Check reports every rule in breaks that needs no stored data (Create and
// Update check these, then the references). A form that cannot become a
// request yet, because some inputs do not parse, uses it to report the
// other inputs' problems at the same time.
func Check(in Input, creating bool) error {
	var l invalid.List
	check(&in, creating, &l)
	return l.Err()
}
