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
	{"DeleteKnowledgeSourceDeletesChunks", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		gone := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		kept := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		for _, s := range []model.KnowledgeSource{gone, kept} {
			b.update(t, func(tx store.Tx) error {
				return tx.ReplaceKnowledgeChunks(b.ctx, b.org.ID, kb.ID, s.ID, []model.KnowledgeChunk{
					{Seq: 0, Text: "Widgets ship in boxes of ten.", Embedding: []float32{1}},
					{Seq: 1, Text: "Widget spares are sold separately.", Embedding: []float32{2}},
				})
			})
		}
		b.update(t, func(tx store.Tx) error { return tx.DeleteKnowledgeSource(b.ctx, b.org.ID, kb.ID, gone.ID) })
		for _, h := range search(t, b, b.org.ID, []string{kb.ID}, "widget", 10) {
			wantEqual(t, kept.ID, h.SourceID)
		}
		wantEqual(t, 2, len(search(t, b, b.org.ID, []string{kb.ID}, "widget", 10)))
		vs := vectors(t, b, b.org.ID, []string{kb.ID})
		wantEqual(t, 2, len(vs))
		for _, h := range vs {
			wantEqual(t, kept.ID, h.SourceID)
		}
		wantEqual(t, []model.KnowledgeSource{kept}, listKnowledgeSources(t, b, b.org.ID, kb.ID))
		wantEqual(t, 1, getKnowledgeBase(t, b, b.org.ID, kb.ID).SourceCount)
		// Its id is free again.
		again := newKnowledgeSource(t, b, b.org.ID, kb.ID, func(s *model.KnowledgeSource) { s.ID = gone.ID })
		replaceChunks(t, b, b.org.ID, kb.ID, again.ID, "Gadgets only.")
		wantEqual(t, []string{"Gadgets only."}, texts(search(t, b, b.org.ID, []string{kb.ID}, "gadget", 10)))
		wantEqual(t, 3, len(search(t, b, b.org.ID, []string{kb.ID}, "gadget widget", 10)))
	}},
	{"DeleteKnowledgeBaseDeletesSourcesAndChunks", func(t *testing.T, b *bundle) {
		gone := newKnowledgeBase(t, b, b.org.ID)
		kept := newKnowledgeBase(t, b, b.org.ID)
		a := newAgent(t, b, b.org.ID)
		b.update(t, func(tx store.Tx) error {
			return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, a.ID, []string{gone.ID, kept.ID})
		})
		var goneSources []model.KnowledgeSource
		for range 2 {
			s := newKnowledgeSource(t, b, b.org.ID, gone.ID)
			goneSources = append(goneSources, s)
			b.update(t, func(tx store.Tx) error {
				return tx.ReplaceKnowledgeChunks(b.ctx, b.org.ID, gone.ID, s.ID, []model.KnowledgeChunk{
					{Seq: 0, Text: "Warranty claims need a receipt.", Embedding: []float32{1}},
				})
			})
		}
		k := newKnowledgeSource(t, b, b.org.ID, kept.ID)
		b.update(t, func(tx store.Tx) error {
			return tx.ReplaceKnowledgeChunks(b.ctx, b.org.ID, kept.ID, k.ID, []model.KnowledgeChunk{
				{Seq: 0, Text: "Warranty lasts a year.", Embedding: []float32{2}},
			})
		})

		b.update(t, func(tx store.Tx) error { return tx.DeleteKnowledgeBase(b.ctx, b.org.ID, gone.ID) })

		for _, s := range goneSources {
			wantIs(t, readErr(b, func(tx store.Tx) (model.KnowledgeSource, error) {
				return tx.GetKnowledgeSource(b.ctx, b.org.ID, gone.ID, s.ID)
			}), store.ErrNotFound)
		}
		wantEqual(t, []model.KnowledgeSource{}, listKnowledgeSources(t, b, b.org.ID, gone.ID))
		both := []string{gone.ID, kept.ID}
		wantEqual(t, []string{"Warranty lasts a year."}, texts(search(t, b, b.org.ID, both, "warranty receipt", 10)))
		vs := vectors(t, b, b.org.ID, both)
		wantEqual(t, 1, len(vs))
		wantEqual(t, k.ID, vs[0].SourceID)
		wantEqual(t, []model.KnowledgeSource{k}, listKnowledgeSources(t, b, b.org.ID, kept.ID))
	}},
}
