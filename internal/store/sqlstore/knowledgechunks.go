package sqlstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// chunkRows is how many chunks one INSERT writes: 6 values each, far below
// both engines' parameter limits.
const chunkRows = 500

// ReplaceKnowledgeChunks deletes the source's chunks and inserts chunks in
// their place, each with the given Seq (a Seq given twice is ErrConflict);
// their SourceID is ignored, the chunks are sourceID's. A source outside the
// organization or the base is ErrNotFound.
func (t *tx) ReplaceKnowledgeChunks(ctx context.Context, orgID, kbID, sourceID string, chunks []model.KnowledgeChunk) error {
	what := "replace chunks of knowledge source " + sourceID
	if !uuids(orgID, kbID, sourceID) {
		return notFound("%s", what)
	}
	// Locking the source makes concurrent replacements of its chunks take
	// turns on PostgreSQL: the second then deletes what the first inserted
	// rather than colliding with it.
	var one int
	if err := t.queryRow(ctx, `SELECT 1 FROM knowledge_base_sources WHERE org_id = ? AND knowledge_base_id = ? AND id = ?`+
		t.forUpdate(false), orgID, kbID, sourceID).Scan(&one); err != nil {
		return t.fail(err, "%s", what)
	}
	if _, err := t.exec(ctx, `DELETE FROM knowledge_chunks WHERE source_id = ?`, sourceID); err != nil {
		return t.fail(err, "%s", what)
	}
	const row = "(?, ?, ?, ?, ?, ?)"
	for len(chunks) > 0 {
		batch := chunks[:min(chunkRows, len(chunks))]
		chunks = chunks[len(batch):]
		args := make([]any, 0, 6*len(batch))
		for _, c := range batch {
			args = append(args, orgID, kbID, sourceID, c.Seq, c.Text, vector(c.Embedding))
		}
		_, err := t.exec(ctx, `INSERT INTO knowledge_chunks (org_id, knowledge_base_id, source_id, seq, text, embedding)
			VALUES `+strings.TrimSuffix(strings.Repeat(row+", ", len(batch)), ", "), args...)
		if err != nil {
			return t.fail(err, "%s", what)
		}
	}
	return nil
}

func scanChunkHit(r rowScanner) (store.ChunkHit, error) {
	var h store.ChunkHit
	err := r.Scan(&h.SourceID, &h.Seq, &h.Text, &h.KnowledgeBaseID, &h.DisplayName, &h.Score)
	return h, err
}

func scanChunkVector(r rowScanner) (store.ChunkHit, error) {
	var h store.ChunkHit
	err := r.Scan(&h.SourceID, &h.Seq, &h.Text, vectorDest{&h.Embedding}, &h.KnowledgeBaseID, &h.DisplayName)
	return h, err
}

// SearchKnowledgeChunks ranks the chunks of the organization's bases kbIDs
// that hold any word of query (stemmed, so "refunds" finds "refund"), best
// first, ties by source id then seq, at most limit (Embedding left nil). The
// query is natural language, never search syntax: only its words count,
// stop words ("what", "is", "the"...) apart, so a query with none, or a
// limit under one, finds nothing.
func (t *tx) SearchKnowledgeChunks(ctx context.Context, orgID string, kbIDs []string, query string, limit int) ([]store.ChunkHit, error) {
	out := []store.ChunkHit{}
	terms := searchTerms(query)
	if limit < 1 || len(terms) == 0 || !uuids(orgID) {
		return out, nil
	}
	// The engine searches the bases it is given: only the organization's.
	var bases []string
	err := uuidBatches(kbIDs, func(batch []any, marks string) error {
		found, err := all(ctx, t, scanString, "search knowledge chunks",
			`SELECT id FROM knowledge_bases WHERE org_id = ? AND id IN (`+marks+`)`, append([]any{orgID}, batch...)...)
		bases = append(bases, found...)
		return err
	})
	if err != nil {
		return nil, err
	}
	batches := 0
	for ; len(bases) > 0; batches++ {
		batch := bases[:min(batchSize, len(bases))]
		bases = bases[len(batch):]
		ranked, every, rarest, err := t.rankedTerms(ctx, orgID, batch, terms)
		if err != nil {
			return nil, err
		}
		found, err := t.bestChunks(ctx, orgID, batch, ranked, every, 0, limit)
		if err == nil && every && len(found) == 0 {
			// No chunk holds every common word: some of those holding the
			// rarest, as many as the budget.
			found, err = t.bestChunks(ctx, orgID, batch, []string{rarest}, false, rankBudget, limit)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	if batches > 1 { // more bases than one query takes: the best of each
		slices.SortFunc(out, func(a, b store.ChunkHit) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.SourceID, b.SourceID), cmp.Compare(a.Seq, b.Seq))
		})
		out = out[:min(limit, len(out))]
	}
	return out, nil
}

// bestChunks runs the engine's BestChunks and reads the chunks it picks.
func (t *tx) bestChunks(ctx context.Context, orgID string, kbIDs, terms []string, every bool, within, limit int) ([]store.ChunkHit, error) {
	best, args := t.d.BestChunks(orgID, kbIDs, terms, every, within, limit)
	// The best are picked by their keys alone; only they are read whole and
	// named, not every match.
	return all(ctx, t, scanChunkHit, "search knowledge chunks",
		`SELECT h.source_id, h.seq, c.text, c.knowledge_base_id, s.display_name, h.score
		FROM (`+best+`) h
		JOIN knowledge_chunks c ON c.source_id = h.source_id AND c.seq = h.seq
		JOIN knowledge_base_sources s ON s.id = c.source_id
		WHERE c.org_id = ?
		ORDER BY h.score DESC, h.source_id, h.seq`, append(args, orgID)...)
}

// rankBudget bounds how many chunks one search ranks, whatever the base's
// size: ranking costs microseconds a chunk, and a word common in the base
// (in a fifth of the chunks, for the commonest of a large one) would
// otherwise have every chunk holding it ranked.
const rankBudget = 400

// rankedTerms is which of terms a search of the bases kbIDs matches chunks
// by (every: chunks holding every one of them, else any), so that it ranks at
// most about rankBudget chunks. The rarest terms are taken first, as many as
// the budget holds by their counts: a rare word tells the chunks that answer
// a question from those that merely share its common words, which bm25 and
// ts_rank weigh little anyway (the retrieval that asks rescores the best
// with every term). When even the rarest is too common, the chunks holding
// every term are ranked. A base small enough, or a query rare enough, has
// every term ranked as before. rarest is the rarest term: when no chunk
// holds every term, the search ranks a budget's worth of those holding it.
func (t *tx) rankedTerms(ctx context.Context, orgID string, kbIDs, terms []string) (ranked []string, every bool, rarest string, err error) {
	if len(terms) < 2 {
		return terms, false, terms[0], nil
	}
	type counted struct {
		term string
		n    int
	}
	q, args := t.d.ChunkTermCounts(kbIDs, terms, rankBudget+1)
	rows, err := all(ctx, t, func(r rowScanner) (counted, error) {
		var i, n int
		if err := r.Scan(&i, &n); err != nil {
			return counted{}, err
		}
		if i < 0 || i >= len(terms) {
			return counted{}, fmt.Errorf("count of term %d of %d", i, len(terms))
		}
		return counted{terms[i], n}, nil
	}, "search knowledge chunks", q, args...)
	if err != nil {
		return nil, false, "", err
	}
	counts := make([]counted, len(terms))
	for i, term := range terms {
		counts[i] = counted{term, 0} // a term the engine has no count of is rare
	}
	for _, c := range rows {
		counts[slices.Index(terms, c.term)] = c
	}
	slices.SortStableFunc(counts, func(a, b counted) int { return cmp.Compare(a.n, b.n) })
	sum := 0
	for _, c := range counts {
		if sum+c.n > rankBudget {
			break
		}
		sum += c.n
		ranked = append(ranked, c.term)
	}
	if len(ranked) == 0 {
		return terms, true, counts[0].term, nil
	}
	return ranked, false, counts[0].term, nil
}

func scanString(r rowScanner) (string, error) {
	var s string
	err := r.Scan(&s)
	return s, err
}

// KnowledgeChunkVectors returns the chunks of the organization's bases kbIDs
// that have an embedding, by source id then seq, Score zero.
func (t *tx) KnowledgeChunkVectors(ctx context.Context, orgID string, kbIDs []string) ([]store.ChunkHit, error) {
	out := []store.ChunkHit{}
	if !uuids(orgID) {
		return out, nil
	}
	batches := 0
	err := uuidBatches(kbIDs, func(batch []any, marks string) error {
		batches++
		found, err := all(ctx, t, scanChunkVector, "knowledge chunk vectors",
			`SELECT c.source_id, c.seq, c.text, c.embedding, c.knowledge_base_id, s.display_name
			FROM knowledge_chunks c JOIN knowledge_base_sources s ON s.id = c.source_id
			WHERE c.org_id = ? AND c.knowledge_base_id IN (`+marks+`) AND c.embedding IS NOT NULL
			ORDER BY c.source_id, c.seq`,
			append([]any{orgID}, batch...)...)
		out = append(out, found...)
		return err
	})
	if err != nil {
		return nil, err
	}
	if batches > 1 {
		slices.SortFunc(out, func(a, b store.ChunkHit) int {
			return cmp.Or(cmp.Compare(a.SourceID, b.SourceID), cmp.Compare(a.Seq, b.Seq))
		})
	}
	return out, nil
}

// Search terms.
const (
	// maxTerms bounds how many distinct words of a query are searched for:
	// a question has far fewer, and each term costs an index lookup.
	maxTerms = 32
	// maxTermBytes drops longer "words", which no text holds and which
	// PostgreSQL's tsquery refuses beyond 2047 bytes.
	maxTermBytes = 100
)

// searchTerms is the distinct words of query, lower-cased, in order: runs of
// letters and digits (with their combining marks), split at everything else
// (punctuation, quotes, apostrophes, operators), as both engines' tokenizers
// split text. English stop words are dropped, as PostgreSQL's english
// configuration drops them from documents and queries: on SQLite, where
// FTS5 indexes them, they would match nearly every chunk and rank next to
// nothing.
func searchTerms(query string) []string {
	var terms []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Mn, r)
	}) {
		w = strings.ToLower(w)
		if len(w) > maxTermBytes || stopWords[w] || seen[w] || !strings.ContainsFunc(w, func(r rune) bool {
			return unicode.IsLetter(r) || unicode.IsNumber(r)
		}) {
			continue
		}
		seen[w] = true
		terms = append(terms, w)
		if len(terms) == maxTerms {
			break
		}
	}
	return terms
}

// stopWords is PostgreSQL's english stop-word list (tsearch_data/english.stop,
// from Snowball).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves
		he him his himself she her hers herself it its itself they them their theirs themselves what which who
		whom this that these those am is are was were be been being have has had having do does did doing a an
		the and but if or because as until while of at by for with about against between into through during
		before after above below to from up down in out on off over under again further then once here there
		when where why how all any both each few more most other some such no nor not only own same so than
		too very s t can will just don should now`) {
		m[w] = true
	}
	return m
}()

// vector writes an embedding as little-endian float32s; nil and empty are
// both NULL.
func vector(v []float32) any {
	if len(v) == 0 {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// vectorDest scans an embedding column; NULL is nil.
type vectorDest struct{ v *[]float32 }

func (d vectorDest) Scan(src any) error {
	if src == nil {
		*d.v = nil
		return nil
	}
	b, ok := src.([]byte)
	if !ok {
		return fmt.Errorf("scan embedding: unexpected %T", src)
	}
	if len(b)%4 != 0 {
		return fmt.Errorf("scan embedding: %d bytes, not float32s", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	*d.v = v
	return nil
}
