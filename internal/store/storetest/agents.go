package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// fullConfig sets every field of an agent's configuration, with values that
// survive JSON unchanged (numbers inside free-form maps are float64).
func fullConfig() model.AgentConfig {
	return model.AgentConfig{
		PromptTemplate: "You are {{agent_name}}. Greet the caller in their language: ünïcødé ☎.",
		MessagingConfig: &model.MessagingConfig{
			SMSPrompt:                      ptr("Answer by text."),
			InboundWebhookURL:              ptr("https://example.com/sms"),
			FromNumber:                     ptr("+15550002222"),
			SendMessageEnabled:             ptr(true),
			SendMessageDescriptionOverride: ptr("Send a text."),
			ConversationIdleResetDays:      ptr(7),
		},
		DefaultVariables:               map[string]any{"name": "Ada", "count": 3.0, "nested": map[string]any{"ok": true, "list": []any{"a", 1.5, nil}}},
		FirstMessage:                   ptr("Hello!"),
		FirstMessageMode:               ptr("static"),
		TurnTimeoutSeconds:             ptr(12),
		SilenceEndCallTimeoutSeconds:   ptr(30),
		MaxConversationDurationSeconds: ptr(600),
		LLMTemperature:                 ptr(0.7),
		Timezone:                       ptr("Europe/Paris"),
		Language:                       ptr("fr-FR"),
		PreCallWebhookURL:              ptr("https://example.com/pre"),
		PostCallWebhookURL:             ptr("https://example.com/post"),
		EndCallEnabled:                 ptr(true),
		EndCallRulesOverride:           ptr("End when done."),
		TransferEnabled:                ptr(false),
		TransferRoutes: []model.TransferRoute{
			{ToNumber: "+15550003333", Condition: "billing"},
			{ToNumber: "+15550004444", Condition: "sales"},
		},
		TransferDescriptionOverride: ptr("Transfer."),
		VoicemailEnabled:            ptr(true),
		VoicemailAction:             ptr("leave_message"),
		VoicemailMessage:            ptr("Call us back."),
		VoiceID:                     ptr("voice-1"),
		VoiceTemperature:            ptr(0.3),
		VoiceSpeed:                  ptr(1.25),
		RuntimeConfig:               map[string]any{"vad": map[string]any{"threshold": 0.5}},
		FlowDefinition:              map[string]any{"nodes": []any{map[string]any{"id": "start"}}},
		TestVariables:               map[string]any{"customer": "Bob"},
		LLMReasoningEffort:          ptr("low"),
		DisableInterruptions:        ptr(false),
		InterruptionThresholdMs:     750,
		TransferMode:                ptr("warm"),
		WarmTransferConfig: &model.WarmTransferConfig{
			HoldMessage:                    ptr("Please hold."),
			HoldMusicEnabled:               ptr(true),
			SummaryPrompt:                  ptr("Summarize."),
			IntroMessage:                   ptr("Hi, transferring."),
			ContinueRecordingAfterTransfer: ptr(true),
		},
		PlayKeypadTouchToneEnabled:             ptr(true),
		PlayKeypadTouchToneDescriptionOverride: ptr("Press keys."),
		KnowledgeBaseRetrievalMode:             ptr("always"),
		KnowledgeBaseChunks:                    ptr(4),
		KnowledgeBaseSimilarityThreshold:       ptr(0.25),
	}
}

var agentTests = []test{
	{"CreateGetFullConfig", func(t *testing.T, b *bundle) {
		f := newFolder(t, b, b.org.ID)
		s := newSIPTrunk(t, b, b.org.ID)
		mc := newMessagingConnection(t, b, b.org.ID)
		a := newAgent(t, b, b.org.ID, func(a *model.Agent) {
			a.Name = "Receptionist"
			a.Mode = model.ModeConversationFlow
			a.Status = model.AgentDisabled
			a.FolderID, a.SIPTrunkID, a.MessagingConnectionID = &f.ID, &s.ID, &mc.ID
			a.Config = fullConfig()
		})
		got := getAgent(t, b, b.org.ID, a.ID)
		wantEqual(t, a, got)
		wantEqual(t, fullConfig(), got.Config)
	}},
	{"EmptyConfig", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Config = model.AgentConfig{} })
		wantEqual(t, a, getAgent(t, b, b.org.ID, a.ID))
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		for _, id := range []string{a.ID, model.NewID(), "not-a-uuid"} {
			orgID := b.other.ID
			if id != a.ID {
				orgID = b.org.ID
			}
			wantIs(t, readErr(b, func(tx store.Tx) (model.Agent, error) { return tx.GetAgent(b.ctx, orgID, id) }), store.ErrNotFound)
			u := a
			u.OrgID, u.ID, u.Name = orgID, id, "hijacked"
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateAgent(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, orgID, id) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.SetAgentKnowledgeBases(b.ctx, orgID, id, nil) }), store.ErrNotFound)
		}
		wantEqual(t, a, getAgent(t, b, b.org.ID, a.ID))
	}},
	{"GetByIDAcrossOrgs", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.other.ID)
		got := read(t, b, func(tx store.Tx) (model.Agent, error) { return tx.GetAgentByID(b.ctx, a.ID) })
		wantEqual(t, a, got)
		for _, id := range []string{model.NewID(), "not-a-uuid"} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.Agent, error) { return tx.GetAgentByID(b.ctx, id) }), store.ErrNotFound)
		}
	}},
	{"Update", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		f := newFolder(t, b, b.org.ID)
		a.Name = "Renamed"
		a.Status = model.AgentDisabled
		a.FolderID = &f.ID
		a.Config = fullConfig()
		a.UpdatedAt = at(42)
		b.update(t, func(tx store.Tx) error { return tx.UpdateAgent(b.ctx, &a) })
		wantEqual(t, a, getAgent(t, b, b.org.ID, a.ID))

		a.FolderID = nil
		a.Config = model.AgentConfig{PromptTemplate: "short"}
		b.update(t, func(tx store.Tx) error { return tx.UpdateAgent(b.ctx, &a) })
		wantEqual(t, a, getAgent(t, b, b.org.ID, a.ID))
	}},
	{"Delete", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		b.update(t, func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, b.org.ID, a.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.Agent, error) { return tx.GetAgent(b.ctx, b.org.ID, a.ID) }), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, b.org.ID, a.ID) }), store.ErrNotFound)
	}},
	{"ReferencesStayInOrg", func(t *testing.T, b *bundle) {
		// The service checks references first; the schema refuses them too.
		f := newFolder(t, b, b.other.ID)
		s := newSIPTrunk(t, b, b.other.ID)
		mc := newMessagingConnection(t, b, b.other.ID)
		refs := []func(*model.Agent){
			func(a *model.Agent) { a.FolderID = &f.ID },
			func(a *model.Agent) { a.SIPTrunkID = &s.ID },
			func(a *model.Agent) { a.MessagingConnectionID = &mc.ID },
			func(a *model.Agent) { a.FolderID = ptr(model.NewID()) },
		}
		for _, ref := range refs {
			a := model.Agent{OrgID: b.org.ID, Name: "x", Status: model.AgentActive, Mode: model.ModeSinglePrompt}
			ref(&a)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateAgent(b.ctx, &a) }), store.ErrNotFound)
		}
		a := newAgent(t, b, b.org.ID)
		a.SIPTrunkID = &s.ID
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateAgent(b.ctx, &a) }), store.ErrNotFound)
	}},
	{"GetAgents", func(t *testing.T, b *bundle) {
		a1 := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name = "one" })
		a2 := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name = "two" })
		newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name = "three" })
		theirs := newAgent(t, b, b.other.ID)
		get := func(ids []string) []model.Agent {
			return read(t, b, func(tx store.Tx) ([]model.Agent, error) { return tx.GetAgents(b.ctx, b.org.ID, ids) })
		}
		byID := cmpopts.SortSlices(func(x, y model.Agent) bool { return x.ID < y.ID })
		wantEqual(t, []model.Agent{a1, a2}, get([]string{a2.ID, a1.ID, a1.ID, theirs.ID, model.NewID(), "nope"}), byID)
		for _, empty := range [][]string{nil, {}, {theirs.ID}} {
			got := get(empty)
			if got == nil || len(got) != 0 {
				t.Fatalf("GetAgents(%v) = %#v, want empty", empty, got)
			}
		}
	}},
	{"KnowledgeBases", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		idle := newAgent(t, b, b.org.ID)
		kbZ := newKnowledgeBase(t, b, b.org.ID, func(kb *model.KnowledgeBase) { kb.Name = "Zeta" })
		kbA := newKnowledgeBase(t, b, b.org.ID, func(kb *model.KnowledgeBase) { kb.Name = "Alpha" })
		kbM := newKnowledgeBase(t, b, b.org.ID, func(kb *model.KnowledgeBase) { kb.Name = "Mid" })
		links := func(agentIDs ...string) map[string][]model.KnowledgeBaseRef {
			return read(t, b, func(tx store.Tx) (map[string][]model.KnowledgeBaseRef, error) {
				return tx.AgentKnowledgeBases(b.ctx, b.org.ID, agentIDs)
			})
		}
		ref := func(kb model.KnowledgeBase) model.KnowledgeBaseRef {
			return model.KnowledgeBaseRef{ID: kb.ID, Name: kb.Name}
		}

		b.update(t, func(tx store.Tx) error {
			return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, a.ID, []string{kbZ.ID, kbA.ID, kbZ.ID})
		})
		b.update(t, func(tx store.Tx) error {
			return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, idle.ID, []string{kbM.ID})
		})
		wantEqual(t, map[string][]model.KnowledgeBaseRef{
			a.ID:    {ref(kbA), ref(kbZ)},
			idle.ID: {ref(kbM)},
		}, links(a.ID, idle.ID))

		// Replacing, then clearing.
		b.update(t, func(tx store.Tx) error {
			return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, a.ID, []string{kbM.ID})
		})
		wantEqual(t, map[string][]model.KnowledgeBaseRef{a.ID: {ref(kbM)}}, links(a.ID))
		b.update(t, func(tx store.Tx) error { return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, a.ID, nil) })
		wantEqual(t, map[string][]model.KnowledgeBaseRef{}, links(a.ID))
		wantEqual(t, map[string][]model.KnowledgeBaseRef{}, links())

		// Another organization sees nothing.
		got := read(t, b, func(tx store.Tx) (map[string][]model.KnowledgeBaseRef, error) {
			return tx.AgentKnowledgeBases(b.ctx, b.other.ID, []string{idle.ID})
		})
		wantEqual(t, map[string][]model.KnowledgeBaseRef{}, got)
	}},
	{"KnowledgeBasesSameName", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		kb1 := newKnowledgeBase(t, b, b.org.ID, func(kb *model.KnowledgeBase) { kb.Name = "Docs" })
		kb2 := newKnowledgeBase(t, b, b.org.ID, func(kb *model.KnowledgeBase) { kb.Name = "Docs" })
		b.update(t, func(tx store.Tx) error {
			return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, a.ID, []string{kb2.ID, kb1.ID})
		})
		got := read(t, b, func(tx store.Tx) (map[string][]model.KnowledgeBaseRef, error) {
			return tx.AgentKnowledgeBases(b.ctx, b.org.ID, []string{a.ID})
		})
		want := []string{kb1.ID, kb2.ID}
		slices.SortFunc(want, strings.Compare)
		wantEqual(t, want, ids(got[a.ID], func(r model.KnowledgeBaseRef) string { return r.ID }))
	}},
	{"KnowledgeBasesOfAnotherOrg", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		theirs := newKnowledgeBase(t, b, b.other.ID)
		for _, kbID := range []string{theirs.ID, model.NewID(), "not-a-uuid"} {
			wantIs(t, b.writeErr(func(tx store.Tx) error {
				return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, a.ID, []string{kbID})
			}), store.ErrNotFound)
		}
	}},
}
