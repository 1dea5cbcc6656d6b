// Package api serves Parley's JSON interface under /v1: one route table
// (routes.go), handlers that decode, validate through a domain service, and
// respond, the house error shape (errors.go), strict query parsing, and the
// middleware every request passes (request ids, access logs, metrics, API-key
// authentication, body limits, per-key rate limits).
package api
