package web

import (
	"net/http"
	"net/url"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// messageStatuses are GET /v1/messages' status values.
var messageStatuses = []string{model.MessageQueued, model.MessageSent, model.MessageDelivered,
	model.MessageUndelivered, model.MessageFailed, model.MessageReceived}

type messageListData struct {
	Filter   store.MessageFilter
	Messages []model.Message
	pager
	Statuses []string
	Errors   []string
}

// messageFilter reads the message list's query with GET /v1/messages'
// parameters and rules.
func messageFilter(values url.Values) (store.MessageFilter, []string) {
	q := &listQuery{v: values}
	f := store.MessageFilter{Page: q.page()}
	q.uuid("agentId", &f.AgentID)
	q.folder(&f.FolderID)
	q.uuid("callId", &f.CallID)
	q.enum("direction", &f.Direction, model.Inbound, model.Outbound)
	q.enum("status", &f.Status, messageStatuses...)
	return f, q.problems
}

// listMessages is the organization's text messages, filtered as
// GET /v1/messages is.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	f, problems := messageFilter(r.URL.Query())
	msgs, total, err := s.Messages.List(r.Context(), orgID(r), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := messageListData{Filter: f, Messages: msgs, pager: newPager(r.URL, f.Page, total, nil), Statuses: messageStatuses, Errors: problems}
	status := http.StatusOK
	if len(problems) > 0 {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "messages", "Messages", "messages", d)
}
