package telephony

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// connectWait bounds how long an admitted inbound call may wait for its
// worker to pick it up before the INVITE is refused.
const connectWait = 10 * time.Second

// Handle serves one inbound INVITE (a sipua.Handler): route, authenticate,
// admit, run the pre-call webhook, answer, and return once the call is over.
func (p *Phone) Handle(ctx context.Context, in *sipua.Incoming) {
	log := p.log().With("sip_user", in.User, "from", in.FromUser, "source", in.Source.String())
	orgID := ""
	if tok := in.Header(loopbackHeader); tok != "" {
		org, ok := p.loopbackOrg(tok)
		if !ok {
			_ = in.Reject(403, "Forbidden")
			return
		}
		orgID = org
	}
	r, err := p.resolve(ctx, in.User, in.ToUser, orgID)
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		if orgID == "" && !p.authenticated(ctx, in, r) {
			return
		}
		log.Info("inbound call refused", "code", ref.code, "why", ref.msg)
		now := time.Now()
		if ref.record && p.refusals.take(in.Source, r.to, now) { // recorded first: the record exists once the caller hears the refusal
			c := p.newInbound(r, in)
			if err := p.Calls.Record(ctx, &c, call.Change{To: model.CallFailed, HangupCause: ref.cause, ErrorMessage: ref.msg}); err != nil {
				log.Error("refused call not recorded", "err", err)
			}
		}
		_ = in.Reject(ref.code, ref.reason)
		return
	case err != nil:
		rejectFailure(in, log, "inbound routing failed", err)
		return
	}
	if orgID == "" && !p.authorized(in, r) {
		return
	}
	c := p.newInbound(r, in)
	if orgID != "" {
		if id, ok := p.loopbackCaller(orgID, in.Header(loopbackCallerHeader)); ok {
			c.LoopbackCallerID = &id
		}
	}
	started := make(chan struct{})
	// finished hands over what to wait on for the call's end: the line's
	// Ended, or a closed channel when it did not connect (no goroutine
	// per call just to relay the end).
	finished := make(chan (<-chan struct{}), 1)
	connect := func(wctx context.Context, progress func(call.Change) bool) (call.Line, error) {
		close(started)
		l, err := p.connect(wctx, in, r, c, progress)
		if err != nil {
			finished <- closedChan
			return nil, err
		}
		finished <- l.Ended()
		return l, nil
	}
	asked := time.Now()
	record := p.refusals.take(in.Source, c.ToNumber, asked)
	err = p.Calls.Answer(ctx, &c, connect, record)
	if record && !errors.Is(err, callqueue.ErrConcurrencyLimit) {
		p.refusals.release(in.Source, c.ToNumber, asked) // not refused: nothing recorded to dedupe
	}
	switch {
	case errors.Is(err, callqueue.ErrConcurrencyLimit):
		_ = in.Reject(486, "Busy Here")
		return
	case err != nil:
		rejectFailure(in, log, "inbound call not admitted", err)
		return
	}
	select {
	case <-started:
	case <-time.After(connectWait):
		_ = in.Reject(480, "Temporarily Unavailable")
		return
	}
	<-<-finished
}

// retryAfterUnavailable is the Retry-After of an INVITE refused while the
// database is unavailable: the API's 503 says the same (docs/api.md).
const retryAfterUnavailable = 5 * time.Second

// rejectFailure refuses an INVITE that could not be routed or admitted:
// 503 Service Unavailable with Retry-After while the database cannot take
// the work (an outage: the carrier may try again, or another server), 500
// for anything else (a bug), logged as what failed.
func rejectFailure(in *sipua.Incoming, log *slog.Logger, what string, err error) {
	if errors.Is(err, store.ErrUnavailable) || errors.Is(err, callqueue.ErrDraining) {
		log.Warn(what+": unavailable", "err", err)
		_ = in.RejectRetryAfter(503, "Service Unavailable", retryAfterUnavailable)
		return
	}
	log.Error(what, "err", err)
	_ = in.Reject(500, "Server Internal Error")
}

// closedChan is an end that has already come.
var closedChan = func() <-chan struct{} { c := make(chan struct{}); close(c); return c }()

// authorized applies the number's trunk's inbound rules: the source
// allow-list (403) and digest credentials (407 challenge).
// authorized admits an INVITE to r as its trunk requires: digest
// credentials first (so nothing else is told to a caller who has not
// authenticated), then the source allow-list.
func (p *Phone) authorized(in *sipua.Incoming, r route) bool {
	t := r.trunk
	if t == nil {
		return true
	}
	if requiresAuth(t) {
		pw, err := p.Box.Open(t.InboundPassword)
		if err != nil {
			_ = in.Reject(500, "Server Internal Error")
			return false
		}
		if !in.Authorize(*t.InboundUsername, pw) {
			return false
		}
	}
	if !allowed(t, in.Source) {
		_ = in.Reject(403, "Forbidden")
		return false
	}
	return true
}

func requiresAuth(t *model.SIPTrunk) bool {
	return t != nil && t.InboundUsername != nil && len(t.InboundPassword) > 0
}

// authenticated decides whether a refused INVITE (unknown or unassigned
// number, disabled agent) may be told why, so that refusals and numbers
// on authenticating trunks answer alike until the caller authenticates
// (refusals.go, "Enumeration"). It answers the INVITE itself when not.
func (p *Phone) authenticated(ctx context.Context, in *sipua.Incoming, r route) bool {
	if r.trunk != nil {
		return !requiresAuth(r.trunk) || p.authorized(in, r)
	}
	anyAuth, err := p.decoy.authenticating(ctx, p.Store, time.Now())
	if err != nil {
		rejectFailure(in, p.log(), "inbound: do trunks authenticate", err)
		return false
	}
	if !anyAuth {
		return true
	}
	p.decoy.challenge(in)
	return false
}

func (p *Phone) newInbound(r route, in *sipua.Incoming) model.Call {
	var trunkID *string
	if r.trunk != nil {
		trunkID = &r.trunk.ID
	}
	return call.NewInbound(r.agent, trunkID, callerNumber(in.FromUser), r.to, r.dialedAgentID)
}

// connect runs on the call's worker: the pre-call webhook, ringing, the
// answer. A caller who hangs up first leaves the call CANCELED.
func (p *Phone) connect(ctx context.Context, in *sipua.Incoming, r route, c model.Call, progress func(call.Change) bool) (call.Line, error) {
	hungUp := &call.DialError{Status: model.CallCanceled, Cause: call.CauseUserEnded, Message: "the caller hung up before the call was answered"}
	pre := &call.PreCallOutcome{Agent: r.agent}
	if url := r.agent.Config.PreCallWebhookURL; url != nil {
		secret, err := p.Secret(ctx, c.OrgID)
		if err != nil {
			p.log().Error("pre-call webhook secret", "call_id", c.ID, "err", err)
		}
		dialed := ""
		if r.dialedAgentID != nil {
			dialed = *r.dialedAgentID
		}
		pre.Variables, pre.Status = p.PreCalls.PreCall(ctx, *url, secret, webhook.PreCallPayload{
			AgentID: r.agent.ID, FromNumber: c.FromNumber, ToNumber: c.ToNumber, DialedAgentID: dialed,
		})
	}
	ch := call.Change{To: model.CallRinging}
	if pre.Status != "" && pre.Status != model.WebhookSkipped {
		ch.PreCall = pre
	}
	if !progress(ch) {
		_ = in.Reject(480, "Temporarily Unavailable")
		return nil, ctx.Err()
	}
	select {
	case <-in.Context().Done():
		return nil, hungUp
	case <-ctx.Done():
		_ = in.Reject(503, "Service Unavailable")
		return nil, ctx.Err()
	default:
	}
	_ = in.Ringing()
	leg, err := in.Answer()
	if err != nil {
		if in.Context().Err() != nil {
			return nil, hungUp
		}
		return nil, &call.DialError{Cause: call.CauseSIPError, Message: "answer failed: " + err.Error()}
	}
	// Transfers leave through the agent's trunk (or the default one).
	tr, err := p.trunk(ctx, c.OrgID, r.agent.SIPTrunkID)
	if err != nil {
		tr = Trunk{}
	}
	l, err := p.answered(ctx, c.OrgID, c.ID, c.AgentID, leg, tr)
	if err != nil {
		return nil, err
	}
	l.loopback = in.Header(loopbackHeader) != ""
	return l, nil
}
