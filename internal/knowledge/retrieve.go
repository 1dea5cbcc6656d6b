package knowledge

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// Query limits and defaults.
const (
	MaxQueryLen   = 2000
	MaxChunks     = 20
	DefaultChunks = 5
	// candidates is how many chunks each ranking contributes before fusion.
	candidates = 50
	// rrfK is reciprocal rank fusion's constant (Cormack et al.: 60).
	rrfK = 60
)

// Hit is a retrieved chunk.
type Hit struct {
	KnowledgeBaseID string  `json:"-"`
	SourceID        string  `json:"sourceId"`
	DisplayName     string  `json:"displayName"`
	Text            string  `json:"text"`
	Score           float64 `json:"score"`
}

// QueryInput is POST /knowledge-bases/{id}/query.
type QueryInput struct {
	Query               opt.Field[string]  `json:"query"`
	Chunks              opt.Field[int]     `json:"chunks"`
	SimilarityThreshold opt.Field[float64] `json:"similarityThreshold"`
}

func (in *QueryInput) check() error {
	var l invalid.List
	switch {
	case !in.Query.Present():
		l.Add("query", "is required")
	case invalid.IsBlank(in.Query.V):
		l.Add("query", "must not be empty")
	case invalid.Len(in.Query.V) > MaxQueryLen:
		l.Add("query", "must be at most %d characters", MaxQueryLen)
	}
	if in.Chunks.Null || in.Chunks.Present() && (in.Chunks.V < 1 || in.Chunks.V > MaxChunks) {
		l.Add("chunks", "must be from 1 to %d", MaxChunks)
	}
	if in.SimilarityThreshold.Null || in.SimilarityThreshold.Present() && (in.SimilarityThreshold.V < 0 || in.SimilarityThreshold.V > 1) {
		l.Add("similarityThreshold", "must be from 0 to 1")
	}
	return l.Err()
}

// Query answers POST /knowledge-bases/{id}/query: the chunks an agent with
// this base would get.
func (s *Service) Query(ctx context.Context, orgID, kbID string, in QueryInput) ([]Hit, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if _, err := s.Get(ctx, orgID, kbID); err != nil {
		return nil, err
	}
	k := DefaultChunks
	if in.Chunks.Present() {
		k = in.Chunks.V
	}
	return s.Retrieve(ctx, orgID, []string{kbID}, in.Query.V, k, in.SimilarityThreshold.V)
}

// Retrieve ranks the chunks of the bases for query and returns at most k
// whose score is at least threshold, best first.
//
// Scores are from 0 to 1 and mean the same on every store. The full-text
// score is the share of the query's content words (stop words dropped,
// crudely stemmed) that the chunk contains, each word weighted by its
// rarity among the candidates the store's full-text index found
// (idf = ln(1 + N/df)): 1 means every content word is there. The store's
// own ranking (bm25, ts_rank) picks the candidates and breaks ties. With
// an embedder, chunks are also ranked by the cosine similarity of their
// vectors to the query's; the two rankings are fused by reciprocal rank
// (1/(60+rank) summed) and a chunk's score is the better of its full-text
// score and its cosine similarity (clamped at 0).
func (s *Service) Retrieve(ctx context.Context, orgID string, kbIDs []string, query string, k int, threshold float64) ([]Hit, error) {
	if len(kbIDs) == 0 || k <= 0 {
		return []Hit{}, nil
	}
	lexical, err := store.Read(ctx, s.Store, func(tx store.Tx) ([]store.ChunkHit, error) {
		return tx.SearchKnowledgeChunks(ctx, orgID, kbIDs, query, candidates)
	})
	if err != nil {
		return nil, err
	}
	scoreLexical(lexical, terms(query))
	type fused struct {
		hit   store.ChunkHit
		rrf   float64
		score float64
	}
	byChunk := map[chunkKey]*fused{}
	var order []*fused
	add := func(h store.ChunkHit, rank int, score float64) {
		key := chunkKey{h.SourceID, h.Seq}
		f := byChunk[key]
		if f == nil {
			f = &fused{hit: h}
			byChunk[key] = f
			order = append(order, f)
		}
		f.rrf += 1 / float64(rrfK+rank+1)
		f.score = max(f.score, score)
	}
	for i, h := range lexical {
		add(h, i, h.Score)
	}
	if s.Embedder != nil {
		vector, err := s.vectorRanking(ctx, orgID, kbIDs, query)
		if err != nil {
			s.log().Warn("knowledge query without vectors", "err", err)
		}
		for i, h := range vector {
			add(h, i, h.Score)
		}
	}
	slices.SortStableFunc(order, func(a, b *fused) int { return cmp.Compare(b.rrf, a.rrf) })
	out := []Hit{}
	for _, f := range order {
		if len(out) == k {
			break
		}
		if f.score < threshold || f.score <= 0 {
			continue
		}
		out = append(out, Hit{KnowledgeBaseID: f.hit.KnowledgeBaseID, SourceID: f.hit.SourceID, DisplayName: f.hit.DisplayName,
			Text: f.hit.Text, Score: math.Round(f.score*1000) / 1000})
	}
	return out, nil
}

type chunkKey struct {
	source string
	seq    int
}

// scoreLexical replaces the store's raw scores by the IDF-weighted share of
// the query's content words each chunk contains, and orders by it (the
// store's order breaking ties).
func scoreLexical(hits []store.ChunkHit, query map[string]bool) {
	if len(query) == 0 {
		for i := range hits {
			hits[i].Score = 0
		}
		return
	}
	chunkTerms := make([]map[string]bool, len(hits))
	df := map[string]int{}
	for i, h := range hits {
		chunkTerms[i] = terms(h.Text)
		for t := range query {
			if chunkTerms[i][t] {
				df[t]++
			}
		}
	}
	n := float64(len(hits))
	idf := func(t string) float64 { return math.Log(1 + (n+1)/(float64(df[t])+0.5)) }
	total := 0.0
	for t := range query {
		total += idf(t)
	}
	for i := range hits {
		got := 0.0
		for t := range query {
			if chunkTerms[i][t] {
				got += idf(t)
			}
		}
		hits[i].Score = got / total
	}
	slices.SortStableFunc(hits, func(a, b store.ChunkHit) int { return cmp.Compare(b.Score, a.Score) })
}

// vectorRanking ranks the bases' chunks by cosine similarity to the query.
func (s *Service) vectorRanking(ctx context.Context, orgID string, kbIDs []string, query string) ([]store.ChunkHit, error) {
	vs, err := s.Embedder.Embed(ctx, []string{query})
	if err != nil || len(vs) != 1 {
		return nil, err
	}
	q := vs[0]
	all, err := store.Read(ctx, s.Store, func(tx store.Tx) ([]store.ChunkHit, error) {
		return tx.KnowledgeChunkVectors(ctx, orgID, kbIDs)
	})
	if err != nil {
		return nil, err
	}
	for i := range all {
		all[i].Score = max(0, cosine(q, all[i].Embedding))
	}
	slices.SortStableFunc(all, func(a, b store.ChunkHit) int { return cmp.Compare(b.Score, a.Score) })
	return all[:min(len(all), candidates)], nil
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
