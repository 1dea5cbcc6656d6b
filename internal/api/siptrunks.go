package api

import (
	"github.com/parley-voice/parley/internal/model"
)

// sipTrunkJSON never carries passwords, only whether one is set.
type sipTrunkJSON struct {
	ID                  string    `json:"id"`
	FriendlyName        string    `json:"friendlyName"`
	Host                *string   `json:"host"`
	Port                *int      `json:"port"`
	Transport           string    `json:"transport"`
	Username            *string   `json:"username"`
	PasswordSet         bool      `json:"passwordSet"`
	InboundUsername     *string   `json:"inboundUsername"`
	InboundPasswordSet  bool      `json:"inboundPasswordSet"`
	InboundAllowedCIDRs []string  `json:"inboundAllowedCidrs"`
	CreatedAt           timestamp `json:"createdAt"`
	UpdatedAt           timestamp `json:"updatedAt"`
}

func presentSIPTrunk(t model.SIPTrunk) sipTrunkJSON {
	return sipTrunkJSON{
		ID: t.ID, FriendlyName: t.FriendlyName, Host: t.Host, Port: t.Port, Transport: t.Transport,
		Username: t.Username, PasswordSet: len(t.Password) > 0, InboundUsername: t.InboundUsername,
		InboundPasswordSet: len(t.InboundPassword) > 0, InboundAllowedCIDRs: nonNil(t.InboundAllowedCIDRs),
		CreatedAt: ts(t.CreatedAt), UpdatedAt: ts(t.UpdatedAt),
	}
}
