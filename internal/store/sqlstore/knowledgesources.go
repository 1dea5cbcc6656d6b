package sqlstore

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

const knowledgeSourceColumns = "id, org_id, knowledge_base_id, display_name, content, original_url, mime_type, " +
	"file_size, error_message, indexed_at, created_at, updated_at"

func scanKnowledgeSource(r rowScanner) (model.KnowledgeSource, error) {
	var s model.KnowledgeSource
	err := r.Scan(&s.ID, &s.OrgID, &s.KnowledgeBaseID, &s.DisplayName, &s.Content, &s.OriginalURL, &s.MimeType,
		&s.FileSize, &s.ErrorMessage, nullTimeDest{&s.IndexedAt}, timeDest{&s.CreatedAt}, timeDest{&s.UpdatedAt})
	return s, err
}

// stampPtr is stamp for an optional time, written back so the caller holds
// what was stored.
func stampPtr(p **time.Time) {
	if *p != nil {
		v := stamp(**p)
		*p = &v
	}
}

// CreateKnowledgeSource inserts the source; a knowledge base outside the
// organization is ErrNotFound.
func (t *tx) CreateKnowledgeSource(ctx context.Context, s *model.KnowledgeSource) error {
	if !uuids(s.OrgID, s.KnowledgeBaseID) {
		return notFound("create knowledge source: knowledge base %s", s.KnowledgeBaseID)
	}
	if s.ID == "" {
		s.ID = model.NewID()
	}
	s.CreatedAt, s.UpdatedAt = stamp(s.CreatedAt), stamp(s.UpdatedAt)
	stampPtr(&s.IndexedAt)
	_, err := t.exec(ctx, `INSERT INTO knowledge_base_sources (`+knowledgeSourceColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.OrgID, s.KnowledgeBaseID, s.DisplayName, s.Content, s.OriginalURL, s.MimeType,
		s.FileSize, s.ErrorMessage, t.nullTime(s.IndexedAt), t.time(s.CreatedAt), t.time(s.UpdatedAt))
	if err != nil {
		return t.fail(err, "create knowledge source %s", s.ID)
	}
	return nil
}

func (t *tx) GetKnowledgeSource(ctx context.Context, orgID, kbID, id string) (model.KnowledgeSource, error) {
	if !uuids(orgID, kbID, id) {
		return model.KnowledgeSource{}, notFound("get knowledge source %s", id)
	}
	return get(ctx, t, scanKnowledgeSource, "get knowledge source "+id,
		`SELECT `+knowledgeSourceColumns+` FROM knowledge_base_sources
		WHERE org_id = ? AND knowledge_base_id = ? AND id = ?`, orgID, kbID, id)
}

// ListKnowledgeSources returns the base's sources, oldest first; none (or a
// base that does not exist) is an empty slice.
func (t *tx) ListKnowledgeSources(ctx context.Context, orgID, kbID string) ([]model.KnowledgeSource, error) {
	if !uuids(orgID, kbID) {
		return []model.KnowledgeSource{}, nil
	}
	return all(ctx, t, scanKnowledgeSource, "list knowledge sources",
		`SELECT `+knowledgeSourceColumns+` FROM knowledge_base_sources
		WHERE org_id = ? AND knowledge_base_id = ? ORDER BY created_at, id`, orgID, kbID)
}

// UpdateKnowledgeSource writes how indexing went: ErrorMessage, IndexedAt
// and UpdatedAt. The rest of a source does not change after it is created.
func (t *tx) UpdateKnowledgeSource(ctx context.Context, s *model.KnowledgeSource) error {
	if !uuids(s.OrgID, s.KnowledgeBaseID, s.ID) {
		return notFound("update knowledge source %s", s.ID)
	}
	s.UpdatedAt = stamp(s.UpdatedAt)
	stampPtr(&s.IndexedAt)
	return t.change(ctx, "update knowledge source "+s.ID,
		`UPDATE knowledge_base_sources SET error_message = ?, indexed_at = ?, updated_at = ?
		WHERE org_id = ? AND knowledge_base_id = ? AND id = ?`,
		s.ErrorMessage, t.nullTime(s.IndexedAt), t.time(s.UpdatedAt), s.OrgID, s.KnowledgeBaseID, s.ID)
}

// DeleteKnowledgeSource deletes the source and its chunks.
func (t *tx) DeleteKnowledgeSource(ctx context.Context, orgID, kbID, id string) error {
	if !uuids(orgID, kbID, id) {
		return notFound("delete knowledge source %s", id)
	}
	return t.change(ctx, "delete knowledge source "+id,
		`DELETE FROM knowledge_base_sources WHERE org_id = ? AND knowledge_base_id = ? AND id = ?`, orgID, kbID, id)
}

// PendingKnowledgeSources returns up to limit sources, of every
// organization, whose indexing never finished: not indexed and no error
// (the server stopped while indexing them). Oldest first.
func (t *tx) PendingKnowledgeSources(ctx context.Context, limit int) ([]model.KnowledgeSource, error) {
	return all(ctx, t, scanKnowledgeSource, "pending knowledge sources",
		`SELECT `+knowledgeSourceColumns+` FROM knowledge_base_sources
		WHERE indexed_at IS NULL AND error_message IS NULL ORDER BY created_at, id LIMIT ?`, limit)
}
