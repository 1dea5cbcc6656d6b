package web

import "net/http"

// route is one entry of the route table. Routes need a signed-in session
// unless public; passwordPage routes stay open to a user who must still
// replace a one-time password (every other page sends them to /password).
type route struct {
	pattern      string
	handler      http.Handler
	public       bool
	passwordPage bool
	// maxBody bounds the request body (0: maxForm); uploads take more.
	maxBody int64
}

// routes is the whole dashboard, in one table.
func (s *Server) routes() []route {
	h := func(pattern string, fn http.HandlerFunc) route { return route{pattern: pattern, handler: fn} }
	public := func(pattern string, fn http.HandlerFunc) route {
		return route{pattern: pattern, handler: fn, public: true}
	}
	password := func(pattern string, fn http.HandlerFunc) route {
		return route{pattern: pattern, handler: fn, passwordPage: true}
	}
	upload := func(pattern string, fn http.HandlerFunc) route {
		return route{pattern: pattern, handler: fn, maxBody: maxUpload}
	}
	return []route{
		public("GET /static/", s.serveStatic),
		public("GET /signin", s.signInPage),
		public("POST /signin", s.signIn),
		password("POST /signout", s.signOut),
		password("GET /password", s.passwordPage),
		password("POST /password", s.changePassword),

		h("GET /{$}", s.home),

		h("GET /agents", s.listAgents),
		h("GET /agents/new", s.newAgent),
		h("POST /agents", s.createAgent),
		h("GET /agents/{id}", s.editAgent),
		h("POST /agents/{id}", s.updateAgent),
		h("POST /agents/{id}/duplicate", s.duplicateAgent),
		h("GET /agents/{id}/delete", s.confirmDeleteAgent),
		h("POST /agents/{id}/delete", s.deleteAgent),
		h("GET /agents/{id}/tools/new", s.newTool),
		h("POST /agents/{id}/tools", s.createTool),
		h("GET /agents/{id}/tools/{toolId}", s.editTool),
		h("POST /agents/{id}/tools/{toolId}", s.updateTool),
		h("GET /agents/{id}/tools/{toolId}/delete", s.confirmDeleteTool),
		h("POST /agents/{id}/tools/{toolId}/delete", s.deleteTool),

		// Talking to an agent from the browser (talk.go).
		h("GET /agents/{id}/talk", s.talkPage),
		h("POST /agents/{id}/talk", s.startTalk),
		h("GET /agents/{id}/talk/{callId}", s.talkProgress),

		h("GET /keys", s.listKeys),
		h("POST /keys", s.createKey),
		h("GET /keys/{id}/revoke", s.confirmRevokeKey),
		h("POST /keys/{id}/revoke", s.revokeKey),

		h("GET /users", s.listUsers),
		h("POST /users", s.addUser),
		h("GET /users/{id}/reset", s.confirmResetPassword),
		h("POST /users/{id}/reset", s.resetPassword),
		h("GET /users/{id}/delete", s.confirmRemoveUser),
		h("POST /users/{id}/delete", s.removeUser),

		// Organization admin: trunks, numbers, settings, knowledge bases.
		h("GET /trunks", s.listTrunks),
		h("GET /trunks/new", s.newTrunk),
		h("POST /trunks", s.createTrunk),
		h("GET /trunks/{id}", s.editTrunk),
		h("POST /trunks/{id}", s.updateTrunk),
		h("GET /trunks/{id}/delete", s.confirmDeleteTrunk),
		h("POST /trunks/{id}/delete", s.deleteTrunk),
		h("GET /numbers", s.listNumbers),
		h("GET /numbers/new", s.newNumber),
		h("POST /numbers", s.createNumber),
		h("GET /numbers/{id}", s.editNumber),
		h("POST /numbers/{id}", s.updateNumber),
		h("GET /numbers/{id}/delete", s.confirmDeleteNumber),
		h("POST /numbers/{id}/delete", s.deleteNumber),
		h("GET /connections", s.listConnections),
		h("GET /connections/new", s.newConnection),
		h("POST /connections", s.createConnection),
		h("GET /connections/{id}", s.editConnection),
		h("POST /connections/{id}", s.updateConnection),
		h("GET /connections/{id}/delete", s.confirmDeleteConnection),
		h("POST /connections/{id}/delete", s.deleteConnection),
		h("GET /settings", s.settings),
		h("POST /settings", s.updateSettings),
		h("POST /settings/webhook-secret", s.rotateWebhookSecret),
		h("GET /settings/webhook-secret/delete", s.confirmStopSigning),
		h("POST /settings/webhook-secret/delete", s.stopSigning),
		h("GET /knowledge", s.listKnowledge),
		h("POST /knowledge", s.createKnowledge),
		h("GET /knowledge/{id}", s.showKnowledge),
		h("POST /knowledge/{id}/sources", s.addKnowledgeSource),
		h("POST /knowledge/{id}/query", s.queryKnowledge),
		h("GET /knowledge/{id}/delete", s.confirmDeleteKnowledge),
		h("POST /knowledge/{id}/delete", s.deleteKnowledge),
		h("GET /knowledge/{id}/sources/{sourceId}/delete", s.confirmDeleteSource),
		h("POST /knowledge/{id}/sources/{sourceId}/delete", s.deleteSource),

		// Test suites: suites.go, suite.go, testcases.go, testruns.go.
		h("GET /suites", s.listSuites),
		h("GET /suites/new", s.newSuite),
		h("POST /suites", s.createSuite),
		h("GET /suites/{id}", s.showSuite),
		h("POST /suites/{id}", s.updateSuite),
		h("GET /suites/{id}/edit", s.editSuite),
		h("GET /suites/{id}/delete", s.confirmDeleteSuite),
		h("POST /suites/{id}/delete", s.deleteSuite),
		h("GET /suites/{id}/cases/new", s.newCase),
		h("POST /suites/{id}/cases", s.createCase),
		h("POST /suites/{id}/cases/generated", s.saveGenerated),
		h("GET /suites/{id}/cases/{caseId}", s.editCase),
		h("POST /suites/{id}/cases/{caseId}", s.updateCase),
		h("GET /suites/{id}/cases/{caseId}/delete", s.confirmDeleteCase),
		h("POST /suites/{id}/cases/{caseId}/delete", s.deleteCase),
		h("POST /suites/{id}/generate", s.generateTests),
		h("POST /suites/{id}/runs", s.startRun),
		h("GET /suites/{id}/runs/{runId}", s.showRun),
		h("GET /suites/{id}/runs/{runId}/live", s.liveRunPartial),
		h("POST /suites/{id}/runs/{runId}/cancel", s.cancelRun),

		h("GET /calls", s.listCalls),
		h("GET /calls/live", s.liveCallsPartial),
		h("GET /calls/{id}", s.showCall),
		h("GET /calls/{id}/live", s.liveCallPartial),
		h("GET /calls/{id}/recording", s.callRecording),
		h("POST /calls/{id}/end", s.endCall),

		h("GET /messages", s.listMessages),

		// Campaigns: campaigns.go, campaign.go, campaignform.go; the
		// do-not-call list: suppressions.go.
		h("GET /campaigns", s.listCampaigns),
		h("GET /campaigns/new", s.newCampaign),
		upload("POST /campaigns", s.createCampaign),
		h("GET /campaigns/{id}", s.showCampaign),
		h("POST /campaigns/{id}", s.updateCampaign),
		h("GET /campaigns/{id}/edit", s.editCampaign),
		h("GET /campaigns/{id}/progress", s.campaignProgressPartial),
		upload("POST /campaigns/{id}/recipients", s.uploadRecipients),
		h("POST /campaigns/{id}/start", s.startCampaign),
		h("POST /campaigns/{id}/pause", s.pauseCampaign),
		h("POST /campaigns/{id}/resume", s.resumeCampaign),
		h("GET /campaigns/{id}/cancel", s.confirmCancelCampaign),
		h("POST /campaigns/{id}/cancel", s.cancelCampaign),
		h("GET /campaigns/{id}/delete", s.confirmDeleteCampaign),
		h("POST /campaigns/{id}/delete", s.deleteCampaign),
		h("GET /suppressions", s.listSuppressions),
		h("POST /suppressions", s.addSuppression),
		upload("POST /suppressions/import", s.importSuppressions),
		h("GET /suppressions/{id}/delete", s.confirmDeleteSuppression),
		h("POST /suppressions/{id}/delete", s.deleteSuppression),
	}
}
