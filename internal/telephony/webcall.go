package telephony

import (
	"context"
	"errors"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/media/webrtc"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// ErrNoWebCalls is WebCall's answer on a server that does not serve them
// (Phone.Web is nil).
var ErrNoWebCalls = errors.New("this server does not serve web calls")

// WebCall answers a browser's WebRTC offer as a test call to agent agentID
// of organization orgID, and returns the call as admitted and the SDP
// answer for the browser. The call is a normal inbound call (recorded,
// transcribed, its webhook delivered, counted against the concurrency
// limit) from call.WebCaller with the agent's testVariables. It is
// answered once the browser connects; it ends when either side hangs up
// (the browser closing its peer connection is USER_ENDED), or
// WEBRTC_ERROR when the browser never connects or its connection fails.
// At the limit it is refused with callqueue.ErrConcurrencyLimit and
// nothing is stored: the person asking is told at once.
func (p *Phone) WebCall(ctx context.Context, orgID, agentID, offerSDP string) (model.Call, string, error) {
	if p.Web == nil {
		return model.Call{}, "", ErrNoWebCalls
	}
	offer, err := webrtc.ParseOffer(offerSDP)
	if err != nil {
		return model.Call{}, "", invalid.One("sdp", "%s", err.Error())
	}
	a, err := store.Read(ctx, p.Store, func(tx store.Tx) (model.Agent, error) { return tx.GetAgent(ctx, orgID, agentID) })
	if err != nil {
		return model.Call{}, "", err
	}
	if a.Status != model.AgentActive {
		return model.Call{}, "", &invalid.Conflict{Message: "the agent is disabled: enable it to talk to it"}
	}
	peer, answer, err := p.Web.Answer(ctx, offer)
	if err != nil {
		if errors.Is(err, webrtc.ErrBadOffer) {
			return model.Call{}, "", invalid.One("sdp", "%s", err.Error())
		}
		return model.Call{}, "", err
	}
	c := call.NewWebCall(a)
	started := make(chan struct{})
	connect := func(wctx context.Context, progress func(call.Change) bool) (call.Line, error) {
		close(started)
		return p.connectWeb(wctx, c, peer, progress)
	}
	if err := p.Calls.Answer(ctx, &c, connect, false); err != nil {
		_ = peer.Hangup(context.WithoutCancel(ctx))
		return model.Call{}, "", err
	}
	// A worker that never runs the call (its agent deleted meanwhile)
	// must not leave the browser connected to nothing.
	go func() {
		t := time.NewTimer(connectWait)
		defer t.Stop()
		select {
		case <-started:
		case <-t.C:
			_ = peer.Hangup(context.Background())
		}
	}()
	return c, answer, nil
}

// connectWeb runs on the call's worker: it rings until the browser has
// connected, then answers.
func (p *Phone) connectWeb(ctx context.Context, c model.Call, peer *webrtc.Peer, progress func(call.Change) bool) (call.Line, error) {
	if !progress(call.Change{To: model.CallRinging}) {
		_ = peer.Hangup(context.WithoutCancel(ctx))
		return nil, ctx.Err()
	}
	select {
	case <-peer.Connected():
	case <-peer.Done():
		return nil, &call.DialError{Cause: call.CauseWebRTCError, Message: peer.End().Reason}
	case <-ctx.Done():
		_ = peer.Hangup(context.WithoutCancel(ctx))
		return nil, ctx.Err()
	}
	l := &line{p: p, leg: peer, ended: make(chan struct{}), failCause: call.CauseWebRTCError}
	return p.run(ctx, l, c.OrgID, c.ID, c.AgentID)
}
