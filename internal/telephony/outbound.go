package telephony

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Dial implements call.Dialer: the call goes out through the agent's trunk
// (or the default trunk), or the loopback trunk when req.Loopback says so,
// and once answered runs until it ends. ringing gets the INVITE as sent,
// which cancels it (HangUpLost).
func (p *Phone) Dial(ctx context.Context, req call.DialRequest, ringing func([]byte)) (call.Line, error) {
	trunk := Trunk{Transport: model.TransportLoopback}
	if !req.Loopback {
		var err error
		if trunk, err = p.trunk(ctx, req.OrgID, req.SIPTrunkID); err != nil {
			return nil, err
		}
	}
	t, err := p.target(trunk, req.OrgID, req.CallID, req.ToNumber)
	if err != nil {
		return nil, &call.DialError{Cause: call.CauseDialFailed, Message: err.Error()}
	}
	t.FromUser, t.FromDisplay = req.FromNumber, req.CallerIDName
	loopback := trunk.Transport == model.TransportLoopback
	if !loopback {
		if err := p.awaitInviteSlot(ctx, trunk); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	}
	leg, err := p.UA.Dial(ctx, t, func(st sipua.InviteState) {
		if ringing != nil {
			ringing(p.ringingState(loopback, st))
		}
	})
	if err != nil {
		return nil, dialError(ctx, err)
	}
	l, err := p.answered(ctx, req.OrgID, req.CallID, req.AgentID, leg, trunk)
	if err != nil {
		return nil, err
	}
	l.loopback = loopback
	return l, nil
}

// trunk resolves the trunk a call goes out on.
func (p *Phone) trunk(ctx context.Context, orgID string, id *string) (Trunk, error) {
	if id == nil {
		if p.DefaultTrunk == nil {
			return Trunk{}, &call.DialError{Cause: call.CauseDialFailed,
				Message: "the agent has no SIP trunk and no default trunk is configured (--sip-trunk-host)"}
		}
		return *p.DefaultTrunk, nil
	}
	t, err := store.Read(ctx, p.Store, func(tx store.Tx) (model.SIPTrunk, error) { return tx.GetSIPTrunk(ctx, orgID, *id) })
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Trunk{}, &call.DialError{Cause: call.CauseDialFailed, Message: "the agent's SIP trunk was deleted"}
	case err != nil:
		return Trunk{}, err
	}
	out := Trunk{ID: &t.ID, Transport: t.Transport, CallsPerSecond: t.CallsPerSecond}
	if t.Host != nil {
		out.Host = *t.Host
	}
	if t.Port != nil {
		out.Port = *t.Port
	}
	if t.Username != nil {
		out.Username = *t.Username
	}
	if out.Password, err = p.Box.Open(t.Password); err != nil {
		return Trunk{}, fmt.Errorf("open trunk %s password: %w", t.ID, err)
	}
	return out, nil
}

// target is the SIP destination of number through trunk, for call callID
// of organization orgID.
func (p *Phone) target(tr Trunk, orgID, callID, number string) (sipua.Target, error) {
	t := sipua.Target{User: number, RingTimeout: p.RingTimeout}
	switch tr.Transport {
	case model.TransportLoopback:
		host, port, err := net.SplitHostPort(p.UA.Addr())
		if err != nil {
			return t, err
		}
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		t.Host, t.Transport = host, "udp"
		t.Port, _ = strconv.Atoi(port)
		t.Headers = map[string]string{loopbackHeader: p.loopbackToken(orgID)}
		if callID != "" {
			t.Headers[loopbackCallerHeader] = p.loopbackCallerToken(orgID, callID)
		}
		return t, nil
	case model.TransportTLS:
		if !p.UA.TLS() {
			return t, errors.New("the trunk uses TLS but SIP over TLS is off on this server (set --sip-tls-addr)")
		}
	}
	if tr.Host == "" {
		return t, errors.New("the SIP trunk has no host")
	}
	t.Host, t.Port, t.Transport = tr.Host, tr.Port, tr.Transport
	t.Username, t.Password = tr.Username, tr.Password
	return t, nil
}

// dialError turns a failed INVITE into the call's end.
func dialError(ctx context.Context, err error) error {
	var rej *sipua.Rejected
	switch {
	case errors.As(err, &rej):
		msg := rej.Error()
		switch rej.Code {
		case 486, 600:
			return &call.DialError{Cause: call.CauseBusy, Message: msg}
		case 408, 480:
			return &call.DialError{Cause: call.CauseNoAnswer, Message: msg}
		}
		return &call.DialError{Cause: call.CauseSIPError, Message: msg}
	case errors.Is(err, sipua.ErrNoAnswer):
		return &call.DialError{Cause: call.CauseNoAnswer, Message: "no answer within the ring timeout"}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return &call.DialError{Cause: call.CauseDialFailed, Message: err.Error()}
}
