package storetest

import (
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// What deleting a row does to the rows that point at it.
var cascadeTests = []test{
	{"DeleteFolderUncategorizesAgents", func(t *testing.T, b *bundle) {
		f := newFolder(t, b, b.org.ID)
		keep := newFolder(t, b, b.org.ID)
		a := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.FolderID = &f.ID })
		k := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.FolderID = &keep.ID })
		b.update(t, func(tx store.Tx) error { return tx.DeleteFolder(b.ctx, b.org.ID, f.ID) })
		a.FolderID = nil
		wantEqual(t, a, getAgent(t, b, b.org.ID, a.ID))
		wantEqual(t, k, getAgent(t, b, b.org.ID, k.ID))
	}},
	{"DeleteSIPTrunkUnassigns", func(t *testing.T, b *bundle) {
		s := newSIPTrunk(t, b, b.org.ID)
		a := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.SIPTrunkID = &s.ID })
		n := newPhoneNumber(t, b, b.org.ID, "+15550100001", func(n *model.PhoneNumber) {
			n.SIPTrunkID, n.AgentID = &s.ID, &a.ID
		})
		b.update(t, func(tx store.Tx) error { return tx.DeleteSIPTrunk(b.ctx, b.org.ID, s.ID) })
		a.SIPTrunkID, n.SIPTrunkID = nil, nil
		wantEqual(t, a, getAgent(t, b, b.org.ID, a.ID))
		wantEqual(t, n, getPhoneNumber(t, b, b.org.ID, n.ID))
	}},
	{"DeleteMessagingConnectionUnassigns", func(t *testing.T, b *bundle) {
		c := newMessagingConnection(t, b, b.org.ID)
		a := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.MessagingConnectionID = &c.ID })
		b.update(t, func(tx store.Tx) error { return tx.DeleteMessagingConnection(b.ctx, b.org.ID, c.ID) })
		a.MessagingConnectionID = nil
		wantEqual(t, a, getAgent(t, b, b.org.ID, a.ID))
	}},
	{"DeleteAgent", func(t *testing.T, b *bundle) {
		// Its numbers stay, unassigned; its tools and knowledge-base links go;
		// the knowledge bases themselves and other agents' rows stay.
		a := newAgent(t, b, b.org.ID)
		other := newAgent(t, b, b.org.ID)
		kb := newKnowledgeBase(t, b, b.org.ID)
		n := newPhoneNumber(t, b, b.org.ID, "+15550100001", func(n *model.PhoneNumber) { n.AgentID = &a.ID })
		tool := newCustomTool(t, b, b.org.ID, a.ID)
		otherTool := newCustomTool(t, b, b.org.ID, other.ID)
		for _, id := range []string{a.ID, other.ID} {
			b.update(t, func(tx store.Tx) error { return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, id, []string{kb.ID}) })
		}

		b.update(t, func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, b.org.ID, a.ID) })

		n.AgentID = nil
		wantEqual(t, n, getPhoneNumber(t, b, b.org.ID, n.ID))
		wantIs(t, readErr(b, func(tx store.Tx) (model.CustomTool, error) {
			return tx.GetCustomTool(b.ctx, b.org.ID, a.ID, tool.ID)
		}), store.ErrNotFound)
		tools := read(t, b, func(tx store.Tx) (map[string][]model.CustomTool, error) {
			return tx.ListCustomTools(b.ctx, b.org.ID, []string{a.ID, other.ID})
		})
		wantEqual(t, map[string][]model.CustomTool{other.ID: {otherTool}}, tools)
		links := read(t, b, func(tx store.Tx) (map[string][]model.KnowledgeBaseRef, error) {
			return tx.AgentKnowledgeBases(b.ctx, b.org.ID, []string{a.ID, other.ID})
		})
		wantEqual(t, map[string][]model.KnowledgeBaseRef{other.ID: {{ID: kb.ID, Name: kb.Name}}}, links)
		wantEqual(t, kb, getKnowledgeBase(t, b, b.org.ID, kb.ID))
	}},
	{"DeleteKnowledgeBaseUnlinks", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		gone := newKnowledgeBase(t, b, b.org.ID, func(kb *model.KnowledgeBase) { kb.Name = "gone" })
		kept := newKnowledgeBase(t, b, b.org.ID, func(kb *model.KnowledgeBase) { kb.Name = "kept" })
		b.update(t, func(tx store.Tx) error {
			return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, a.ID, []string{gone.ID, kept.ID})
		})
		b.update(t, func(tx store.Tx) error { return tx.DeleteKnowledgeBase(b.ctx, b.org.ID, gone.ID) })
		links := read(t, b, func(tx store.Tx) (map[string][]model.KnowledgeBaseRef, error) {
			return tx.AgentKnowledgeBases(b.ctx, b.org.ID, []string{a.ID})
		})
		wantEqual(t, map[string][]model.KnowledgeBaseRef{a.ID: {{ID: kept.ID, Name: "kept"}}}, links)
		wantEqual(t, a, getAgent(t, b, b.org.ID, a.ID))
	}},
}
