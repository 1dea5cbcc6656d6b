package sqlstore

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

const sessionColumns = "id, org_id, user_id, hash, csrf_token, created_at, expires_at"

func scanSession(r rowScanner) (model.Session, error) {
	var s model.Session
	err := r.Scan(&s.ID, &s.OrgID, &s.UserID, &s.Hash, &s.CSRFToken, timeDest{&s.CreatedAt}, timeDest{&s.ExpiresAt})
	return s, err
}

// CreateSession inserts the session from its user's row, so a session of
// a user another organization owns, or of no user, is never stored.
func (t *tx) CreateSession(ctx context.Context, s *model.Session) error {
	if s.ID == "" {
		s.ID = model.NewID()
	}
	if !uuids(s.OrgID, s.UserID) {
		return notFound("create a session of user %s", s.UserID)
	}
	s.CreatedAt, s.ExpiresAt = stamp(s.CreatedAt), stamp(s.ExpiresAt)
	return t.change(ctx, "create a session of user "+s.UserID,
		`INSERT INTO sessions (`+sessionColumns+`)
		SELECT ?, u.org_id, u.id, ?, ?, ?, ? FROM users u WHERE u.org_id = ? AND u.id = ?`,
		s.ID, s.Hash, s.CSRFToken, t.time(s.CreatedAt), t.time(s.ExpiresAt), s.OrgID, s.UserID)
}

func (t *tx) GetSessionByHash(ctx context.Context, hash []byte) (model.Session, error) {
	return get(ctx, t, scanSession, "get session by hash",
		`SELECT `+sessionColumns+` FROM sessions WHERE hash = ?`, hash)
}

func (t *tx) DeleteSession(ctx context.Context, hash []byte) error {
	if _, err := t.exec(ctx, `DELETE FROM sessions WHERE hash = ?`, hash); err != nil {
		return t.fail(err, "delete session")
	}
	return nil
}

func (t *tx) DeleteUserSessions(ctx context.Context, orgID, userID string) error {
	if !uuids(orgID, userID) {
		return nil
	}
	if _, err := t.exec(ctx, `DELETE FROM sessions WHERE org_id = ? AND user_id = ?`, orgID, userID); err != nil {
		return t.fail(err, "delete the sessions of user %s", userID)
	}
	return nil
}

func (t *tx) DeleteExpiredSessions(ctx context.Context, before time.Time) (int, error) {
	res, err := t.exec(ctx, `DELETE FROM sessions WHERE expires_at < ?`, t.time(before))
	if err != nil {
		return 0, t.fail(err, "delete expired sessions")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, t.fail(err, "delete expired sessions: rows affected")
	}
	return int(n), nil
}
