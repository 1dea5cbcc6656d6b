package eval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/pipeline"
	"github.com/parley-voice/parley/internal/store"
)

// outcome is how an attempt ended: a verdict, or why there is none.
type outcome struct {
	passed        *bool
	reasoning     string
	errMsg        string // set when there is no verdict
	inboundCallID *string
	transcript    []map[string]any
}

// failed is an outcome without a verdict.
func failed(format string, args ...any) outcome { return outcome{errMsg: fmt.Sprintf(format, args...)} }

// cutCauses end a call because a server stopped, not because of anything
// the agent did: the attempt says so instead of being judged.
var cutCauses = []string{call.CauseServerRestart, call.CauseServerShutdown, call.CauseLeaseExpired}

// attempt runs one attempt to its end. When ctx ends first the attempt
// stays running, for the next driver of the run to pick up.
func (r *Runner) attempt(ctx context.Context, run model.TestRun, a model.TestAttempt) {
	if run.Mode == model.TestModeText {
		r.textAttempt(ctx, run, a)
		return
	}
	if a.Status == model.AttemptPending {
		if !r.start(ctx, run, &a, true) {
			return
		}
	}
	o, ok := r.callOutcome(ctx, run, a)
	if ok {
		r.finish(ctx, run, a.ID, o)
	}
}

// start marks a pending attempt running; withCaller also creates its
// simulated caller and names its call, in the same transaction, so a
// crash leaves either nothing or everything needed to place the call.
// It reports false when the attempt is no longer to be run (the run was
// canceled) or failed at once. A start the database does not take is
// retried; one given up leaves the attempt pending, for the drive to start
// again at its next look.
func (r *Runner) start(ctx context.Context, run model.TestRun, a *model.TestAttempt, withCaller bool) bool {
	var startErr string
	id, tries := a.ID, 0
	err := r.update(ctx, "test attempt start", func(ctx context.Context, tx store.Tx) error {
		startErr, tries = "", tries+1
		cur, err := tx.GetTestRunForUpdate(ctx, run.OrgID, run.ID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(cur.Attempts, func(x model.TestAttempt) bool { return x.ID == id })
		if cur.Status == model.TestRunRunning && i >= 0 && tries > 1 && cur.Attempts[i].Status == model.AttemptRunning {
			*a = cur.Attempts[i] // an earlier try committed; its answer was lost
			return nil
		}
		if cur.Status != model.TestRunRunning || i < 0 || cur.Attempts[i].Status != model.AttemptPending {
			*a = model.TestAttempt{}
			return nil
		}
		*a = cur.Attempts[i]
		now := model.Now()
		a.Status, a.StartedAt, a.UpdatedAt = model.AttemptRunning, &now, now
		if withCaller {
			under, err := tx.GetAgent(ctx, run.OrgID, run.AgentID)
			if errors.Is(err, store.ErrNotFound) {
				startErr = "the agent under test was deleted"
				return nil
			}
			if err != nil {
				return err
			}
			callerID, callID := model.NewID(), model.NewID()
			a.CallerAgentID, a.CallID = &callerID, &callID
			caller := simulatedCaller(*a, under, callLimit(under), now)
			if err := tx.CreateAgent(ctx, &caller); err != nil {
				return err
			}
		}
		return tx.UpdateTestAttempt(ctx, a)
	})
	switch {
	case err != nil:
		if ctx.Err() == nil {
			r.Logger.Error("test attempt: start", "test_run_id", run.ID, "attempt_id", id, "err", err)
		}
		return false
	case startErr != "":
		r.finish(ctx, run, id, failed("%s", startErr))
		return false
	}
	return a.ID != ""
}

// callOutcome waits for a call-mode attempt's calls to end and judges the
// agent's side. ok is false when ctx ended first.
func (r *Runner) callOutcome(ctx context.Context, run model.TestRun, a model.TestAttempt) (o outcome, ok bool) {
	if a.CallID == nil {
		return failed("the attempt was cut by a server restart before its call was placed"), true
	}
	caller, err := r.awaitCall(ctx, run.OrgID, *a.CallID, func(tx store.Tx) (model.Call, error) {
		return tx.GetCall(ctx, run.OrgID, *a.CallID)
	}, 0)
	if errors.Is(err, store.ErrNotFound) {
		// Marked running, then stopped before placing the call: place it now.
		if err = r.place(ctx, run, a); err == nil {
			return r.callOutcome(ctx, run, a)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return outcome{}, false
		}
		return failed("the simulated caller's call could not be placed: %v", err), true
	}
	o.transcript = []map[string]any{}
	inbound, err := r.awaitCall(ctx, run.OrgID, caller.ID, func(tx store.Tx) (model.Call, error) {
		return tx.GetCallByLoopbackCaller(ctx, run.OrgID, caller.ID)
	}, inboundGrace)
	if ctx.Err() != nil {
		return outcome{}, false
	}
	if err == nil {
		o.inboundCallID, o.transcript = &inbound.ID, inbound.Transcript
	}
	for _, c := range []model.Call{caller, inbound} {
		if c.HangupCause != nil && slices.Contains(cutCauses, *c.HangupCause) {
			o.errMsg = "the attempt's call was cut by the server (" + *c.HangupCause + "): run it again"
			return o, true
		}
	}
	switch {
	case err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, errStillLive):
		return failed("reading the agent's call: %v", err), true
	case o.inboundCallID == nil:
		o.errMsg = "the agent under test did not answer: the call ended " + describe(caller)
		return o, true
	case caller.HangupCause != nil && *caller.HangupCause == call.CauseAPIEnded:
		o.errMsg = "the simulated caller's call was canceled"
		return o, true
	}
	return r.judge(ctx, a, o)
}

// describe is a call's end in words: "FAILED (BUSY: ...)".
func describe(c model.Call) string {
	s := c.Status
	if c.HangupCause != nil {
		s += " (" + *c.HangupCause
		if c.ErrorMessage != nil {
			s += ": " + *c.ErrorMessage
		}
		s += ")"
	}
	return s
}

// inboundGrace is how long the agent's leg may stay live after the
// caller's ended: its end is written once its summary is done (the
// post-call budget), and a leg that never answered never appears.
const inboundGrace = 30 * time.Second

var errStillLive = errors.New("the call has not ended")

// awaitCall polls read until the call it returns is final. A call that is
// not there yet is waited for too when grace is set; past grace the last
// answer is returned (ErrNotFound, or errStillLive with the call as read).
// grace 0 waits as long as the call lasts.
func (r *Runner) awaitCall(ctx context.Context, orgID, id string, read func(store.Tx) (model.Call, error), grace time.Duration) (model.Call, error) {
	var deadline time.Time
	if grace > 0 {
		deadline = time.Now().Add(grace)
	}
	for {
		c, err := store.Read(ctx, r.Store, read)
		switch {
		case err == nil && call.IsFinal(c.Status):
			return c, nil
		case err != nil && (!errors.Is(err, store.ErrNotFound) || grace == 0):
			return c, err
		case !deadline.IsZero() && time.Now().After(deadline):
			if err == nil {
				err = errStillLive
			}
			return c, err
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(r.Poll):
		}
	}
}

// place puts an attempt's call in the queue. The call reserves a second
// line for the agent's leg it dials, so the agent never answers busy and
// the two legs never overrun the organization's limit.
func (r *Runner) place(ctx context.Context, run model.TestRun, a model.TestAttempt) error {
	var caller, under model.Agent
	err := r.Store.View(ctx, func(tx store.Tx) (err error) {
		if caller, err = tx.GetCallAgent(ctx, run.OrgID, *a.CallerAgentID); err != nil {
			return err
		}
		under, err = tx.GetAgent(ctx, run.OrgID, run.AgentID)
		return err
	})
	if err != nil {
		return err
	}
	now := model.Now()
	to := "agent-" + under.ID
	vars := call.Merge(caller.Config.DefaultVariables, call.SystemVariables(caller, model.Outbound, callerNumber, to, now), nil)
	c := model.Call{
		ID: *a.CallID, OrgID: run.OrgID, AgentID: caller.ID, AgentName: caller.Name, Direction: model.Outbound,
		FromNumber: callerNumber, ToNumber: to, Variables: vars, Prompt: call.Render(caller.Config.PromptTemplate, vars),
		Transcript: []map[string]any{}, Metrics: map[string]any{}, ReservesLine: true,
	}
	return r.Calls.Place(ctx, &c, false)
}

// textAttempt holds a text-only conversation and judges it. One cut by a
// restart cannot go on (the conversation lived in the stopped server).
func (r *Runner) textAttempt(ctx context.Context, run model.TestRun, a model.TestAttempt) {
	if a.Status == model.AttemptRunning {
		r.finish(ctx, run, a.ID, failed("the text conversation was cut (a server restart, or its end could not be recorded): run it again"))
		return
	}
	if !r.start(ctx, run, &a, false) {
		return
	}
	under, err := store.Read(ctx, r.Store, func(tx store.Tx) (model.Agent, error) { return tx.GetAgent(ctx, run.OrgID, run.AgentID) })
	if err != nil {
		if ctx.Err() == nil {
			r.finish(ctx, run, a.ID, failed("the agent under test: %v", err))
		}
		return
	}
	res, err := r.Chats.Chat(ctx, pipeline.Chat{
		Agent: under, Call: pipeline.ChatCall(under, callerNumber, "agent-"+under.ID, nil, model.Now()),
		CallerPrompt: call.Render(callerPrompt(a.Script), a.Variables),
	})
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		o := failed("the text conversation failed: %v", err)
		o.transcript = res.Transcript
		r.finish(ctx, run, a.ID, o)
		return
	}
	o, ok := r.judge(ctx, a, outcome{transcript: res.Transcript})
	if ok {
		r.finish(ctx, run, a.ID, o)
	}
}

// judge asks the judge for a verdict on the agent's side of o's
// transcript. ok is false when ctx ended first.
func (r *Runner) judge(ctx context.Context, a model.TestAttempt, o outcome) (outcome, bool) {
	v, err := r.Judge.Score(ctx, a.ScoringRubric, o.transcript)
	switch {
	case ctx.Err() != nil:
		return o, false
	case errors.Is(err, ErrMalformedVerdict):
		o.errMsg = err.Error()
	case err != nil:
		o.errMsg = "the judge failed: " + err.Error()
	default:
		o.passed, o.reasoning = &v.Passed, v.Reasoning
	}
	return o, true
}

// finish records an attempt's outcome and the run's counters, and deletes
// its simulated caller (its calls are over). An attempt already final (its
// run was canceled, or an earlier try committed without its answer) keeps
// what it has. A record the database does not take is retried; one given
// up leaves the attempt running, for the drive to run again (a call
// attempt is judged anew from its calls).
func (r *Runner) finish(ctx context.Context, run model.TestRun, id string, o outcome) {
	err := r.update(ctx, "test attempt end", func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetTestRunForUpdate(ctx, run.OrgID, run.ID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(cur.Attempts, func(x model.TestAttempt) bool { return x.ID == id })
		if i < 0 {
			return nil
		}
		a := &cur.Attempts[i]
		if a.CallerAgentID != nil {
			if err := tx.DeleteSimulatedCaller(ctx, run.OrgID, *a.CallerAgentID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if a.Final() {
			return nil
		}
		now := model.Now()
		if o.errMsg != "" {
			fail(a, o.errMsg, now)
		} else {
			a.Status = model.AttemptFailed
			if *o.passed {
				a.Status = model.AttemptPassed
			}
			a.Passed, a.Reasoning, a.ErrorMessage = o.passed, &o.reasoning, nil
			a.CompletedAt, a.UpdatedAt = &now, now
		}
		a.InboundCallID = o.inboundCallID
		if o.transcript != nil {
			a.Transcript = o.transcript
		}
		if err := tx.UpdateTestAttempt(ctx, a); err != nil {
			return err
		}
		counts(&cur)
		cur.UpdatedAt = now
		return tx.UpdateTestRun(ctx, &cur)
	})
	if err != nil && ctx.Err() == nil {
		r.Logger.Error("test attempt: record its end", "test_run_id", run.ID, "attempt_id", id, "err", err)
	}
}
