package storetest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func getKnowledgeSource(t *testing.T, b *bundle, orgID, kbID, id string) model.KnowledgeSource {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.KnowledgeSource, error) {
		return tx.GetKnowledgeSource(b.ctx, orgID, kbID, id)
	})
}

func listKnowledgeSources(t *testing.T, b *bundle, orgID, kbID string) []model.KnowledgeSource {
	t.Helper()
	return read(t, b, func(tx store.Tx) ([]model.KnowledgeSource, error) {
		return tx.ListKnowledgeSources(b.ctx, orgID, kbID)
	})
}

func search(t *testing.T, b *bundle, orgID string, kbIDs []string, query string, limit int) []store.ChunkHit {
	t.Helper()
	hits := read(t, b, func(tx store.Tx) ([]store.ChunkHit, error) {
		return tx.SearchKnowledgeChunks(b.ctx, orgID, kbIDs, query, limit)
	})
	if hits == nil {
		t.Fatalf("search %q: nil hits, want a non-nil slice", query)
	}
	for i, h := range hits {
		if h.Score <= 0 || math.IsNaN(h.Score) || i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("search %q: hit %d scores %v after %v: want positive, best first", query, i, h.Score, hits[max(i-1, 0)].Score)
		}
		if h.Embedding != nil {
			t.Fatalf("search %q: hit %d carries an embedding", query, i)
		}
	}
	return hits
}

func vectors(t *testing.T, b *bundle, orgID string, kbIDs []string) []store.ChunkHit {
	t.Helper()
	return read(t, b, func(tx store.Tx) ([]store.ChunkHit, error) {
		return tx.KnowledgeChunkVectors(b.ctx, orgID, kbIDs)
	})
}

// texts is the hits' chunk texts, in order.
func texts(hits []store.ChunkHit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.Text)
	}
	return out
}

var knowledgeSourceTests = []test{
	{"CRUD", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID, func(s *model.KnowledgeSource) {
			s.DisplayName = "Returns policy"
			s.Content = "# Returns\nYou may return any item within 30 days."
			s.OriginalURL = ptr("https://example.com/returns.md")
			s.MimeType = "text/markdown"
			s.FileSize = 1 << 33 // past 32 bits
		})
		wantEqual(t, s, getKnowledgeSource(t, b, b.org.ID, kb.ID, s.ID))
		if s.ErrorMessage != nil || s.IndexedAt != nil {
			t.Fatalf("new source: error %v, indexed %v", s.ErrorMessage, s.IndexedAt)
		}
		wantEqual(t, 1, getKnowledgeBase(t, b, b.org.ID, kb.ID).SourceCount)

		// Update writes only how indexing went; times to the millisecond.
		indexed := at(5).Add(1234567 * time.Nanosecond)
		u := s
		u.DisplayName, u.Content, u.MimeType, u.FileSize = "ignored", "ignored", "text/html", 1
		u.ErrorMessage, u.IndexedAt, u.UpdatedAt = ptr("fetch failed"), &indexed, at(6)
		b.update(t, func(tx store.Tx) error { return tx.UpdateKnowledgeSource(b.ctx, &u) })
		wantEqual(t, at(5).Add(time.Millisecond), *u.IndexedAt)
		s.ErrorMessage, s.IndexedAt, s.UpdatedAt = u.ErrorMessage, u.IndexedAt, u.UpdatedAt
		wantEqual(t, s, getKnowledgeSource(t, b, b.org.ID, kb.ID, s.ID))

		// And clears them.
		u.ErrorMessage, u.IndexedAt, u.UpdatedAt = nil, nil, at(7)
		b.update(t, func(tx store.Tx) error { return tx.UpdateKnowledgeSource(b.ctx, &u) })
		s.ErrorMessage, s.IndexedAt, s.UpdatedAt = nil, nil, at(7)
		wantEqual(t, s, getKnowledgeSource(t, b, b.org.ID, kb.ID, s.ID))

		b.update(t, func(tx store.Tx) error { return tx.DeleteKnowledgeSource(b.ctx, b.org.ID, kb.ID, s.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.KnowledgeSource, error) {
			return tx.GetKnowledgeSource(b.ctx, b.org.ID, kb.ID, s.ID)
		}), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteKnowledgeSource(b.ctx, b.org.ID, kb.ID, s.ID) }), store.ErrNotFound)
		wantEqual(t, 0, getKnowledgeBase(t, b, b.org.ID, kb.ID).SourceCount)
	}},
	{"Defaults", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		indexed := at(3)
		s := model.KnowledgeSource{OrgID: b.org.ID, KnowledgeBaseID: kb.ID, DisplayName: "bare", IndexedAt: &indexed}
		before := model.Now()
		b.update(t, func(tx store.Tx) error { return tx.CreateKnowledgeSource(b.ctx, &s) })
		if !model.IsUUID(s.ID) || s.CreatedAt.Before(before) || s.UpdatedAt.Before(before) {
			t.Fatalf("created %+v: want an id and times from now", s)
		}
		wantEqual(t, s, getKnowledgeSource(t, b, b.org.ID, kb.ID, s.ID))
		// A given id is kept.
		id := model.NewID()
		withID := newKnowledgeSource(t, b, b.org.ID, kb.ID, func(s *model.KnowledgeSource) { s.ID = id })
		wantEqual(t, id, withID.ID)
		dup := model.KnowledgeSource{ID: id, OrgID: b.org.ID, KnowledgeBaseID: kb.ID, DisplayName: "dup"}
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateKnowledgeSource(b.ctx, &dup) }), store.ErrConflict)
	}},
	{"List", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		otherKB := newKnowledgeBase(t, b, b.org.ID)
		var rows []created
		want := map[string]model.KnowledgeSource{}
		for _, sec := range []int{2, 1, 3, 3, 0} {
			s := newKnowledgeSource(t, b, b.org.ID, kb.ID, func(s *model.KnowledgeSource) { s.CreatedAt = at(sec) })
			rows = append(rows, created{s.ID, s.CreatedAt})
			want[s.ID] = s
		}
		newKnowledgeSource(t, b, b.org.ID, otherKB.ID)
		got := listKnowledgeSources(t, b, b.org.ID, kb.ID)
		var wantList []model.KnowledgeSource
		for _, id := range oldestFirst(rows) {
			wantList = append(wantList, want[id])
		}
		wantEqual(t, wantList, got)
		wantEqual(t, 5, getKnowledgeBase(t, b, b.org.ID, kb.ID).SourceCount)
		wantEqual(t, 1, getKnowledgeBase(t, b, b.org.ID, otherKB.ID).SourceCount)

		for _, k := range []struct{ org, kb string }{
			{b.other.ID, kb.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "not-a-uuid"}, {"not-a-uuid", kb.ID},
		} {
			got := listKnowledgeSources(t, b, k.org, k.kb)
			if got == nil || len(got) != 0 {
				t.Fatalf("ListKnowledgeSources(%s, %s) = %#v, want empty", k.org, k.kb, got)
			}
		}
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		kb2 := newKnowledgeBase(t, b, b.org.ID)
		theirKB := newKnowledgeBase(t, b, b.other.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		chunks := replaceChunks(t, b, b.org.ID, kb.ID, s.ID, "Refunds take five days.")
		for _, k := range []struct{ org, kb, id string }{
			{b.other.ID, kb.ID, s.ID},         // another organization
			{b.other.ID, theirKB.ID, s.ID},    // another organization's base
			{b.org.ID, kb2.ID, s.ID},          // another base
			{b.org.ID, kb.ID, model.NewID()},  // missing
			{b.org.ID, kb.ID, "not-a-uuid"},   // malformed
			{b.org.ID, "not-a-uuid", s.ID},    // malformed base
			{"not-a-uuid", kb.ID, s.ID},       // malformed organization
			{b.org.ID, model.NewID(), s.ID},   // missing base
			{b.other.ID, model.NewID(), s.ID}, // nothing right but the id
			{model.NewID(), kb.ID, s.ID},      // missing organization
			{b.org.ID, theirKB.ID, s.ID},      // their base, our source
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.KnowledgeSource, error) {
				return tx.GetKnowledgeSource(b.ctx, k.org, k.kb, k.id)
			}), store.ErrNotFound)
			u := s
			u.OrgID, u.KnowledgeBaseID, u.ID, u.ErrorMessage = k.org, k.kb, k.id, ptr("hijacked")
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateKnowledgeSource(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error {
				return tx.ReplaceKnowledgeChunks(b.ctx, k.org, k.kb, k.id, []model.KnowledgeChunk{{Text: "hijacked"}})
			}), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error {
				return tx.ReplaceKnowledgeChunks(b.ctx, k.org, k.kb, k.id, nil)
			}), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteKnowledgeSource(b.ctx, k.org, k.kb, k.id) }), store.ErrNotFound)
		}
		wantEqual(t, s, getKnowledgeSource(t, b, b.org.ID, kb.ID, s.ID))
		wantEqual(t, []string{chunks[0].Text}, texts(search(t, b, b.org.ID, []string{kb.ID}, "refund hijacked", 10)))

		// Sources go only into the organization's own bases.
		for _, kbID := range []string{theirKB.ID, model.NewID(), "not-a-uuid"} {
			x := model.KnowledgeSource{OrgID: b.org.ID, KnowledgeBaseID: kbID, DisplayName: "x"}
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateKnowledgeSource(b.ctx, &x) }), store.ErrNotFound)
		}
		wantEqual(t, 0, getKnowledgeBase(t, b, b.other.ID, theirKB.ID).SourceCount)

		// Searches and vectors never reach into another organization, even
		// given its base ids.
		vec := []model.KnowledgeChunk{{Seq: 0, Text: "Refunds take five days.", Embedding: []float32{1, 2}}}
		b.update(t, func(tx store.Tx) error { return tx.ReplaceKnowledgeChunks(b.ctx, b.org.ID, kb.ID, s.ID, vec) })
		for _, orgID := range []string{b.other.ID, model.NewID(), "not-a-uuid"} {
			wantEqual(t, []string{}, texts(search(t, b, orgID, []string{kb.ID, theirKB.ID}, "refund", 10)))
			wantEqual(t, []store.ChunkHit{}, vectors(t, b, orgID, []string{kb.ID, theirKB.ID}))
		}
		wantEqual(t, 1, len(vectors(t, b, b.org.ID, []string{kb.ID})))
	}},
}

var knowledgeSearchTests = []test{
	{"Hits", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID, func(s *model.KnowledgeSource) { s.DisplayName = "Returns FAQ" })
		replaceChunks(t, b, b.org.ID, kb.ID, s.ID,
			"Opening hours are nine to five.",
			"We issue a refund within fourteen days of the return.")
		hits := search(t, b, b.org.ID, []string{kb.ID}, "refund", 5)
		if len(hits) != 1 {
			t.Fatalf("hits = %+v, want one", hits)
		}
		h := hits[0]
		h.Score = 0
		wantEqual(t, store.ChunkHit{
			KnowledgeChunk:  model.KnowledgeChunk{SourceID: s.ID, Seq: 1, Text: "We issue a refund within fourteen days of the return."},
			KnowledgeBaseID: kb.ID,
			DisplayName:     "Returns FAQ",
		}, h)
	}},
	{"RareWordsRankFirst", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		replaceChunks(t, b, b.org.ID, kb.ID, s.ID,
			"The privacy policy explains what we collect.",
			"Our policy is to answer every email within a day.",
			"The warranty extension covers accidental damage for two years.",
			"Cookie policy: we use cookies to remember your basket.",
			"Opening hours are nine to five on weekdays.",
			"Shipping policy: orders leave the warehouse the next day.")
		hits := search(t, b, b.org.ID, []string{kb.ID}, "Does the warranty extension policy cover water?", 10)
		got := texts(hits)
		if len(got) != 5 || got[0] != "The warranty extension covers accidental damage for two years." {
			t.Fatalf("hits = %q: want the warranty extension first, then the four policies", got)
		}
		if slices.Contains(got, "Opening hours are nine to five on weekdays.") {
			t.Fatalf("hits = %q: the opening hours match no word", got)
		}
	}},
	{"CommonWords", func(t *testing.T, b *bundle) {
		// Words in more chunks than a search ranks: a rare word still finds
		// its chunk first, and words no chunk holds together still find
		// chunks holding one of them, of the base asked about only.
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		var chunks []string
		for i := range 2400 {
			chunks = append(chunks, fmt.Sprintf("%s line %d.", []string{"Alpha", "Bravo"}[i%2], i))
		}
		chunks = append(chunks, "Zulu and alpha together.")
		replaceChunks(t, b, b.org.ID, kb.ID, s.ID, chunks...)
		otherKB := newKnowledgeBase(t, b, b.other.ID)
		o := newKnowledgeSource(t, b, b.other.ID, otherKB.ID)
		replaceChunks(t, b, b.other.ID, otherKB.ID, o.ID, "Alpha bravo zulu, another organization's.")
		got := texts(search(t, b, b.org.ID, []string{kb.ID}, "zulu alpha bravo", 3))
		if len(got) == 0 || got[0] != "Zulu and alpha together." {
			t.Fatalf("hits = %q: want the one chunk with zulu first", got)
		}
		got = texts(search(t, b, b.org.ID, []string{kb.ID}, "alpha bravo", 5))
		if len(got) != 5 {
			t.Fatalf("hits = %q: want 5", got)
		}
		for _, text := range got {
			if !strings.HasPrefix(text, "Alpha line") && !strings.HasPrefix(text, "Bravo line") && !strings.HasPrefix(text, "Zulu and alpha") {
				t.Fatalf("hits = %q: %q is not the base's, or holds neither word", got, text)
			}
		}
	}},
	{"Stemming", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		replaceChunks(t, b, b.org.ID, kb.ID, s.ID,
			"Ask for a refund at any store.",
			"Refunds are processed overnight.",
			"Deliveries arrive before noon.")
		for _, q := range []string{"refunds", "refund", "REFUNDING", "refunded?"} {
			got := texts(search(t, b, b.org.ID, []string{kb.ID}, q, 10))
			wantEqual(t, []string{"Ask for a refund at any store.", "Refunds are processed overnight."}, got,
				cmpopts.SortSlices(func(x, y string) bool { return x < y }))
		}
		wantEqual(t, []string{"Deliveries arrive before noon."}, texts(search(t, b, b.org.ID, []string{kb.ID}, "delivery", 10)))
	}},
	{"AnyWordMatches", func(t *testing.T, b *bundle) {
		// A question matches chunks holding only some of its words.
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		replaceChunks(t, b, b.org.ID, kb.ID, s.ID,
			"Delivery times vary by carrier.",
			"Customers in Canada pay import duties.",
			"Gift cards never expire.")
		got := texts(search(t, b, b.org.ID, []string{kb.ID}, "What are the delivery options for Canada?", 10))
		wantEqual(t, []string{"Customers in Canada pay import duties.", "Delivery times vary by carrier."}, got,
			cmpopts.SortSlices(func(x, y string) bool { return x < y }))
	}},
	{"QueryIsNeverSyntax", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		replaceChunks(t, b, b.org.ID, kb.ID, s.ID,
			"Our refund policy: full refund within 30 days.",
			"The store near the station opens at 8.",
			"Text: the column filter is not a filter here.")
		for q, want := range map[string][]string{
			`what's your "refund" policy? (AND) NEAR*`: {"Our refund policy: full refund within 30 days.", "The store near the station opens at 8."},
			`NEAR(refund station, 2)`:                  {"Our refund policy: full refund within 30 days.", "The store near the station opens at 8."},
			`text:refund`:                              {"Our refund policy: full refund within 30 days.", "Text: the column filter is not a filter here."},
			`-refund`:                                  {"Our refund policy: full refund within 30 days."},
			`refund OR`:                                {"Our refund policy: full refund within 30 days."},
			`"refund`:                                  {"Our refund policy: full refund within 30 days."},
			`^refund*`:                                 {"Our refund policy: full refund within 30 days."},
			`refund & !policy | <-> :* 'x'`:            {"Our refund policy: full refund within 30 days."},
			`'; DROP TABLE knowledge_chunks; --`:       {},
			`{station} [30]`:                           {"Our refund policy: full refund within 30 days.", "The store near the station opens at 8."},
			`""`:                                       {},
			`"`:                                        {},
			`*`:                                        {},
			`\`:                                        {},
			"\u0301":                                   {},
			"日本語 😀":                                    {},
			"½ ² x\u0301 ǅ ⅷ ٣ İ":                      {},
			"x\x00y":                                   {},
			strings.Repeat("a", 3000):                  {},
			strings.Repeat("refund ", 500):             {"Our refund policy: full refund within 30 days."},
		} {
			got := texts(search(t, b, b.org.ID, []string{kb.ID}, q, 10))
			wantEqual(t, want, got, cmpopts.SortSlices(func(x, y string) bool { return x < y }))
		}
	}},
	{"NoTerms", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		replaceChunks(t, b, b.org.ID, kb.ID, s.ID, "What is it? It is what it is, and the rest.")
		for _, q := range []string{"", "   ", "?!. ,;", "What is it?", "the and of"} {
			wantEqual(t, []string{}, texts(search(t, b, b.org.ID, []string{kb.ID}, q, 10)))
		}
		for _, kbIDs := range [][]string{nil, {}, {"not-a-uuid"}, {model.NewID()}} {
			wantEqual(t, []string{}, texts(search(t, b, b.org.ID, kbIDs, "rest", 10)))
		}
		for _, limit := range []int{0, -1} {
			wantEqual(t, []string{}, texts(search(t, b, b.org.ID, []string{kb.ID}, "rest", limit)))
		}
		wantEqual(t, 1, len(search(t, b, b.org.ID, []string{kb.ID}, "rest", 1)))
	}},
	{"Limit", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		var chunks []string
		for i := range 12 {
			chunks = append(chunks, strings.Repeat("parcel ", i+1)+"tracking number "+strings.Repeat("word ", 12-i))
		}
		replaceChunks(t, b, b.org.ID, kb.ID, s.ID, chunks...)
		all := search(t, b, b.org.ID, []string{kb.ID}, "parcel tracking", 100)
		wantEqual(t, 12, len(all))
		for _, limit := range []int{1, 3, 12, 13} {
			wantEqual(t, all[:min(limit, len(all))], search(t, b, b.org.ID, []string{kb.ID}, "parcel tracking", limit))
		}
	}},
	{"TiesBySourceThenSeq", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		type key struct {
			source string
			seq    int
		}
		var want []key
		for range 4 {
			s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
			replaceChunks(t, b, b.org.ID, kb.ID, s.ID, "Identical words inside.", "Identical words inside.", "Other text.")
			want = append(want, key{s.ID, 0}, key{s.ID, 1})
		}
		slices.SortFunc(want, func(x, y key) int {
			if c := strings.Compare(x.source, y.source); c != 0 {
				return c
			}
			return x.seq - y.seq
		})
		for range 3 {
			hits := search(t, b, b.org.ID, []string{kb.ID}, "identical words", 100)
			var got []key
			for _, h := range hits {
				got = append(got, key{h.SourceID, h.Seq})
			}
			wantEqual(t, want, got, cmpopts.EquateComparable(key{}))
			wantEqual(t, 5, len(search(t, b, b.org.ID, []string{kb.ID}, "identical words", 5)))
		}
	}},
	{"AcrossBases", func(t *testing.T, b *bundle) {
		kb1 := newKnowledgeBase(t, b, b.org.ID)
		kb2 := newKnowledgeBase(t, b, b.org.ID)
		kb3 := newKnowledgeBase(t, b, b.org.ID)
		theirs := newKnowledgeBase(t, b, b.other.ID)
		for i, kb := range []model.KnowledgeBase{kb1, kb2, kb3, theirs} {
			s := newKnowledgeSource(t, b, kb.OrgID, kb.ID)
			replaceChunks(t, b, kb.OrgID, kb.ID, s.ID, "Invoices are emailed monthly to base "+string(rune('A'+i))+".")
		}
		got := search(t, b, b.org.ID, []string{kb1.ID, theirs.ID, kb3.ID, kb1.ID, "not-a-uuid"}, "invoice", 10)
		wantEqual(t, []string{"Invoices are emailed monthly to base A.", "Invoices are emailed monthly to base C."}, texts(got),
			cmpopts.SortSlices(func(x, y string) bool { return x < y }))
		for _, h := range got {
			if h.KnowledgeBaseID != kb1.ID && h.KnowledgeBaseID != kb3.ID {
				t.Fatalf("hit %+v from base %s", h, h.KnowledgeBaseID)
			}
		}
		// More bases than one query takes: the best of every batch.
		many := []string{kb1.ID}
		for range 700 {
			many = append(many, model.NewID())
		}
		many = append(many, kb2.ID, theirs.ID)
		wantEqual(t, []string{"Invoices are emailed monthly to base A.", "Invoices are emailed monthly to base B."},
			texts(search(t, b, b.org.ID, many, "invoices", 10)), cmpopts.SortSlices(func(x, y string) bool { return x < y }))
		wantEqual(t, 1, len(search(t, b, b.org.ID, many, "invoices", 1)))
	}},
	{"ReplaceIsIdempotent", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		other := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		replaceChunks(t, b, b.org.ID, kb.ID, other.ID, "A voucher from another source.")
		replaceChunks(t, b, b.org.ID, kb.ID, s.ID, "Old voucher terms.", "Old loyalty points.", "Old gift wrapping.")
		for range 2 {
			replaceChunks(t, b, b.org.ID, kb.ID, s.ID, "New voucher terms.", "New membership tiers.")
		}
		wantEqual(t, []string{}, texts(search(t, b, b.org.ID, []string{kb.ID}, "loyalty wrapping old", 10)))
		wantEqual(t, []string{"A voucher from another source.", "New voucher terms."},
			texts(search(t, b, b.org.ID, []string{kb.ID}, "voucher", 10)), cmpopts.SortSlices(func(x, y string) bool { return x < y }))
		wantEqual(t, []string{"New membership tiers."}, texts(search(t, b, b.org.ID, []string{kb.ID}, "membership", 10)))

		// No chunks clears the source's; a Seq given twice is a conflict
		// that changes nothing.
		dup := []model.KnowledgeChunk{{Seq: 0, Text: "duplicate one"}, {Seq: 0, Text: "duplicate two"}}
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.ReplaceKnowledgeChunks(b.ctx, b.org.ID, kb.ID, s.ID, dup) }), store.ErrConflict)
		wantEqual(t, []string{"New membership tiers."}, texts(search(t, b, b.org.ID, []string{kb.ID}, "membership duplicate", 10)))
		b.update(t, func(tx store.Tx) error { return tx.ReplaceKnowledgeChunks(b.ctx, b.org.ID, kb.ID, s.ID, nil) })
		wantEqual(t, []string{"A voucher from another source."}, texts(search(t, b, b.org.ID, []string{kb.ID}, "voucher membership", 10)))
	}},
	{"ManyChunks", func(t *testing.T, b *bundle) {
		// More chunks than one INSERT writes, each with a vector.
		kb := newKnowledgeBase(t, b, b.org.ID)
		s := newKnowledgeSource(t, b, b.org.ID, kb.ID)
		chunks := make([]model.KnowledgeChunk, 1234)
		for i := range chunks {
			chunks[i] = model.KnowledgeChunk{Seq: i, Text: "Chunk about pallets.", Embedding: []float32{float32(i), 1}}
		}
		b.update(t, func(tx store.Tx) error { return tx.ReplaceKnowledgeChunks(b.ctx, b.org.ID, kb.ID, s.ID, chunks) })
		got := vectors(t, b, b.org.ID, []string{kb.ID})
		wantEqual(t, len(chunks), len(got))
		for i, h := range got {
			wantEqual(t, chunks[i].Seq, h.Seq)
			wantEqual(t, chunks[i].Embedding, h.Embedding)
		}
		wantEqual(t, 50, len(search(t, b, b.org.ID, []string{kb.ID}, "pallet", 50)))
	}},
	{"Vectors", func(t *testing.T, b *bundle) {
		kb1 := newKnowledgeBase(t, b, b.org.ID)
		kb2 := newKnowledgeBase(t, b, b.org.ID)
		s1 := newKnowledgeSource(t, b, b.org.ID, kb1.ID, func(s *model.KnowledgeSource) { s.DisplayName = "one" })
		s2 := newKnowledgeSource(t, b, b.org.ID, kb2.ID, func(s *model.KnowledgeSource) { s.DisplayName = "two" })
		exotic := []float32{1.5, -2, 0.25, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1))}
		c1 := []model.KnowledgeChunk{
			{Seq: 0, Text: "with a vector", Embedding: exotic},
			{Seq: 1, Text: "without a vector"},
			{Seq: 2, Text: "with an empty vector", Embedding: []float32{}},
			{Seq: 3, Text: "with another vector", Embedding: []float32{0.1, 0.2, 0.3}},
		}
		c2 := []model.KnowledgeChunk{{SourceID: "ignored", Seq: 7, Text: "in the second base", Embedding: []float32{3}}}
		b.update(t, func(tx store.Tx) error {
			if err := tx.ReplaceKnowledgeChunks(b.ctx, b.org.ID, kb1.ID, s1.ID, c1); err != nil {
				return err
			}
			return tx.ReplaceKnowledgeChunks(b.ctx, b.org.ID, kb2.ID, s2.ID, c2)
		})
		hit := func(kb, src, name string, c model.KnowledgeChunk) store.ChunkHit {
			c.SourceID = src
			return store.ChunkHit{KnowledgeChunk: c, KnowledgeBaseID: kb, DisplayName: name}
		}
		want := []store.ChunkHit{hit(kb1.ID, s1.ID, "one", c1[0]), hit(kb1.ID, s1.ID, "one", c1[3]), hit(kb2.ID, s2.ID, "two", c2[0])}
		got := vectors(t, b, b.org.ID, []string{kb2.ID, kb1.ID})
		wantEqual(t, want, got, cmpopts.SortSlices(func(x, y store.ChunkHit) bool { return x.SourceID+x.Text < y.SourceID+y.Text }))
		if math.Signbit(float64(got[slices.IndexFunc(got, func(h store.ChunkHit) bool { return h.Seq == 0 })].Embedding[7])) != true {
			t.Fatal("-0 lost its sign")
		}
		wantEqual(t, want[:2], vectors(t, b, b.org.ID, []string{kb1.ID}))
		wantEqual(t, []store.ChunkHit{}, vectors(t, b, b.org.ID, nil))
		wantEqual(t, []store.ChunkHit{}, vectors(t, b, b.org.ID, []string{model.NewID(), "not-a-uuid"}))
	}},
}
