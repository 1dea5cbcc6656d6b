package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const folderColumns = "id, org_id, name, color, created_at, updated_at"

func scanFolder(r rowScanner) (model.Folder, error) {
	var f model.Folder
	err := r.Scan(&f.ID, &f.OrgID, &f.Name, &f.Color, timeDest{&f.CreatedAt}, timeDest{&f.UpdatedAt})
	return f, err
}

func (t *tx) CreateFolder(ctx context.Context, f *model.Folder) error {
	if f.ID == "" {
		f.ID = model.NewID()
	}
	f.CreatedAt, f.UpdatedAt = stamp(f.CreatedAt), stamp(f.UpdatedAt)
	_, err := t.exec(ctx, `INSERT INTO folders (`+folderColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		f.ID, f.OrgID, f.Name, f.Color, t.time(f.CreatedAt), t.time(f.UpdatedAt))
	if err != nil {
		return t.fail(err, "create folder %s", f.ID)
	}
	return nil
}

func (t *tx) GetFolder(ctx context.Context, orgID, id string) (model.Folder, error) {
	if !uuids(orgID, id) {
		return model.Folder{}, notFound("get folder %s", id)
	}
	return get(ctx, t, scanFolder, "get folder "+id,
		`SELECT `+folderColumns+` FROM folders WHERE org_id = ? AND id = ?`, orgID, id)
}

func (t *tx) GetFolders(ctx context.Context, orgID string, ids []string) ([]model.Folder, error) {
	out := []model.Folder{}
	if !uuids(orgID) {
		return out, nil
	}
	err := uuidBatches(ids, func(batch []any, marks string) error {
		found, err := all(ctx, t, scanFolder, "get folders",
			`SELECT `+folderColumns+` FROM folders WHERE org_id = ? AND id IN (`+marks+`)`,
			append([]any{orgID}, batch...)...)
		out = append(out, found...)
		return err
	})
	return out, err
}

func (t *tx) ListFolders(ctx context.Context, orgID string, p store.Page) ([]model.Folder, int, error) {
	if !uuids(orgID) {
		return []model.Folder{}, 0, nil
	}
	return list(ctx, t, listing{
		columns: folderColumns,
		from:    "folders",
		where:   "org_id = ?",
		args:    []any{orgID},
		order:   newestFirst(p),
		page:    p,
	}, scanFolder, "list folders")
}

func (t *tx) UpdateFolder(ctx context.Context, f *model.Folder) error {
	if !uuids(f.OrgID, f.ID) {
		return notFound("update folder %s", f.ID)
	}
	f.UpdatedAt = stamp(f.UpdatedAt)
	return t.change(ctx, "update folder "+f.ID,
		`UPDATE folders SET name = ?, color = ?, updated_at = ? WHERE org_id = ? AND id = ?`,
		f.Name, f.Color, t.time(f.UpdatedAt), f.OrgID, f.ID)
}

// DeleteFolder deletes the folder; the schema leaves its agents without one.
func (t *tx) DeleteFolder(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete folder %s", id)
	}
	return t.change(ctx, "delete folder "+id,
		`DELETE FROM folders WHERE org_id = ? AND id = ?`, orgID, id)
}
