package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/eval"
)

// route is one entry of the route table. Routes are authenticated by API key
// unless public; bodyLimit overrides the default 1 MiB body limit. Only routes
// marked query read query parameters; any parameter sent to another route is
// refused, so a typo never goes unnoticed. Only probes (health, readiness,
// metrics) are answered while the server drains (Drain).
type route struct {
	pattern   string
	handler   http.Handler
	public    bool
	query     bool
	probe     bool
	bodyLimit int64
}

// routes is the whole interface, in one table.
func (s *Server) routes() []route {
	h := func(pattern string, fn http.HandlerFunc) route { return route{pattern: pattern, handler: fn} }
	list := func(pattern string, fn http.HandlerFunc) route {
		return route{pattern: pattern, handler: fn, query: true}
	}
	return []route{
		{pattern: "GET /healthz", handler: http.HandlerFunc(s.health), public: true, probe: true},
		{pattern: "GET /readyz", handler: http.HandlerFunc(s.ready), public: true, probe: true},
		{pattern: "GET /metrics", handler: s.serveMetrics(), public: true, probe: true},
		{pattern: "GET /v1/openapi.yaml", handler: http.HandlerFunc(s.serveOpenAPI), public: true},
		{pattern: "GET /v1/flow-schema.json", handler: http.HandlerFunc(s.serveFlowSchema), public: true},

		h("GET /v1/organization", s.getOrganization),
		h("PATCH /v1/organization", s.updateOrganization),
		h("POST /v1/organization/webhook-secret", s.rotateWebhookSecret),
		h("DELETE /v1/organization/webhook-secret", s.deleteWebhookSecret),

		h("POST /v1/agents", createHandler(s.Agents.Create, presentFullAgent)),
		list("GET /v1/agents", s.listAgents),
		h("POST /v1/agents/batch-get", batchGetHandler(s.Agents.BatchGet, presentAgent)),
		h("GET /v1/agents/{id}", getHandler(uuidPath, s.Agents.Get, presentFullAgent)),
		h("PATCH /v1/agents/{id}", updateHandler(s.Agents.Update, presentFullAgent)),
		h("DELETE /v1/agents/{id}", deleteHandler(uuidPath, s.Agents.Delete)),
		h("POST /v1/agents/{id}/duplicate", s.duplicateAgent),
		h("GET /v1/agents/{id}/custom-tools", s.listCustomTools),
		h("POST /v1/agents/{id}/custom-tools", s.createCustomTool),
		h("GET /v1/agents/{id}/custom-tools/{toolId}", s.getCustomTool),
		h("PATCH /v1/agents/{id}/custom-tools/{toolId}", s.updateCustomTool),
		h("DELETE /v1/agents/{id}/custom-tools/{toolId}", s.deleteCustomTool),
		{pattern: "POST /v1/agents/{id}/web-calls", handler: http.HandlerFunc(s.createWebCall), bodyLimit: maxWebCallBody},

		h("POST /v1/calls", s.createCall),
		list("GET /v1/calls", s.listCalls),
		h("POST /v1/calls/batch-get", batchGetHandler(s.Calls.BatchGet, call.NewRecord)),
		h("GET /v1/calls/{id}", getHandler(uuidPath, s.Calls.Get, presentFullCall)),
		h("POST /v1/calls/{id}/cancel", s.cancelCall),
		// Authenticated by key or by a signed link, in the handler.
		{pattern: "GET /v1/calls/{id}/recording", handler: http.HandlerFunc(s.callRecording), public: true, query: true},
		// Authenticated by the carrier's signature, in the handler.
		{pattern: "POST /v1/messaging-connections/{id}/status", handler: http.HandlerFunc(s.messageStatus), public: true, query: true},
		{pattern: "POST /v1/messaging-connections/{id}/inbound", handler: http.HandlerFunc(s.inboundMessage), public: true, query: true},

		h("POST /v1/folders", createHandler(s.Folders.Create, presentFolder)),
		list("GET /v1/folders", listHandler(s.Folders.List, presentFolder)),
		h("GET /v1/folders/{id}", getHandler(uuidPath, s.Folders.Get, presentFolder)),
		h("PATCH /v1/folders/{id}", updateHandler(s.Folders.Update, presentFolder)),
		h("DELETE /v1/folders/{id}", deleteHandler(uuidPath, s.Folders.Delete)),

		h("POST /v1/sip-trunks", createHandler(s.SIPTrunks.Create, presentSIPTrunk)),
		list("GET /v1/sip-trunks", listHandler(s.SIPTrunks.List, presentSIPTrunk)),
		h("GET /v1/sip-trunks/{id}", getHandler(uuidPath, s.SIPTrunks.Get, presentSIPTrunk)),
		h("PATCH /v1/sip-trunks/{id}", updateHandler(s.SIPTrunks.Update, presentSIPTrunk)),
		h("DELETE /v1/sip-trunks/{id}", deleteHandler(uuidPath, s.SIPTrunks.Delete)),

		h("POST /v1/phone-numbers", createHandler(s.PhoneNumbers.Create, presentPhoneNumber)),
		list("GET /v1/phone-numbers", s.listPhoneNumbers),
		h("GET /v1/phone-numbers/{id}", getHandler(uuidPath, s.PhoneNumbers.Get, presentPhoneNumber)),
		h("PATCH /v1/phone-numbers/{id}", updateHandler(s.PhoneNumbers.Update, presentPhoneNumber)),
		h("DELETE /v1/phone-numbers/{id}", deleteHandler(uuidPath, s.PhoneNumbers.Delete)),

		h("POST /v1/messaging-connections", createHandler(s.MessagingConnections.Create, s.presentMessagingConnection)),
		list("GET /v1/messaging-connections", listHandler(s.MessagingConnections.List, s.presentMessagingConnection)),
		h("GET /v1/messaging-connections/{id}", getHandler(pathConnectionID, s.MessagingConnections.Get, s.presentMessagingConnection)),
		h("DELETE /v1/messaging-connections/{id}", deleteHandler(pathConnectionID, s.MessagingConnections.Delete)),

		h("POST /v1/knowledge-bases", createHandler(s.KnowledgeBases.CreateDetail, withSources)),
		list("GET /v1/knowledge-bases", listHandler(s.KnowledgeBases.List, presentKnowledgeBase)),
		h("GET /v1/knowledge-bases/{id}", getHandler(uuidPath, s.KnowledgeBases.GetDetail, withSources)),
		h("PATCH /v1/knowledge-bases/{id}", updateHandler(s.KnowledgeBases.UpdateDetail, withSources)),
		h("DELETE /v1/knowledge-bases/{id}", deleteHandler(uuidPath, s.KnowledgeBases.Delete)),
		{pattern: "POST /v1/knowledge-bases/{id}/sources", handler: http.HandlerFunc(s.addSource), bodyLimit: maxSourceBody},
		h("GET /v1/knowledge-bases/{id}/sources", s.listSources),
		h("GET /v1/knowledge-bases/{id}/sources/{sourceId}", s.getSource),
		h("DELETE /v1/knowledge-bases/{id}/sources/{sourceId}", s.deleteSource),
		h("POST /v1/knowledge-bases/{id}/query", s.queryKnowledgeBase),

		h("POST /v1/test-suites", createHandler(s.TestSuites.CreateSuite, eval.NewSuiteRecord)),
		list("GET /v1/test-suites", s.listTestSuites),
		h("GET /v1/test-suites/{id}", getHandler(uuidPath, s.TestSuites.GetSuite, eval.NewSuiteRecord)),
		h("PATCH /v1/test-suites/{id}", updateHandler(s.TestSuites.UpdateSuite, eval.NewSuiteRecord)),
		h("DELETE /v1/test-suites/{id}", deleteHandler(uuidPath, s.TestSuites.DeleteSuite)),
		h("POST /v1/test-suites/{id}/test-cases", s.createTestCase),
		list("GET /v1/test-suites/{id}/test-cases", s.listTestCases),
		h("GET /v1/test-suites/{id}/test-cases/{caseId}", s.getTestCase),
		h("PATCH /v1/test-suites/{id}/test-cases/{caseId}", s.updateTestCase),
		h("DELETE /v1/test-suites/{id}/test-cases/{caseId}", s.deleteTestCase),
		h("POST /v1/test-suites/{id}/runs", s.startTestRun),
		list("GET /v1/test-suites/{id}/runs", s.listTestRuns),
		h("GET /v1/test-suites/{id}/runs/{runId}", s.getTestRun),
		h("POST /v1/test-suites/{id}/runs/{runId}/cancel", s.cancelTestRun),
		h("POST /v1/test-suites/{id}/generate-tests", s.generateTests),

		h("POST /v1/campaigns", createHandler(s.Campaigns.Create, campaign.NewRecord)),
		list("GET /v1/campaigns", s.listCampaigns),
		h("GET /v1/campaigns/{id}", getHandler(uuidPath, s.Campaigns.Get, campaign.NewRecord)),
		h("PATCH /v1/campaigns/{id}", updateHandler(s.Campaigns.Update, campaign.NewRecord)),
		h("DELETE /v1/campaigns/{id}", deleteHandler(uuidPath, s.Campaigns.Delete)),
		{pattern: "POST /v1/campaigns/{id}/recipients", handler: http.HandlerFunc(s.addRecipients), bodyLimit: maxRecipientsBody},
		list("GET /v1/campaigns/{id}/recipients", s.listRecipients),
		h("POST /v1/campaigns/{id}/start", actionHandler(s.Campaigns.Start, campaign.NewRecord)),
		h("POST /v1/campaigns/{id}/pause", actionHandler(s.Campaigns.Pause, campaign.NewRecord)),
		h("POST /v1/campaigns/{id}/resume", actionHandler(s.Campaigns.Resume, campaign.NewRecord)),
		h("POST /v1/campaigns/{id}/cancel", actionHandler(s.Campaigns.Cancel, campaign.NewRecord)),

		h("POST /v1/suppressions", s.createSuppression),
		list("GET /v1/suppressions", s.listSuppressions),
		h("DELETE /v1/suppressions/{id}", deleteHandler(uuidPath, s.Suppressions.Delete)),

		h("POST /v1/messages", s.sendMessage),
		list("GET /v1/messages", s.listMessages),
		h("GET /v1/messages/{id}", getHandler(messagePath, s.Messages.Get, presentMessage)),
	}
}
