// Package campaign owns calling lists: campaigns, their recipients, and the
// rules of when and how each recipient is called — the checks of a
// campaign's settings and of an uploaded list (JSON or CSV), the calling
// windows in each recipient's local time, the caller id, the retry after
// each outcome, the pace of dials and the share of lines campaigns may use.
//
// The rules are pure: no store, no clock (every instant is passed in), so
// the dispatcher and the service share them and tests drive them with a
// fake clock.
package campaign
