package store

// Sort directions.
const (
	Asc  = "asc"
	Desc = "desc"
)

// Page selects one page of a list: Number counts from 1. SortDir is Asc or
// Desc (default Desc, newest first); lists sort by creation time then id.
type Page struct {
	Number  int
	Size    int
	SortDir string
}

// Offset is the number of rows before the page.
func (p Page) Offset() int { return (p.Number - 1) * p.Size }

// Agent list sort keys.
const (
	SortCreatedAt = "createdAt"
	SortUpdatedAt = "updatedAt"
	SortName      = "name"
)

// FolderNone, as AgentFilter.FolderID, selects agents without a folder.
const FolderNone = "none"

// AgentFilter narrows and orders an agent list. Empty strings mean "any".
// Name sorts case-insensitively; every sort breaks ties by id in the same
// direction so pages never overlap.
type AgentFilter struct {
	Page
	SortBy   string // SortCreatedAt (default), SortUpdatedAt or SortName
	Status   string
	FolderID string // a folder id, FolderNone, or "" for all
	// Query is a case-insensitive substring of the name; % and _ in it are
	// literal characters, not wildcards.
	Query string
}

// PhoneNumberFilter narrows a phone number list.
type PhoneNumberFilter struct {
	Page
	AgentID    string
	SIPTrunkID string
}
