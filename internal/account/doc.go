// Package account owns the dashboard's people: users of an organization
// who sign in with an email and a password, their passwords (argon2id
// hashes, one-time passwords that must be replaced at first sign-in) and
// their sessions (random tokens stored only as hashes, with the CSRF token
// their forms carry). HTTP (cookies, forms, rate limits) is internal/web's.
package account
