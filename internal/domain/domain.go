// Package domain gathers the domain services into the one set that every
// interface answers from: the JSON API (internal/api) and the dashboard
// (internal/web) call the same services, so a rule holds whichever way in.
// internal/app builds the set once and hands it to both.
package domain

import (
	"context"

	"github.com/parley-voice/parley/internal/account"
	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/folder"
	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/phonenumber"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/siptrunk"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/suppression"
)

// Services are the domain services the interfaces answer from.
type Services struct {
	Orgs                 *org.Service
	Accounts             *account.Service
	Agents               *agent.Service
	Folders              *folder.Service
	SIPTrunks            *siptrunk.Service
	PhoneNumbers         *phonenumber.Service
	MessagingConnections *sms.Connections
	KnowledgeBases       *knowledge.Service
	Calls                *call.Service
	Messages             *sms.Messages
	TestSuites           *eval.Service
	// Campaigns keeps calling lists; its Wake is set by the caller that
	// runs the dispatcher.
	Campaigns    *campaign.Service
	Suppressions *suppression.Service
	// Queue places, cancels and runs calls.
	Queue *callqueue.Queue
	// Recordings serves call recordings (nil: none kept).
	Recordings *recording.Store
	// WebCalls answers browsers' offers (nil: web calls are not served,
	// as when the server runs no SIP side).
	WebCalls WebCalls
}

// WebCalls answers a browser's WebRTC offer as a test call to an agent
// (telephony.Phone): the call as admitted and the SDP answer.
type WebCalls interface {
	WebCall(ctx context.Context, orgID, agentID, offer string) (model.Call, string, error)
}

// New builds the domain services over one store and secret box; the call
// queue, which needs the telephony side, and the test runner's parts
// (queue, engine, judge, webhooks) are set by the caller.
// defaultConcurrencyLimit is a new organization's concurrencyLimit.
func New(st store.Store, box *secret.Box, defaultConcurrencyLimit int) Services {
	orgs := &org.Service{Store: st, Box: box, DefaultConcurrencyLimit: defaultConcurrencyLimit}
	return Services{
		Orgs:                 orgs,
		Accounts:             &account.Service{Store: st, Orgs: orgs},
		Agents:               &agent.Service{Store: st},
		Folders:              &folder.Service{Store: st},
		SIPTrunks:            &siptrunk.Service{Store: st, Box: box},
		PhoneNumbers:         &phonenumber.Service{Store: st},
		MessagingConnections: &sms.Connections{Store: st, Box: box},
		KnowledgeBases:       &knowledge.Service{Store: st},
		Calls:                &call.Service{Store: st},
		Messages:             &sms.Messages{Store: st, Box: box},
		TestSuites:           &eval.Service{Store: st, Runner: &eval.Runner{Store: st}},
		Campaigns:            &campaign.Service{Store: st},
		Suppressions:         &suppression.Service{Store: st},
	}
}
