package sipua

import (
	"context"
	"errors"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
)

// Incoming is an inbound INVITE waiting for an answer.
type Incoming struct {
	ua   *UA
	d    *diago.DialogServerSession
	slot *slot
	// User is the Request-URI user: the dialed number, agent-<uuid>, or
	// the contact user of a registration of ours.
	User string
	// ToUser is the To header's user (on a call to a registered contact,
	// often the number the caller dialed).
	ToUser string
	// FromUser and FromDisplay are the caller, from the From header.
	FromUser, FromDisplay string
	// Source is the address the INVITE came from.
	Source netip.Addr
	// Transport is UDP or TCP.
	Transport string

	// mu orders the handler's answer (maybe on another goroutine) with the
	// end of serveInvite.
	mu       sync.Mutex
	answered bool
	refused  bool
	over     bool // serveInvite is done: too late to answer
	leg      *Leg // once answered
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
	in.mu.Lock()
	in.refused = true
	in.mu.Unlock()
	return in.d.Respond(code, reason, nil)
}

// RejectRetryAfter answers the INVITE with a final error response (a 503:
// the server cannot take the call now) that tells when to try again, in
// whole seconds (at least 1; RFC 3261 section 20.33).
func (in *Incoming) RejectRetryAfter(code int, reason string, after time.Duration) error {
	in.mu.Lock()
	in.refused = true
	in.mu.Unlock()
	secs := max(1, int(math.Ceil(after.Seconds())))
	return in.d.Respond(code, reason, nil, sip.NewHeader("Retry-After", strconv.Itoa(secs)))
}

// Authorize checks the INVITE's digest credentials against user and
// password; when they are missing or wrong it sends the 407 challenge and
// returns false (the caller retries with a new INVITE).
func (in *Incoming) Authorize(user, password string) bool {
	err := in.ua.auth.AuthorizeDialog(in.d, diago.DigestAuth{Username: user, Password: password, Realm: "parley"})
	if err != nil {
		in.mu.Lock()
		in.refused = true
		in.mu.Unlock()
		return false
	}
	return true
}

// Answer answers the call (200 with SDP, waiting for the ACK) and returns
// the leg.
func (in *Incoming) Answer() (*Leg, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.over {
		return nil, errors.New("sipua: the INVITE is over; too late to answer")
	}
	// RTPNAT: the SDP diago answers with; the leg learns the far end's
	// RTP source itself (udpSink).
	var leg atomic.Pointer[Leg]
	opts := diago.AnswerOptions{RTPNAT: 1, OnMediaUpdate: func(m *diago.DialogMedia) {
		if l := leg.Load(); l != nil {
			l.mediaUpdated(m.MediaSession())
		}
	}}
	if err := in.d.AnswerOptions(opts); err != nil {
		return nil, err
	}
	in.answered = true
	l, err := newLeg(in.ua, in.d, in.slot, true)
	if err != nil {
		// Answered but no leg: nobody will hang this dialog up but us.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = in.d.Hangup(ctx)
		return nil, err
	}
	in.leg = l
	leg.Store(l)
	l.start()
	return l, nil
}

// Context is done when the INVITE is canceled or the dialog ends.
func (in *Incoming) Context() context.Context { return in.d.Context() }

func (u *UA) serveInvite(ctx context.Context, d *diago.DialogServerSession, h Handler) {
	s := u.takeSlot()
	if s == nil {
		_ = d.Respond(503, "Service Unavailable", nil)
		return
	}
	// The leg frees the slot when it ends; this covers every call that
	// never became a leg (refused, canceled, failed to answer).
	defer s.free()
	in := &Incoming{ua: u, d: d, slot: s, User: requestUser(d.InviteRequest), Transport: d.Transport()}
	if f := d.InviteRequest.From(); f != nil {
		in.FromUser, in.FromDisplay = f.Address.User, f.DisplayName
	}
	if t := d.InviteRequest.To(); t != nil {
		in.ToUser = strings.TrimSpace(t.Address.User)
	}
	if ap, err := netip.ParseAddrPort(d.InviteRequest.Source()); err == nil {
		in.Source = ap.Addr().Unmap()
	}
	_ = d.Trying()
	h(ctx, in)
	in.mu.Lock()
	in.over = true
	answered, refused, leg := in.answered, in.refused, in.leg
	in.mu.Unlock()
	if !answered && !refused {
		_ = d.Respond(480, "Temporarily Unavailable", nil)
	}
	// The handler is done with the call: make sure it is over.
	if leg != nil {
		_ = leg.Hangup(context.Background())
	}
}

func requestUser(r *sip.Request) string {
	return strings.TrimSpace(r.Recipient.User)
}
