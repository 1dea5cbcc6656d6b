package telephony

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
)

// DialogState implements call.Recoverable: the leg's SIP dialog, as JSON.
// Loopback legs have none worth saving: both ends lived in this process;
// nor have web calls, whose peer connection dies with the process.
func (l *line) DialogState() []byte {
	if l.loopback || l.sip == nil {
		return nil
	}
	b, err := json.Marshal(l.sip.Dialog())
	if err != nil {
		l.p.log().Error("dialog state not encoded", "err", err)
		return nil
	}
	return b
}

// HangUpLost implements call.LostLegs: BYE on the leg of call c, which the
// server that ran it lost, from the state its line saved. An outbound
// call's BYE answers a digest challenge with its trunk's credentials.
func (p *Phone) HangUpLost(ctx context.Context, c model.Call, state []byte) error {
	var st sipua.DialogState
	if err := json.Unmarshal(state, &st); err != nil {
		return fmt.Errorf("dialog state of call %s: %w", c.ID, err)
	}
	var auth *sipua.Credentials
	if c.Direction == model.Outbound {
		if t, err := p.trunk(ctx, c.OrgID, c.SIPTrunkID); err == nil && t.Username != "" {
			auth = &sipua.Credentials{Username: t.Username, Password: t.Password}
		}
	}
	return p.UA.EndDialog(ctx, st, auth)
}

var (
	_ call.Recoverable = (*line)(nil)
	_ call.LostLegs    = (*Phone)(nil)
)
