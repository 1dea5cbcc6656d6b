package sipua

import (
	"context"
	"net/netip"
	"strings"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
)

// Incoming is an inbound INVITE waiting for an answer.
type Incoming struct {
	ua *UA
	d  *diago.DialogServerSession
	// User is the Request-URI user: the dialed number or agent-<uuid>.
	User string
	// FromUser and FromDisplay are the caller, from the From header.
	FromUser, FromDisplay string
	// Source is the address the INVITE came from.
	Source netip.Addr
	// Transport is UDP or TCP.
	Transport string
	answered  bool
	refused   bool
}

// Header returns the value of the INVITE's header name ("" when absent).
func (in *Incoming) Header(name string) string {
	if h := in.d.InviteRequest.GetHeader(name); h != nil {
		return h.Value()
	}
	return ""
}

// Ringing sends 180 Ringing.
func (in *Incoming) Ringing() error { return in.d.Ringing() }

// Reject answers the INVITE with a final error response.
func (in *Incoming) Reject(code int, reason string) error {
	in.refused = true
	return in.d.Respond(code, reason, nil)
}

// Authorize checks the INVITE's digest credentials against user and
// password; when they are missing or wrong it sends the 407 challenge and
// returns false (the caller retries with a new INVITE).
func (in *Incoming) Authorize(user, password string) bool {
	err := in.ua.auth.AuthorizeDialog(in.d, diago.DigestAuth{Username: user, Password: password, Realm: "parley"})
	if err != nil {
		in.refused = true
		return false
	}
	return true
}

// Answer answers the call (200 with SDP, waiting for the ACK) and returns
// the leg.
func (in *Incoming) Answer() (*Leg, error) {
	if err := in.d.AnswerOptions(diago.AnswerOptions{RTPNAT: 1}); err != nil {
		return nil, err
	}
	in.answered = true
	l, err := newLeg(in.ua, in.d, in.d.InviteRequest.CallID().Value())
	if err != nil {
		return nil, err
	}
	in.ua.register(l)
	l.start()
	return l, nil
}

// Context is done when the INVITE is canceled or the dialog ends.
func (in *Incoming) Context() context.Context { return in.d.Context() }

func (u *UA) serveInvite(ctx context.Context, d *diago.DialogServerSession, h Handler) {
	if !u.acquire() {
		_ = d.Respond(503, "Service Unavailable", nil)
		return
	}
	in := &Incoming{ua: u, d: d, User: requestUser(d.InviteRequest), Transport: d.Transport()}
	if f := d.InviteRequest.From(); f != nil {
		in.FromUser, in.FromDisplay = f.Address.User, f.DisplayName
	}
	if ap, err := netip.ParseAddrPort(d.InviteRequest.Source()); err == nil {
		in.Source = ap.Addr().Unmap()
	}
	_ = d.Trying()
	h(ctx, in)
	if !in.answered {
		if !in.refused {
			_ = d.Respond(480, "Temporarily Unavailable", nil)
		}
		u.active.Add(-1)
		return
	}
	// The handler is done with an answered leg: make sure it is over.
	if v, ok := u.legs.Load(d.InviteRequest.CallID().Value()); ok {
		_ = v.(*Leg).Hangup(context.Background())
	}
}

func requestUser(r *sip.Request) string {
	return strings.TrimSpace(r.Recipient.User)
}
