package telephony

import (
	"context"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/store"
)

// line is an answered call: call.Line over a leg (a SIP leg or a
// browser's WebRTC peer), recorded, with the conversation running on it.
type line struct {
	p     *Phone
	leg   media.Leg
	sip   *sipua.Leg // leg when it is a SIP leg (nil: a web call, which cannot be transferred)
	trunk Trunk
	rec   *recording.Writer
	url   string
	stop  context.CancelFunc
	ended chan struct{}
	limit *time.Timer // maxConversationDurationSeconds (nil: none)

	mu       sync.Mutex
	cause    string // our side's hang-up cause, first wins
	status   string // final status for cause ("" = COMPLETED)
	errMsg   string // why, when the status is FAILED
	outcome  call.Outcome
	result   call.Result
	detached bool // a transfer took the leg over: its end is not ours
	loopback bool // both ends are this server's: nothing to recover
	// failCause is the hang-up cause of a leg that ended neither by us
	// nor by the far end hanging up (SIP_ERROR on a SIP leg).
	failCause string
}

// postCallGrace is how long past its budget a conversation may take to
// return before the call ends without its outcome: the budget bounds the
// summary, the grace what the conversation does around it.
const postCallGrace = 2 * time.Second

// answered records the SIP leg, starts the conversation and returns the
// line.
func (p *Phone) answered(ctx context.Context, orgID, callID, agentID string, leg *sipua.Leg, trunk Trunk) (*line, error) {
	l := &line{p: p, leg: leg, sip: leg, trunk: trunk, ended: make(chan struct{}), failCause: call.CauseSIPError}
	return p.run(ctx, l, orgID, callID, agentID)
}

// run records l's leg, starts the conversation on it and returns l once
// it runs; l ends when the leg does.
func (p *Phone) run(ctx context.Context, l *line, orgID, callID, agentID string) (*line, error) {
	leg := l.leg
	if p.Recordings != nil {
		rec, err := p.Recordings.Create(orgID, callID, leg.Rate())
		if err != nil {
			p.log().Error("recording not started", "call_id", callID, "err", err)
		} else {
			l.rec, l.url = rec, p.Recordings.URL(callID, time.Now())
			leg.SetRecorder(rec.Write)
		}
	}
	var live *Live
	err := p.Store.View(ctx, func(tx store.Tx) (err error) {
		live = &Live{Session: leg, Rate: leg.Rate(), line: l, Answered: time.Now(), PostCallBudget: p.postCallBudget()}
		if live.Call, err = tx.GetCall(ctx, orgID, callID); err != nil {
			return err
		}
		live.Agent, err = tx.GetCallAgent(ctx, orgID, agentID)
		return err
	})
	if err != nil {
		_ = leg.Hangup(context.Background())
		l.finish()
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = stop
	if max := live.Agent.Config.MaxConversationDurationSeconds; max != nil && *max > 0 {
		l.limit = time.AfterFunc(time.Duration(*max)*time.Second, func() { l.Hangup(call.CauseMaxDuration) })
	}
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		out := p.conversation().Run(runCtx, live)
		l.mu.Lock()
		l.outcome = out
		l.mu.Unlock()
		// The conversation is over: so is the call, unless a transfer
		// handed the leg to someone else.
		if !l.isDetached() {
			_ = leg.Hangup(context.Background())
		}
	}()
	go func() {
		<-leg.Done()
		stop()
		l.awaitOutcome(callID, reported, live.PostCallBudget)
		l.finish()
	}()
	return l, nil
}

// awaitOutcome waits for the conversation to report, for at most its
// post-call budget (and a little grace): the call's end is written with
// what it reported, so the post-call webhook carries the summary and
// metrics.
func (l *line) awaitOutcome(callID string, reported <-chan struct{}, budget time.Duration) {
	t := time.NewTimer(budget + postCallGrace)
	defer t.Stop()
	select {
	case <-reported:
	case <-t.C:
		l.p.log().Warn("the conversation did not report within the post-call budget: the call ends without its summary and metrics",
			"call_id", callID, "budget", budget.String())
	}
}

func (l *line) isDetached() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.detached
}

// finish computes the result once the leg is over and closes the recording.
func (l *line) finish() {
	if l.limit != nil {
		l.limit.Stop()
	}
	if l.rec != nil {
		if err := l.rec.Close(); err != nil {
			l.p.log().Error("recording incomplete", "err", err)
		}
	}
	end := l.leg.End()
	l.mu.Lock()
	switch {
	case l.cause != "":
		st := l.status
		if st == "" {
			st = model.CallCompleted
		}
		l.result = call.Result{Status: st, HangupCause: l.cause, ErrorMessage: l.errMsg}
	case end.Remote:
		l.result = call.Result{Status: model.CallCompleted, HangupCause: call.CauseUserEnded}
	default:
		l.result = call.Result{Status: model.CallFailed, HangupCause: l.failCause, ErrorMessage: end.Reason}
	}
	l.result.Outcome = l.outcome
	l.mu.Unlock()
	close(l.ended)
}

// Ended implements call.Line.
func (l *line) Ended() <-chan struct{} { return l.ended }

// Result implements call.Line.
func (l *line) Result() call.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.result
}

// RecordingURL implements call.Line.
func (l *line) RecordingURL() string { return l.url }

// Hangup implements call.Line: our side ends the call; the first cause
// wins (a transfer sets its own before the legs are hung up).
func (l *line) Hangup(cause string) { l.hangup(cause, "", "") }

// hangup ends the call with cause and, when status is FAILED, the reason.
func (l *line) hangup(cause, status, errMsg string) {
	l.mu.Lock()
	if l.cause == "" {
		l.cause, l.status, l.errMsg = cause, status, errMsg
	}
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.leg.Hangup(ctx)
}
