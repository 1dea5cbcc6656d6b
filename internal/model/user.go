package model

import "time"

// User is a person who signs in to the dashboard, in one organization.
// Email is stored lower-cased and is unique across the deployment, so
// sign-in needs nothing but it. PasswordHash is an encoded argon2id hash.
// MustChangePassword is set by a one-time password: until the user chose
// their own, the dashboard shows nothing but the page to choose it.
type User struct {
	ID                 string
	OrgID              string
	Email              string
	PasswordHash       string
	MustChangePassword bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Session is a signed-in browser. Only the hash of its cookie's token is
// stored; CSRFToken is the synchronizer token its forms must send back.
type Session struct {
	ID        string
	OrgID     string
	UserID    string
	Hash      []byte
	CSRFToken string
	CreatedAt time.Time
	ExpiresAt time.Time
}
