package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/flow"
)

// flowSchema is the bytes of the conversation flow format's JSON Schema:
// the document every flowDefinition is validated against, served as is so
// editors and users read exactly what the server checks.
var flowSchema = flow.Schema()

// serveFlowSchema answers GET /v1/flow-schema.json, with no key needed.
func (s *Server) serveFlowSchema(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/schema+json")
	w.Write(flowSchema)
}
