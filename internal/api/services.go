package api

import (
	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/folder"
	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/phonenumber"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/siptrunk"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/store"
)

// NewServices builds the domain services over one store and secret box;
// the call queue, which needs the telephony side, and the test runner's
// parts (queue, engine, judge, webhooks) are set by the caller.
// defaultConcurrencyLimit is a new organization's concurrencyLimit.
func NewServices(st store.Store, box *secret.Box, defaultConcurrencyLimit int) Services {
	return Services{
		Orgs:                 &org.Service{Store: st, Box: box, DefaultConcurrencyLimit: defaultConcurrencyLimit},
		Agents:               &agent.Service{Store: st},
		Folders:              &folder.Service{Store: st},
		SIPTrunks:            &siptrunk.Service{Store: st, Box: box},
		PhoneNumbers:         &phonenumber.Service{Store: st},
		MessagingConnections: &sms.Connections{Store: st, Box: box},
		KnowledgeBases:       &knowledge.Service{Store: st},
		Calls:                &call.Service{Store: st},
		Messages:             &sms.Messages{Store: st, Box: box},
		TestSuites:           &eval.Service{Store: st, Runner: &eval.Runner{Store: st}},
	}
}
