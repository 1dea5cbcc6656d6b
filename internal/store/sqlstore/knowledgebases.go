package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// knowledgeBaseColumns select from knowledge_bases aliased kb, counting its
// sources on the way.
const knowledgeBaseColumns = "kb.id, kb.org_id, kb.name, kb.description, " +
	"(SELECT count(*) FROM knowledge_base_sources s WHERE s.org_id = kb.org_id AND s.knowledge_base_id = kb.id), " +
	"kb.created_at, kb.updated_at"

func scanKnowledgeBase(r rowScanner) (model.KnowledgeBase, error) {
	var kb model.KnowledgeBase
	err := r.Scan(&kb.ID, &kb.OrgID, &kb.Name, &kb.Description, &kb.SourceCount,
		timeDest{&kb.CreatedAt}, timeDest{&kb.UpdatedAt})
	return kb, err
}

// CreateKnowledgeBase inserts the knowledge base; SourceCount is derived, not
// stored.
func (t *tx) CreateKnowledgeBase(ctx context.Context, kb *model.KnowledgeBase) error {
	if kb.ID == "" {
		kb.ID = model.NewID()
	}
	kb.CreatedAt, kb.UpdatedAt = stamp(kb.CreatedAt), stamp(kb.UpdatedAt)
	_, err := t.exec(ctx, `INSERT INTO knowledge_bases (id, org_id, name, description, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`,
		kb.ID, kb.OrgID, kb.Name, kb.Description, t.time(kb.CreatedAt), t.time(kb.UpdatedAt))
	if err != nil {
		return t.fail(err, "create knowledge base %s", kb.ID)
	}
	return nil
}

func (t *tx) GetKnowledgeBase(ctx context.Context, orgID, id string) (model.KnowledgeBase, error) {
	if !uuids(orgID, id) {
		return model.KnowledgeBase{}, notFound("get knowledge base %s", id)
	}
	return get(ctx, t, scanKnowledgeBase, "get knowledge base "+id,
		`SELECT `+knowledgeBaseColumns+` FROM knowledge_bases kb WHERE kb.org_id = ? AND kb.id = ?`, orgID, id)
}

func (t *tx) GetKnowledgeBases(ctx context.Context, orgID string, ids []string) ([]model.KnowledgeBase, error) {
	out := []model.KnowledgeBase{}
	if !uuids(orgID) {
		return out, nil
	}
	err := uuidBatches(ids, func(batch []any, marks string) error {
		found, err := all(ctx, t, scanKnowledgeBase, "get knowledge bases",
			`SELECT `+knowledgeBaseColumns+` FROM knowledge_bases kb WHERE kb.org_id = ? AND kb.id IN (`+marks+`)`,
			append([]any{orgID}, batch...)...)
		out = append(out, found...)
		return err
	})
	return out, err
}

func (t *tx) ListKnowledgeBases(ctx context.Context, orgID string, p store.Page) ([]model.KnowledgeBase, int, error) {
	if !uuids(orgID) {
		return []model.KnowledgeBase{}, 0, nil
	}
	return list(ctx, t, listing{
		columns: knowledgeBaseColumns,
		from:    "knowledge_bases kb",
		where:   "kb.org_id = ?",
		args:    []any{orgID},
		order:   newestFirst(p),
		page:    p,
	}, scanKnowledgeBase, "list knowledge bases")
}

func (t *tx) UpdateKnowledgeBase(ctx context.Context, kb *model.KnowledgeBase) error {
	if !uuids(kb.OrgID, kb.ID) {
		return notFound("update knowledge base %s", kb.ID)
	}
	kb.UpdatedAt = stamp(kb.UpdatedAt)
	return t.change(ctx, "update knowledge base "+kb.ID,
		`UPDATE knowledge_bases SET name = ?, description = ?, updated_at = ? WHERE org_id = ? AND id = ?`,
		kb.Name, kb.Description, t.time(kb.UpdatedAt), kb.OrgID, kb.ID)
}

// DeleteKnowledgeBase deletes the knowledge base with its sources and its
// agent assignments.
func (t *tx) DeleteKnowledgeBase(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete knowledge base %s", id)
	}
	return t.change(ctx, "delete knowledge base "+id,
		`DELETE FROM knowledge_bases WHERE org_id = ? AND id = ?`, orgID, id)
}
