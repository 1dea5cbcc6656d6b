// Package web is the dashboard: server-rendered pages (html/template and
// embedded static assets, htmx vendored) over the same domain services as
// the JSON API, so a form obeys exactly the API's rules. It owns the
// dashboard's HTTP side of accounts: the session cookie, CSRF tokens, the
// sign-in rate limit and the security headers. Every page reads and writes
// only the signed-in user's organization.
package web
