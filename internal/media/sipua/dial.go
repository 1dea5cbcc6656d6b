package sipua

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
	"github.com/google/uuid"
)

// Target is where and how to place an outbound call.
type Target struct {
	Host      string
	Port      int    // 0: 5060
	Transport string // udp (default) or tcp
	// User is the Request-URI and To user: the dialed number.
	User string
	// FromUser and FromDisplay make the From header.
	FromUser, FromDisplay string
	// Username and Password answer a 401/407 digest challenge.
	Username, Password string
	// Headers are added to the INVITE (name -> value).
	Headers map[string]string
	// RingTimeout bounds the wait for an answer (0: 60 s).
	RingTimeout time.Duration
}

func (t Target) uri() sip.Uri {
	port := t.Port
	if port == 0 {
		port = 5060
	}
	u := sip.Uri{Scheme: "sip", User: t.User, Host: t.Host, Port: port}
	if strings.EqualFold(t.Transport, "tls") {
		if t.Port == 0 {
			u.Port = 5061
		}
		u.UriParams = sip.NewParams()
		u.UriParams.Add("transport", "tls")
	}
	return u
}

// Dial places a call and returns the answered leg. ringing is called once
// on the first 180/183, with the INVITE as sent: what cancels it from
// another process (CancelInvite). Errors: *Rejected for a final non-2xx answer,
// ErrNoAnswer when the ring timeout passed, ctx's error when ctx ended
// first (a ringing call is canceled), anything else for transport trouble.
// It waits for Start.
func (u *UA) Dial(ctx context.Context, t Target, ringing func(InviteState)) (*Leg, error) {
	// Before Start, sipgo would bind the listener's port for the INVITE
	// itself, and Start would then find it taken (a restarted server whose
	// queued calls dialed at once failed to start so): wait for it.
	select {
	case <-u.started:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s := u.takeSlot()
	if s == nil {
		return nil, ErrTooManyDialogs
	}
	leg, err := u.dial(ctx, t, ringing, s)
	// Right after Start, sipgo may not yet reuse the listener's UDP socket
	// and tries to bind the same port for the INVITE: nothing was sent, so
	// trying again shortly is safe.
	for i := 0; err != nil && i < 5 && strings.Contains(err.Error(), "address already in use"); i++ {
		time.Sleep(20 * time.Millisecond)
		leg, err = u.dial(ctx, t, ringing, s)
	}
	if err != nil {
		s.free() // no leg took it
		return nil, err
	}
	return leg, nil
}

var errRingTimeout = errors.New("ring timeout")

func (u *UA) dial(ctx context.Context, t Target, ringing func(InviteState), s *slot) (*Leg, error) {
	transport := strings.ToLower(t.Transport)
	if transport == "" {
		transport = "udp"
	}
	switch {
	case transport == "tls" && !u.tls:
		return nil, errors.New("SIP over TLS is off on this server (set --sip-tls-addr)")
	case transport != "udp" && transport != "tcp" && transport != "tls":
		return nil, fmt.Errorf("transport %q is not supported (udp, tcp, tls)", t.Transport)
	}
	d, err := u.dg.NewDialog(t.uri(), diago.NewDialogOptions{Transport: transport})
	if err != nil {
		return nil, err
	}
	// The Call-ID is ours to know before the INVITE leaves: its answers,
	// even stray ones, are this dial's.
	callID := sip.CallIDHeader(uuid.NewString())
	d.InviteRequest.AppendHeader(&callID)
	u.strays.own(string(callID))
	defer u.strays.disown(string(callID))
	var once sync.Once
	var leg atomic.Pointer[Leg]
	opts := diago.InviteClientOptions{
		OnMediaUpdate: func(m *diago.DialogMedia) {
			if l := leg.Load(); l != nil {
				l.mediaUpdated(m.MediaSession()) // a re-INVITE moved the far end's RTP
			}
		},
		Username: t.Username,
		Password: t.Password,
		OnResponse: func(res *sip.Response) error {
			if res.StatusCode == 180 || res.StatusCode == 183 {
				once.Do(func() {
					if ringing != nil {
						// The INVITE now carries the Via and CSeq it went
						// out with (after a digest challenge, the second's).
						ringing(inviteState(d.InviteRequest))
					}
				})
			}
			return nil
		},
	}
	opts.WithCaller(t.FromDisplay, t.FromUser, u.host)
	uri := t.uri()
	opts.Headers = append(opts.Headers, sip.NewHeader("To", "<"+uri.String()+">"))
	for k, v := range t.Headers {
		opts.Headers = append(opts.Headers, sip.NewHeader(k, v))
	}
	rt := t.RingTimeout
	if rt <= 0 {
		rt = 60 * time.Second
	}
	ringCtx, cancel := context.WithTimeoutCause(ctx, rt, errRingTimeout)
	defer cancel()
	if err := d.Invite(ringCtx, opts); err != nil {
		_ = d.Close()
		if rej, ok := rejection(err); ok {
			return nil, rej
		}
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case context.Cause(ringCtx) == errRingTimeout:
			return nil, ErrNoAnswer
		}
		return nil, fmt.Errorf("invite %s: %w", uri.String(), err)
	}
	if err := d.Ack(ctx); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("ack: %w", err)
	}
	l, err := newLeg(u, d, s, false)
	if err != nil {
		_ = d.Hangup(context.Background())
		_ = d.Close()
		return nil, err
	}
	leg.Store(l)
	l.start()
	return l, nil
}
