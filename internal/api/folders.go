package api

import (
	"github.com/parley-voice/parley/internal/model"
)

type folderJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Color     *string   `json:"color"`
	CreatedAt timestamp `json:"createdAt"`
	UpdatedAt timestamp `json:"updatedAt"`
}

func presentFolder(f model.Folder) folderJSON {
	return folderJSON{ID: f.ID, Name: f.Name, Color: f.Color, CreatedAt: ts(f.CreatedAt), UpdatedAt: ts(f.UpdatedAt)}
}
