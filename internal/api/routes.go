package api

import "net/http"

// route is one entry of the route table. Routes are authenticated by API key
// unless public; bodyLimit overrides the default 1 MiB body limit. Only routes
// marked query read query parameters; any parameter sent to another route is
// refused, so a typo never goes unnoticed.
type route struct {
	pattern   string
	handler   http.Handler
	public    bool
	query     bool
	bodyLimit int64
}

// routes is the whole interface, in one table.
func (s *Server) routes() []route {
	h := func(pattern string, fn http.HandlerFunc) route { return route{pattern: pattern, handler: fn} }
	list := func(pattern string, fn http.HandlerFunc) route {
		return route{pattern: pattern, handler: fn, query: true}
	}
	return []route{
		{pattern: "GET /healthz", handler: http.HandlerFunc(s.health), public: true},
		{pattern: "GET /metrics", handler: s.serveMetrics(), public: true},
		{pattern: "GET /v1/openapi.yaml", handler: http.HandlerFunc(s.serveOpenAPI), public: true},

		h("GET /v1/organization", s.getOrganization),
		h("PATCH /v1/organization", s.updateOrganization),
		h("POST /v1/organization/webhook-secret", s.rotateWebhookSecret),
		h("DELETE /v1/organization/webhook-secret", s.deleteWebhookSecret),

		h("POST /v1/agents", s.createAgent),
		list("GET /v1/agents", s.listAgents),
		h("POST /v1/agents/batch-get", s.batchGetAgents),
		h("GET /v1/agents/{id}", s.getAgent),
		h("PATCH /v1/agents/{id}", s.updateAgent),
		h("DELETE /v1/agents/{id}", s.deleteAgent),
		h("POST /v1/agents/{id}/duplicate", s.duplicateAgent),
		h("GET /v1/agents/{id}/custom-tools", s.listCustomTools),
		h("POST /v1/agents/{id}/custom-tools", s.createCustomTool),
		h("GET /v1/agents/{id}/custom-tools/{toolId}", s.getCustomTool),
		h("PATCH /v1/agents/{id}/custom-tools/{toolId}", s.updateCustomTool),
		h("DELETE /v1/agents/{id}/custom-tools/{toolId}", s.deleteCustomTool),

		h("POST /v1/folders", s.createFolder),
		list("GET /v1/folders", s.listFolders),
		h("GET /v1/folders/{id}", s.getFolder),
		h("PATCH /v1/folders/{id}", s.updateFolder),
		h("DELETE /v1/folders/{id}", s.deleteFolder),

		h("POST /v1/sip-trunks", s.createSIPTrunk),
		list("GET /v1/sip-trunks", s.listSIPTrunks),
		h("GET /v1/sip-trunks/{id}", s.getSIPTrunk),
		h("PATCH /v1/sip-trunks/{id}", s.updateSIPTrunk),
		h("DELETE /v1/sip-trunks/{id}", s.deleteSIPTrunk),

		h("POST /v1/phone-numbers", s.createPhoneNumber),
		list("GET /v1/phone-numbers", s.listPhoneNumbers),
		h("GET /v1/phone-numbers/{id}", s.getPhoneNumber),
		h("PATCH /v1/phone-numbers/{id}", s.updatePhoneNumber),
		h("DELETE /v1/phone-numbers/{id}", s.deletePhoneNumber),

		h("POST /v1/messaging-connections", s.createMessagingConnection),
		list("GET /v1/messaging-connections", s.listMessagingConnections),
		h("GET /v1/messaging-connections/{id}", s.getMessagingConnection),
		h("DELETE /v1/messaging-connections/{id}", s.deleteMessagingConnection),

		h("POST /v1/knowledge-bases", s.createKnowledgeBase),
		list("GET /v1/knowledge-bases", s.listKnowledgeBases),
		h("GET /v1/knowledge-bases/{id}", s.getKnowledgeBase),
		h("PATCH /v1/knowledge-bases/{id}", s.updateKnowledgeBase),
		h("DELETE /v1/knowledge-bases/{id}", s.deleteKnowledgeBase),
	}
}
