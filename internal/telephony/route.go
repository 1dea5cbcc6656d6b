package telephony

import (
	"context"
	"errors"
	"net/netip"
	"strings"

	"github.com/google/uuid"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// route is where an inbound INVITE goes.
type route struct {
	agent         model.Agent
	number        *model.PhoneNumber // nil for agent-<uuid>
	trunk         *model.SIPTrunk    // the number's trunk, if any
	dialedAgentID *string
	to            string // the dialed number as recorded
}

// refusal is an INVITE we answer with an error; record says whether a
// FAILED call record is kept (an agent was found).
type refusal struct {
	code   int
	reason string
	cause  string
	msg    string
	record bool
}

func (r *refusal) Error() string { return r.msg }

// dialedUser parses a Request-URI user: "agent-<uuid>", or a number with an
// optional leading + (visual separators and URI parameters dropped).
func dialedUser(user string) (agentID, e164 string, ok bool) {
	user, _, _ = strings.Cut(user, ";")
	if id, found := strings.CutPrefix(strings.ToLower(user), "agent-"); found {
		u, err := uuid.Parse(id)
		if err != nil || len(id) != 36 {
			return "", "", false
		}
		return u.String(), "", true
	}
	n := normalizeNumber(user)
	if n == "" {
		return "", "", false
	}
	return "", n, true
}

// normalizeNumber returns "+<digits>" for a phone number written with or
// without + and with - . ( ) or spaces; "" when it is not one.
func normalizeNumber(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "+")
	var b strings.Builder
	b.WriteByte('+')
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '-' || r == '.' || r == '(' || r == ')' || r == ' ':
		default:
			return ""
		}
	}
	if n := b.Len() - 1; n < 3 || n > 15 {
		return ""
	}
	return b.String()
}

// callerNumber is the caller as recorded: E.164 when the From user is a
// number, else the user as given (storable), "anonymous" when empty.
func callerNumber(user string) string {
	if n := normalizeNumber(user); n != "" {
		return n
	}
	if user == "" {
		return "anonymous"
	}
	return invalid.Storable(user)
}

// resolve finds the agent an INVITE is for: the Request-URI user is the
// contact user of a trunk's registration (registered.go), agent-<uuid>, or
// a number. toUser is the To header's user. orgID scopes it (loopback
// calls); "" means any organization.
func (p *Phone) resolve(ctx context.Context, user, toUser, orgID string) (route, error) {
	var r route
	if orgID == "" {
		found, err := p.resolveRegistered(ctx, user, toUser, &r)
		if found || err != nil {
			return p.active(r, err)
		}
	}
	agentID, e164, ok := dialedUser(user)
	if !ok {
		return route{}, &refusal{code: 404, reason: "Not Found", msg: "no such number"}
	}
	err := p.Store.View(ctx, func(tx store.Tx) error {
		if agentID != "" {
			a, err := tx.GetAgentByID(ctx, agentID)
			if errors.Is(err, store.ErrNotFound) || (err == nil && orgID != "" && a.OrgID != orgID) {
				return &refusal{code: 404, reason: "Not Found", msg: "no such agent"}
			}
			if err != nil {
				return err
			}
			r.agent, r.dialedAgentID, r.to = a, &a.ID, invalid.Storable(user) // URI parameters may follow the id
			return nil
		}
		n, err := tx.GetPhoneNumberByE164(ctx, e164)
		if errors.Is(err, store.ErrNotFound) || (err == nil && orgID != "" && n.OrgID != orgID) {
			return &refusal{code: 404, reason: "Not Found", msg: "no such number"}
		}
		if err != nil {
			return err
		}
		return routeNumber(ctx, tx, n, &r)
	})
	return p.active(r, err)
}

// routeNumber fills r in for a call to number n: its trunk and its agent.
func routeNumber(ctx context.Context, tx store.Tx, n model.PhoneNumber, r *route) error {
	r.number, r.to = &n, n.E164
	if n.SIPTrunkID != nil && r.trunk == nil {
		t, err := tx.GetSIPTrunk(ctx, n.OrgID, *n.SIPTrunkID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err == nil {
			r.trunk = &t
		}
	}
	if n.AgentID == nil {
		return &refusal{code: 480, reason: "Temporarily Unavailable", msg: "the number is not assigned to an agent"}
	}
	var err error
	r.agent, err = tx.GetAgent(ctx, n.OrgID, *n.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return &refusal{code: 480, reason: "Temporarily Unavailable", msg: "the number's agent is gone"}
	}
	return err
}

// active refuses a call routed to a disabled agent.
func (p *Phone) active(r route, err error) (route, error) {
	if err != nil {
		return route{}, err
	}
	if r.agent.Status != model.AgentActive {
		return r, &refusal{code: 480, reason: "Temporarily Unavailable", cause: call.CauseAgentUnavailable,
			msg: "the agent is disabled", record: true}
	}
	return r, nil
}

// allowed checks an INVITE's source against the trunk's allow-list.
func allowed(t *model.SIPTrunk, src netip.Addr) bool {
	if t == nil || len(t.InboundAllowedCIDRs) == 0 {
		return true
	}
	for _, c := range t.InboundAllowedCIDRs {
		if p, err := netip.ParsePrefix(c); err == nil && p.Contains(src) {
			return true
		}
		if a, err := netip.ParseAddr(c); err == nil && a.Unmap() == src {
			return true
		}
	}
	return false
}
