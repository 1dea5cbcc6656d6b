// Package siptrunk owns SIP trunks: where an agent's calls go out and come
// in, with credentials that are write-only and sealed at rest, and the
// settings of its outbound registration (registration.go). Deleting a
// trunk unassigns it from agents and phone numbers.
package siptrunk

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
)

// Limits.
const (
	MaxNameLen       = 128
	MaxCredentialLen = 256
	MaxAllowedCIDRs  = 100
	// MaxCallsPerSecond bounds a trunk's callsPerSecond.
	MaxCallsPerSecond = 10000
)

var (
	transports = []string{model.TransportUDP, model.TransportTCP, model.TransportTLS, model.TransportLoopback}
	hostname   = regexp.MustCompile(`^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$`)
)

// Input is a trunk create or partial-update request.
type Input struct {
	FriendlyName        opt.Field[string]   `json:"friendlyName"`
	Host                opt.Field[string]   `json:"host"`
	Port                opt.Field[int]      `json:"port"`
	Transport           opt.Field[string]   `json:"transport"`
	Username            opt.Field[string]   `json:"username"`
	Password            opt.Field[string]   `json:"password"`
	InboundUsername     opt.Field[string]   `json:"inboundUsername"`
	InboundPassword     opt.Field[string]   `json:"inboundPassword"`
	InboundAllowedCIDRs opt.Field[[]string] `json:"inboundAllowedCidrs"`
	// CallsPerSecond limits the INVITEs the trunk sends, across servers
	// (null: the server's --sip-trunk-cps; 0: unlimited).
	CallsPerSecond opt.Field[float64] `json:"callsPerSecond"`
	// Registration is optional outbound registration (registration.go);
	// null removes it.
	Registration opt.Field[RegistrationInput] `json:"registration"`
}

// Service persists trunks.
type Service struct {
	Store store.Store
	Box   *secret.Box
}

func (in *Input) check(creating bool, l *invalid.List) {
	for name, f := range map[string][2]bool{
		"friendlyName": {in.FriendlyName.Set, in.FriendlyName.Null},
		"transport":    {in.Transport.Set, in.Transport.Null},
	} {
		if f[0] && f[1] {
			l.Add(name, "must not be null")
		}
	}
	if creating && !in.FriendlyName.Set {
		l.Add("friendlyName", "is required")
	}
	if in.FriendlyName.Present() {
		if invalid.IsBlank(in.FriendlyName.V) {
			l.Add("friendlyName", "must not be empty")
		} else if invalid.Len(in.FriendlyName.V) > MaxNameLen {
			l.Add("friendlyName", "must be at most %d characters", MaxNameLen)
		}
	}
	if in.Transport.Present() && !slices.Contains(transports, in.Transport.V) {
		l.Add("transport", "must be one of udp, tcp, tls, loopback")
	}
	if in.Host.Present() && !validHost(in.Host.V) {
		l.Add("host", "must be a host name or IP address, without scheme or port")
	}
	if in.Port.Present() && (in.Port.V < 1 || in.Port.V > 65535) {
		l.Add("port", "must be between 1 and 65535")
	}
	for name, f := range map[string]opt.Field[string]{
		"username": in.Username, "password": in.Password,
		"inboundUsername": in.InboundUsername, "inboundPassword": in.InboundPassword,
	} {
		if f.Present() && invalid.Len(f.V) > MaxCredentialLen {
			l.Add(name, "must be at most %d characters", MaxCredentialLen)
		}
	}
	if in.InboundAllowedCIDRs.Present() {
		if len(in.InboundAllowedCIDRs.V) > MaxAllowedCIDRs {
			l.Add("inboundAllowedCidrs", "must have at most %d elements", MaxAllowedCIDRs)
		}
		for i, c := range in.InboundAllowedCIDRs.V {
			if !validCIDR(c) {
				l.Add(invalid.Index("inboundAllowedCidrs", i), "must be an IP address or CIDR such as 203.0.113.0/24")
			}
		}
	}
	if in.CallsPerSecond.Present() && !(in.CallsPerSecond.V >= 0 && in.CallsPerSecond.V <= MaxCallsPerSecond) {
		l.Add("callsPerSecond", "must be between 0 and %d", MaxCallsPerSecond)
	}
	if in.Registration.Present() {
		in.Registration.V.check(l)
	}
}

func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	return hostname.MatchString(h)
}

func validCIDR(c string) bool {
	if _, err := netip.ParsePrefix(c); err == nil {
		return true
	}
	_, err := netip.ParseAddr(c)
	return err == nil
}

func (s *Service) apply(t *model.SIPTrunk, in *Input) {
	if in.FriendlyName.Present() {
		t.FriendlyName = in.FriendlyName.V
	}
	if in.Host.Set {
		t.Host = in.Host.Ptr()
	}
	if in.Port.Set {
		t.Port = in.Port.Ptr()
	}
	if in.Transport.Present() {
		t.Transport = in.Transport.V
	}
	if in.Username.Set {
		t.Username = in.Username.Ptr()
	}
	if in.Password.Set {
		t.Password = s.Box.Seal(in.Password.V) // null and "" both clear
	}
	if in.InboundUsername.Set {
		t.InboundUsername = in.InboundUsername.Ptr()
	}
	if in.InboundPassword.Set {
		t.InboundPassword = s.Box.Seal(in.InboundPassword.V)
	}
	if in.InboundAllowedCIDRs.Set {
		t.InboundAllowedCIDRs = in.InboundAllowedCIDRs.V
	}
	if in.CallsPerSecond.Set {
		t.CallsPerSecond = in.CallsPerSecond.Ptr() // null: the server's default
	}
	s.applyRegistration(t, in)
}

// checkResult enforces the rules that span fields, on the trunk as it would
// be stored: a network trunk needs a host; a loopback trunk has none.
func checkResult(t *model.SIPTrunk, l *invalid.List) {
	if t.Transport != model.TransportLoopback && t.Host == nil && !l.Has("host") {
		l.Add("host", "is required unless transport is loopback")
	}
	if t.Transport == model.TransportLoopback && (t.Host != nil || t.Port != nil) && !l.Has("host") {
		l.Add("host", "must not be set on a loopback trunk")
	}
	checkRegistration(t, l)
}

// Create stores a new trunk.
func (s *Service) Create(ctx context.Context, orgID string, in Input) (model.SIPTrunk, error) {
	var l invalid.List
	in.check(true, &l)
	now := model.Now()
	t := model.SIPTrunk{ID: model.NewID(), OrgID: orgID, Transport: model.TransportUDP, InboundAllowedCIDRs: []string{}, CreatedAt: now, UpdatedAt: now}
	s.apply(&t, &in)
	checkResult(&t, &l)
	if err := l.Err(); err != nil {
		return model.SIPTrunk{}, err
	}
	err := s.Store.Update(ctx, func(tx store.Tx) error { return tx.CreateSIPTrunk(ctx, &t) })
	return t, contactConflict(&t, err)
}

// Get returns one trunk.
func (s *Service) Get(ctx context.Context, orgID, id string) (model.SIPTrunk, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.SIPTrunk, error) { return tx.GetSIPTrunk(ctx, orgID, id) })
}

// List returns a page of trunks and their total count.
func (s *Service) List(ctx context.Context, orgID string, p store.Page) ([]model.SIPTrunk, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.SIPTrunk, int, error) { return tx.ListSIPTrunks(ctx, orgID, p) })
}

// Update applies a partial update.
func (s *Service) Update(ctx context.Context, orgID, id string, in Input) (model.SIPTrunk, error) {
	var l invalid.List
	in.check(false, &l)
	if err := l.Err(); err != nil {
		return model.SIPTrunk{}, err
	}
	var t model.SIPTrunk
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if t, err = tx.GetSIPTrunk(ctx, orgID, id); err != nil {
			return err
		}
		s.apply(&t, &in)
		checkResult(&t, &l)
		if err := l.Err(); err != nil {
			return err
		}
		t.UpdatedAt = model.Now()
		return tx.UpdateSIPTrunk(ctx, &t)
	})
	return t, contactConflict(&t, err)
}

// contactConflict names the one unique setting a trunk has: inbound calls
// to a contact user go to the one trunk that registers it.
func contactConflict(t *model.SIPTrunk, err error) error {
	if errors.Is(err, store.ErrConflict) && t.Registration != nil {
		return &invalid.Conflict{Message: fmt.Sprintf(
			"another trunk registers contact user %q; set registration.contactUser to one of its own", t.Registration.ContactUser)}
	}
	return err
}

// Delete removes a trunk; agents and numbers using it become unassigned.
func (s *Service) Delete(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteSIPTrunk(ctx, orgID, id) })
}
