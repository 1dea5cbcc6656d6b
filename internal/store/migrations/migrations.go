package migrations

import (
	"embed"
	"io/fs"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// SQLite is the SQLite migrations, rooted so goose sees the files directly.
func SQLite() fs.FS { return sub("sqlite") }

// Postgres is the PostgreSQL migrations.
func Postgres() fs.FS { return sub("postgres") }

func sub(dir string) fs.FS {
	f, err := fs.Sub(files, dir)
	if err != nil {
		panic("migrations: " + err.Error()) // dir is a constant embedded above
	}
	return f
}
