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
	// Campaigns keeps calling lists; its Wake comes from the caller that
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

// Parts are the services that need more than the store and the secret
// box (a model, webhooks, the call plane): the caller builds them whole
// (internal/app) and Assemble adds the rest. A nil part is built bare over
// the store, as tests of the interfaces want.
type Parts struct {
	Orgs           *org.Service
	Messages       *sms.Messages
	KnowledgeBases *knowledge.Service
	TestSuites     *eval.Service
	Campaigns      *campaign.Service
	Queue          *callqueue.Queue
	Recordings     *recording.Store
	WebCalls       WebCalls
}

// New builds the domain services over one store and secret box, with bare
// parts (no queue, model or webhooks): what the interfaces' tests need.
// defaultConcurrencyLimit is a new organization's concurrencyLimit.
func New(st store.Store, box *secret.Box, defaultConcurrencyLimit int) Services {
	return Assemble(st, box, Parts{Orgs: &org.Service{Store: st, Box: box, DefaultConcurrencyLimit: defaultConcurrencyLimit}})
}

// Assemble builds the domain services over one store and secret box around
// the parts the caller built.
func Assemble(st store.Store, box *secret.Box, p Parts) Services {
	if p.Orgs == nil {
		p.Orgs = &org.Service{Store: st, Box: box}
	}
	if p.Messages == nil {
		p.Messages = &sms.Messages{Store: st, Box: box}
	}
	if p.KnowledgeBases == nil {
		p.KnowledgeBases = &knowledge.Service{Store: st}
	}
	if p.TestSuites == nil {
		p.TestSuites = &eval.Service{Store: st, Runner: &eval.Runner{Store: st}}
	}
	if p.Campaigns == nil {
		p.Campaigns = &campaign.Service{Store: st}
	}
	return Services{
		Orgs:                 p.Orgs,
		Accounts:             &account.Service{Store: st, Orgs: p.Orgs},
		Agents:               &agent.Service{Store: st},
		Folders:              &folder.Service{Store: st},
		SIPTrunks:            &siptrunk.Service{Store: st, Box: box},
		PhoneNumbers:         &phonenumber.Service{Store: st},
		MessagingConnections: &sms.Connections{Store: st, Box: box},
		KnowledgeBases:       p.KnowledgeBases,
		Calls:                &call.Service{Store: st},
		Messages:             p.Messages,
		TestSuites:           p.TestSuites,
		Campaigns:            p.Campaigns,
		Suppressions:         &suppression.Service{Store: st},
		Queue:                p.Queue,
		Recordings:           p.Recordings,
		WebCalls:             p.WebCalls,
	}
}
