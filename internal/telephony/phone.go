package telephony

import (
	"context"
	"log/slog"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/media/webrtc"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// Admitter admits and records inbound calls (callqueue.Queue).
type Admitter interface {
	Answer(ctx context.Context, c *model.Call, connect callqueue.Connect, recordRefusal bool) error
	Record(ctx context.Context, c *model.Call, ch call.Change) error
}

// PreCaller calls pre-call webhooks (webhook.Sender).
type PreCaller interface {
	PreCall(ctx context.Context, url, secret string, p webhook.PreCallPayload) (map[string]any, string)
}

// Trunk is a resolved way out: an API trunk with its password opened, or
// the operator's default.
type Trunk struct {
	ID                 *string
	Host               string
	Port               int
	Transport          string // udp, tcp, tls or loopback
	Username, Password string
	// CallsPerSecond is the trunk's own INVITE rate (nil: Phone.TrunkCPS).
	CallsPerSecond *float64
}

// Phone is Parley's telephone.
type Phone struct {
	UA         *sipua.UA
	Store      store.Store
	Box        *secret.Box
	Calls      Admitter
	PreCalls   PreCaller
	Secret     func(ctx context.Context, orgID string) (string, error)
	Recordings *recording.Store
	// DefaultTrunk serves agents without a trunk (nil: they cannot call).
	DefaultTrunk *Trunk
	// TrunkCPS is the INVITEs per second each trunk may send, shared by
	// every server on the database (pace.go); 0: unlimited.
	TrunkCPS float64
	// RingTimeout bounds ringing on outbound calls (default 60 s).
	RingTimeout time.Duration
	// Web answers browsers' WebRTC offers for web calls (nil: none).
	Web *webrtc.Endpoint
	// Conversation runs answered calls (default Hold).
	Conversation Conversation
	// PostCallBudget bounds how long a call's end waits, once the call is
	// over, for the conversation's outcome (its summary above all;
	// default DefaultPostCallBudget).
	PostCallBudget time.Duration
	// Writes retries the transcript entries the phone appends itself (a
	// transfer's, when the conversation does not take it) while the
	// database does not take them (nil: the defaults of persist).
	Writes *persist.Writer
	Logger *slog.Logger

	refusals refusals // recent refusals recorded, per source and number
	decoy    decoy    // answers INVITEs to unknown numbers as an authenticated trunk would
}

func (p *Phone) postCallBudget() time.Duration {
	if p.PostCallBudget <= 0 {
		return DefaultPostCallBudget
	}
	return p.PostCallBudget
}

func (p *Phone) log() *slog.Logger {
	if p.Logger == nil {
		return slog.Default()
	}
	return p.Logger
}

func (p *Phone) conversation() Conversation {
	if p.Conversation == nil {
		return Hold{}
	}
	return p.Conversation
}

var _ call.Dialer = (*Phone)(nil)
