package storetest

import (
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// The fixtures create one row with sensible values, changed by mods, and
// return it as created (with the id and times the store filled in).

func newOrg(t *testing.T, b *bundle, name string, mods ...func(*model.Organization)) model.Organization {
	t.Helper()
	o := model.Organization{Name: name, ConcurrencyLimit: 10, CreatedAt: at(0), UpdatedAt: at(0)}
	for _, m := range mods {
		m(&o)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateOrg(b.ctx, &o) })
	return o
}

func newAPIKey(t *testing.T, b *bundle, orgID string, mods ...func(*model.APIKey)) model.APIKey {
	t.Helper()
	k := model.APIKey{OrgID: orgID, Name: "key", Prefix: "pk_test", Hash: []byte(model.NewID()), CreatedAt: at(0)}
	for _, m := range mods {
		m(&k)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateAPIKey(b.ctx, &k) })
	return k
}

func newAgent(t *testing.T, b *bundle, orgID string, mods ...func(*model.Agent)) model.Agent {
	t.Helper()
	a := model.Agent{
		OrgID:     orgID,
		Name:      "agent",
		Status:    model.AgentActive,
		Mode:      model.ModeSinglePrompt,
		Config:    model.AgentConfig{PromptTemplate: "Be brief.", InterruptionThresholdMs: model.DefaultInterruptionThresholdMs},
		CreatedAt: at(0),
		UpdatedAt: at(0),
	}
	for _, m := range mods {
		m(&a)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateAgent(b.ctx, &a) })
	return a
}

func newCustomTool(t *testing.T, b *bundle, orgID, agentID string, mods ...func(*model.CustomTool)) model.CustomTool {
	t.Helper()
	c := model.CustomTool{
		OrgID:      orgID,
		AgentID:    agentID,
		Name:       "lookup_order",
		WebhookURL: "https://example.com/hook",
		Enabled:    true,
		Schema:     map[string]any{"type": "object"},
		CreatedAt:  at(0),
		UpdatedAt:  at(0),
	}
	for _, m := range mods {
		m(&c)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateCustomTool(b.ctx, &c) })
	return c
}

func newFolder(t *testing.T, b *bundle, orgID string, mods ...func(*model.Folder)) model.Folder {
	t.Helper()
	f := model.Folder{OrgID: orgID, Name: "folder", CreatedAt: at(0), UpdatedAt: at(0)}
	for _, m := range mods {
		m(&f)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateFolder(b.ctx, &f) })
	return f
}

func newSIPTrunk(t *testing.T, b *bundle, orgID string, mods ...func(*model.SIPTrunk)) model.SIPTrunk {
	t.Helper()
	s := model.SIPTrunk{
		OrgID:        orgID,
		FriendlyName: "carrier",
		Host:         ptr("sip.example.com"),
		Port:         ptr(5060),
		Transport:    model.TransportUDP,
		CreatedAt:    at(0),
		UpdatedAt:    at(0),
	}
	for _, m := range mods {
		m(&s)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateSIPTrunk(b.ctx, &s) })
	return s
}

// newPhoneNumber takes the number itself: E.164 is unique across the deployment.
func newPhoneNumber(t *testing.T, b *bundle, orgID, e164 string, mods ...func(*model.PhoneNumber)) model.PhoneNumber {
	t.Helper()
	n := model.PhoneNumber{OrgID: orgID, E164: e164, CreatedAt: at(0), UpdatedAt: at(0)}
	for _, m := range mods {
		m(&n)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreatePhoneNumber(b.ctx, &n) })
	return n
}

func newMessagingConnection(t *testing.T, b *bundle, orgID string, mods ...func(*model.MessagingConnection)) model.MessagingConnection {
	t.Helper()
	c := model.MessagingConnection{
		OrgID:      orgID,
		Provider:   "twilio",
		BaseURL:    "https://api.twilio.com",
		AccountSID: "AC123",
		AuthToken:  []byte("sealed-token"),
		FromNumber: ptr("+15550001111"),
		CreatedAt:  at(0),
		UpdatedAt:  at(0),
	}
	for _, m := range mods {
		m(&c)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateMessagingConnection(b.ctx, &c) })
	return c
}

func newKnowledgeBase(t *testing.T, b *bundle, orgID string, mods ...func(*model.KnowledgeBase)) model.KnowledgeBase {
	t.Helper()
	kb := model.KnowledgeBase{OrgID: orgID, Name: "kb", CreatedAt: at(0), UpdatedAt: at(0)}
	for _, m := range mods {
		m(&kb)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateKnowledgeBase(b.ctx, &kb) })
	return kb
}

func newKnowledgeSource(t *testing.T, b *bundle, orgID, kbID string, mods ...func(*model.KnowledgeSource)) model.KnowledgeSource {
	t.Helper()
	s := model.KnowledgeSource{
		OrgID:           orgID,
		KnowledgeBaseID: kbID,
		DisplayName:     "faq.txt",
		Content:         "Refunds take five days.",
		MimeType:        "text/plain",
		FileSize:        23,
		CreatedAt:       at(0),
		UpdatedAt:       at(0),
	}
	for _, m := range mods {
		m(&s)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateKnowledgeSource(b.ctx, &s) })
	return s
}

// replaceChunks makes texts the source's chunks, seq 0, 1, ...
func replaceChunks(t *testing.T, b *bundle, orgID, kbID, sourceID string, texts ...string) []model.KnowledgeChunk {
	t.Helper()
	chunks := make([]model.KnowledgeChunk, len(texts))
	for i, text := range texts {
		chunks[i] = model.KnowledgeChunk{SourceID: sourceID, Seq: i, Text: text}
	}
	b.update(t, func(tx store.Tx) error { return tx.ReplaceKnowledgeChunks(b.ctx, orgID, kbID, sourceID, chunks) })
	return chunks
}

// Shorthands for reading one row back.

func getAgent(t *testing.T, b *bundle, orgID, id string) model.Agent {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.Agent, error) { return tx.GetAgent(b.ctx, orgID, id) })
}

func getPhoneNumber(t *testing.T, b *bundle, orgID, id string) model.PhoneNumber {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.PhoneNumber, error) { return tx.GetPhoneNumber(b.ctx, orgID, id) })
}

// newCall creates a finished outbound call of agentID (which need not exist:
// calls record their agent, they do not reference it).
func newCall(t *testing.T, b *bundle, orgID, agentID string, mods ...func(*model.Call)) model.Call {
	t.Helper()
	c := model.Call{
		OrgID:      orgID,
		AgentID:    agentID,
		AgentName:  "agent",
		Direction:  model.Outbound,
		Status:     model.CallCompleted,
		FromNumber: "+15550001000",
		ToNumber:   "+15550002000",
		Prompt:     "Be brief.",
		CreatedAt:  at(0),
		UpdatedAt:  at(0),
	}
	for _, m := range mods {
		m(&c)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateCall(b.ctx, &c) })
	return c
}

func getCall(t *testing.T, b *bundle, orgID, id string) model.Call {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.Call, error) { return tx.GetCall(b.ctx, orgID, id) })
}
