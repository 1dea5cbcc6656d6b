package api

import (
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/siptrunk"
)

// sipTrunkJSON never carries passwords, only whether one is set.
type sipTrunkJSON struct {
	ID                  string            `json:"id"`
	FriendlyName        string            `json:"friendlyName"`
	Host                *string           `json:"host"`
	Port                *int              `json:"port"`
	Transport           string            `json:"transport"`
	Username            *string           `json:"username"`
	PasswordSet         bool              `json:"passwordSet"`
	InboundUsername     *string           `json:"inboundUsername"`
	InboundPasswordSet  bool              `json:"inboundPasswordSet"`
	InboundAllowedCIDRs []string          `json:"inboundAllowedCidrs"`
	CallsPerSecond      *float64          `json:"callsPerSecond"`
	Registration        *registrationJSON `json:"registration"`
	CreatedAt           timestamp         `json:"createdAt"`
	UpdatedAt           timestamp         `json:"updatedAt"`
}

// registrationJSON is a trunk's registration: its settings as given (null
// registrar, transport and username use the trunk's) and where it stands.
type registrationJSON struct {
	Registrar      *string    `json:"registrar"`
	Transport      *string    `json:"transport"`
	Username       *string    `json:"username"`
	PasswordSet    bool       `json:"passwordSet"`
	ExpiresSeconds int        `json:"expiresSeconds"`
	ContactUser    string     `json:"contactUser"`
	Enabled        bool       `json:"enabled"`
	State          string     `json:"state"`
	ExpiresAt      *timestamp `json:"expiresAt"`
	LastError      *string    `json:"lastError"`
}

func presentSIPTrunk(t model.SIPTrunk) sipTrunkJSON {
	return sipTrunkJSON{
		ID: t.ID, FriendlyName: t.FriendlyName, Host: t.Host, Port: t.Port, Transport: t.Transport,
		Username: t.Username, PasswordSet: len(t.Password) > 0, InboundUsername: t.InboundUsername,
		InboundPasswordSet: len(t.InboundPassword) > 0, InboundAllowedCIDRs: nonNil(t.InboundAllowedCIDRs),
		CallsPerSecond: t.CallsPerSecond,
		Registration:   presentRegistration(t.Registration, t.RegistrationStatus, time.Now()),
		CreatedAt:      ts(t.CreatedAt), UpdatedAt: ts(t.UpdatedAt),
	}
}

// presentRegistration shows the settings and their live status
// (siptrunk.LiveStatus).
func presentRegistration(r *model.TrunkRegistration, st model.RegistrationStatus, now time.Time) *registrationJSON {
	if r == nil {
		return nil
	}
	st = siptrunk.LiveStatus(r, st, now)
	out := &registrationJSON{
		Registrar: r.Registrar, Transport: r.Transport, Username: r.Username, PasswordSet: len(r.Password) > 0,
		ExpiresSeconds: r.ExpiresSeconds, ContactUser: r.ContactUser, Enabled: r.Enabled,
		State: st.State, LastError: st.LastError,
	}
	if st.ExpiresAt != nil {
		e := ts(*st.ExpiresAt)
		out.ExpiresAt = &e
	}
	return out
}
