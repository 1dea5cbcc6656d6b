package telephony

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
)

// savedLeg is a leg's state as the call plane keeps it (call_dialogs): the
// INVITE of a leg still ringing, saved with RINGING, or the dialog of an
// answered one, saved with IN_PROGRESS in its place. States saved before
// ringing legs were are a bare sipua.DialogState, with no kind.
type savedLeg struct {
	Kind   string             `json:"kind"`
	Invite *sipua.InviteState `json:"invite,omitempty"`
	Dialog *sipua.DialogState `json:"dialog,omitempty"`
}

const (
	legRinging  = "ringing"
	legAnswered = "answered"
)

// decodeLeg reads a saved leg: exactly one of a ringing INVITE or an
// answered dialog.
func decodeLeg(state []byte) (savedLeg, error) {
	var s savedLeg
	if err := json.Unmarshal(state, &s); err != nil {
		return s, err
	}
	switch s.Kind {
	case "": // saved before ringing legs were: a bare dialog
		var d sipua.DialogState
		if err := json.Unmarshal(state, &d); err != nil {
			return s, err
		}
		return savedLeg{Kind: legAnswered, Dialog: &d}, nil
	case legRinging:
		if s.Invite == nil || s.Dialog != nil {
			return s, errors.New("a ringing leg saves its INVITE alone")
		}
	case legAnswered:
		if s.Dialog == nil || s.Invite != nil {
			return s, errors.New("an answered leg saves its dialog alone")
		}
	default:
		return s, fmt.Errorf("unknown kind of leg %q", s.Kind)
	}
	return s, nil
}

// ringingState is what cancels an outbound leg still ringing, for the
// ringing callback of call.Dialer.Dial; nil for a loopback leg, whose
// far end lived in this process too.
func (p *Phone) ringingState(loopback bool, st sipua.InviteState) []byte {
	if loopback {
		return nil
	}
	b, err := json.Marshal(savedLeg{Kind: legRinging, Invite: &st})
	if err != nil {
		p.log().Error("ringing leg not encoded", "err", err)
		return nil
	}
	return b
}

// DialogState implements call.Recoverable: the leg's SIP dialog, as JSON.
// Loopback legs have none worth saving: both ends lived in this process;
// nor have web calls, whose peer connection dies with the process.
func (l *line) DialogState() []byte {
	if l.loopback || l.sip == nil {
		return nil
	}
	d := l.sip.Dialog()
	b, err := json.Marshal(savedLeg{Kind: legAnswered, Dialog: &d})
	if err != nil {
		l.p.log().Error("dialog state not encoded", "err", err)
		return nil
	}
	return b
}

// HangUpLost implements call.LostLegs: CANCEL on the ringing leg of call
// c, BYE on its answered leg, which the server that ran it lost, from the
// state it saved. An outbound call's BYE answers a digest challenge with
// its trunk's credentials (a CANCEL cannot be challenged: RFC 3261 22.1).
func (p *Phone) HangUpLost(ctx context.Context, c model.Call, state []byte) error {
	leg, err := decodeLeg(state)
	if err != nil {
		return fmt.Errorf("saved leg of call %s: %w", c.ID, err)
	}
	var auth *sipua.Credentials
	if c.Direction == model.Outbound {
		if t, err := p.trunk(ctx, c.OrgID, c.SIPTrunkID); err == nil && t.Username != "" {
			auth = &sipua.Credentials{Username: t.Username, Password: t.Password}
		}
	}
	if leg.Kind == legRinging {
		return p.UA.CancelInvite(ctx, *leg.Invite, auth)
	}
	return p.UA.EndDialog(ctx, *leg.Dialog, auth)
}

var (
	_ call.Recoverable = (*line)(nil)
	_ call.LostLegs    = (*Phone)(nil)
)
