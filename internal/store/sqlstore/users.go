package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const userColumns = "id, org_id, email, password_hash, must_change_password, created_at, updated_at"

func scanUser(r rowScanner) (model.User, error) {
	var u model.User
	err := r.Scan(&u.ID, &u.OrgID, &u.Email, &u.PasswordHash, &u.MustChangePassword,
		timeDest{&u.CreatedAt}, timeDest{&u.UpdatedAt})
	return u, err
}

func (t *tx) CreateUser(ctx context.Context, u *model.User) error {
	if u.ID == "" {
		u.ID = model.NewID()
	}
	if !uuids(u.OrgID) {
		return notFound("create user %s: organization %s", u.ID, u.OrgID)
	}
	u.CreatedAt, u.UpdatedAt = stamp(u.CreatedAt), stamp(u.UpdatedAt)
	_, err := t.exec(ctx, `INSERT INTO users (`+userColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.OrgID, u.Email, u.PasswordHash, u.MustChangePassword, t.time(u.CreatedAt), t.time(u.UpdatedAt))
	if err != nil {
		return t.fail(err, "create user %s", u.ID)
	}
	return nil
}

func (t *tx) GetUser(ctx context.Context, orgID, id string) (model.User, error) {
	if !uuids(orgID, id) {
		return model.User{}, notFound("get user %s", id)
	}
	return get(ctx, t, scanUser, "get user "+id,
		`SELECT `+userColumns+` FROM users WHERE org_id = ? AND id = ?`, orgID, id)
}

// GetUserByEmail finds a user in any organization: an email signs in to
// the one organization it belongs to.
func (t *tx) GetUserByEmail(ctx context.Context, email string) (model.User, error) {
	return get(ctx, t, scanUser, "get user by email",
		`SELECT `+userColumns+` FROM users WHERE email = ?`, email)
}

func (t *tx) SetUserPassword(ctx context.Context, orgID, id, hash string, mustChange bool) error {
	if !uuids(orgID, id) {
		return notFound("set the password of user %s", id)
	}
	return t.change(ctx, "set the password of user "+id,
		`UPDATE users SET password_hash = ?, must_change_password = ?, updated_at = ? WHERE org_id = ? AND id = ?`,
		hash, mustChange, t.time(model.Now()), orgID, id)
}

func (t *tx) CountUsers(ctx context.Context) (int, error) {
	return t.count(ctx, "count users", `SELECT count(*) FROM users`)
}

func (t *tx) ListUsers(ctx context.Context, orgID string, p store.Page) ([]model.User, int, error) {
	if !uuids(orgID) {
		return []model.User{}, 0, nil
	}
	return list(ctx, t, listing{
		columns: userColumns,
		from:    "users",
		where:   "org_id = ?",
		args:    []any{orgID},
		order:   newestFirst(p),
		page:    p,
	}, scanUser, "list users")
}

// DeleteUser deletes the user; the schema deletes their sessions with them.
func (t *tx) DeleteUser(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete user %s", id)
	}
	return t.change(ctx, "delete user "+id, `DELETE FROM users WHERE org_id = ? AND id = ?`, orgID, id)
}
