package call

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
)

// Recoverable is a Line whose far end another server can hang up once this
// one is gone. The call plane stores its DialogState with the live call
// (model.CallDialog) when it is answered, replacing the state the Dialer
// gave with ringing, and whichever server ends the call lost gives the
// saved state back to its Dialer's HangUpLost.
type Recoverable interface {
	// DialogState is the leg's dialog, encoded by the Dialer that alone
	// reads it; nil when there is nothing to hang up.
	DialogState() []byte
}

// LostLegs is a Dialer that can end the far end of a call whose server was
// lost, from the state saved with it: the state its Dial gave with ringing
// (a call still RINGING: the Dialer cancels the call) or its Line's
// DialogState (IN_PROGRESS: it hangs up). An error (no answer, the far end
// no longer knows the call) is reported, not retried: the call ends anyway.
type LostLegs interface {
	HangUpLost(ctx context.Context, c model.Call, state []byte) error
}
