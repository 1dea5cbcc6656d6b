package web

import "github.com/parley-voice/parley/internal/store"

// adminPageOne is the first page of an admin list, as large as one goes.
var adminPageOne = store.Page{Number: 1, Size: maxPageSize, SortDir: store.Asc}
