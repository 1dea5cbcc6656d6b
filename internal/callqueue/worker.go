package callqueue

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/store"
)

// worker runs one admitted call on this server.
type worker struct {
	call    model.Call
	connect Connect // nil: dial out through the Dialer
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed when the worker has written its end

	mu   sync.Mutex
	line call.Line
	// gaveUp (under the queue's mu): a change of the call was not written
	// in time; the worker leaves the call to the reaper.
	gaveUp bool
}

// errAPIEnded cancels a worker because the API canceled or ended its call;
// errGone because the call ended elsewhere (another server canceled it).
var (
	errAPIEnded = errors.New(call.CauseAPIEnded)
	errGone     = errors.New("call ended elsewhere")
)

// start runs c (INITIATED, leased to this server) in its own goroutine,
// dialing it out, or with connect for a call that came in.
func (q *Queue) start(c model.Call, connect Connect) {
	ctx, cancel := context.WithCancelCause(q.base)
	w := &worker{call: c, connect: connect, cancel: cancel, done: make(chan struct{})}
	q.mu.Lock()
	q.running[c.ID] = w
	delete(q.admitting, c.ID)
	q.mu.Unlock()
	q.o.Metrics.live.Inc()
	q.workers.Add(1)
	go func() {
		defer q.workers.Done()
		defer func() {
			q.mu.Lock()
			delete(q.running, c.ID)
			gaveUp := w.gaveUp
			q.mu.Unlock()
			if gaveUp {
				select {
				case q.orphaned <- struct{}{}:
				default:
				}
			}
			q.o.Metrics.live.Dec()
			cancel(nil)
			close(w.done)
			q.Wake() // a line is free
		}()
		q.run(ctx, w)
	}()
}

// run dials the call and follows it to its end.
func (q *Queue) run(ctx context.Context, w *worker) {
	c := w.call
	log := q.o.Logger.With("call_id", c.ID, "org_id", c.OrgID)
	agent, err := q.agentAvailable(ctx, c)
	if err != nil {
		q.end(c, call.Change{To: model.CallFailed, HangupCause: call.CauseAgentUnavailable, ErrorMessage: err.Error()})
		return
	}
	var line call.Line
	if w.connect != nil {
		line, err = w.connect(ctx, func(ch call.Change) bool { return q.transition(c, ch) })
	} else {
		// A simulated caller rings the agent under test in this deployment.
		req := call.DialRequest{CallID: c.ID, OrgID: c.OrgID, AgentID: c.AgentID, FromNumber: c.FromNumber, ToNumber: c.ToNumber,
			SIPTrunkID: c.SIPTrunkID, Loopback: agent.SimulatedCaller}
		if c.AgentCallerIDName != nil {
			req.CallerIDName = *c.AgentCallerIDName
		}
		// What cancels the ringing leg is saved with RINGING, so whichever
		// server ends the call if this one dies can cancel it.
		var ring ringWrite
		line, err = q.o.Dialer.Dial(ctx, req, func(state []byte) {
			ring.start(func() { q.write(c.OrgID, c.ID, call.Change{To: model.CallRinging}, state) })
		})
		ring.wait() // before any later change of the call
	}
	if err != nil {
		var dialErr *call.DialError
		switch {
		case errors.As(err, &dialErr):
			to := model.CallFailed
			if dialErr.Status != "" {
				to = dialErr.Status
			}
			q.end(c, call.Change{To: to, HangupCause: dialErr.Cause, ErrorMessage: dialErr.Message})
		case ctx.Err() != nil:
			q.abandoned(c, context.Cause(ctx))
		default:
			log.Error("dial failed", "err", err)
			q.end(c, call.Change{To: model.CallFailed, HangupCause: call.CauseDialFailed, ErrorMessage: err.Error()})
		}
		return
	}
	w.mu.Lock()
	w.line = line
	w.mu.Unlock()
	// The leg's dialog is saved with the answer, so whichever server ends
	// the call if this one dies can hang the far end up.
	var dialog []byte
	if r, ok := line.(call.Recoverable); ok {
		dialog = r.DialogState()
	}
	if _, ok := q.write(c.OrgID, c.ID, call.Change{To: model.CallInProgress, RecordingURL: line.RecordingURL()}, dialog); !ok {
		line.Hangup(call.CauseAPIEnded)
		return
	}
	select {
	case <-line.Ended():
	case <-ctx.Done():
		// Stopped from our side: hang up, and let the line finish (the
		// conversation's summary included) before the end is written.
		line.Hangup(hangupCause(context.Cause(ctx)))
		<-line.Ended()
		q.ended(c, context.Cause(ctx), line.Result().Outcome)
		return
	}
	r := line.Result()
	q.end(c, call.Change{To: r.Status, HangupCause: r.HangupCause, ErrorMessage: r.ErrorMessage, Outcome: r.Outcome})
}

func hangupCause(err error) string {
	if errors.Is(err, errAPIEnded) {
		return call.CauseAPIEnded
	}
	return call.CauseServerShutdown
}

// ended records the end of an answered call stopped from our side, with
// what its conversation reported: ended through the API (COMPLETED), ended
// elsewhere (already written there: nothing to write), or cut by shutdown
// (FAILED).
func (q *Queue) ended(c model.Call, cause error, out call.Outcome) {
	switch {
	case errors.Is(cause, errGone):
	case errors.Is(cause, errAPIEnded):
		q.end(c, call.Change{To: model.CallCompleted, HangupCause: call.CauseAPIEnded, Outcome: out})
	default:
		q.end(c, call.Change{To: model.CallFailed, HangupCause: call.CauseServerShutdown,
			ErrorMessage: "the server shut down during the call", Outcome: out})
	}
}

// abandoned records the end of a call stopped from our side before it was
// answered: canceled through the API (CANCELED), ended elsewhere, or cut by
// shutdown (FAILED).
func (q *Queue) abandoned(c model.Call, cause error) {
	switch {
	case errors.Is(cause, errGone):
	case errors.Is(cause, errAPIEnded):
		q.end(c, call.Change{To: model.CallCanceled, HangupCause: call.CauseAPIEnded})
	default:
		q.end(c, call.Change{To: model.CallFailed, HangupCause: call.CauseServerShutdown, ErrorMessage: "the server shut down during the call"})
	}
}

// agentAvailable reads the call's agent (a simulated caller too) and
// checks it can still take the call.
func (q *Queue) agentAvailable(ctx context.Context, c model.Call) (model.Agent, error) {
	var a model.Agent
	// A store error is retried as writes are: a database that is away
	// (pool exhausted, failover) should not fail a call just admitted.
	err := q.o.Writes.Do(ctx, "read call agent", func(ctx context.Context) (err error) {
		a, err = store.Read(ctx, q.o.Store, func(tx store.Tx) (model.Agent, error) { return tx.GetCallAgent(ctx, c.OrgID, c.AgentID) })
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return a, errors.New("the agent was deleted before the call was placed")
	case err != nil:
		return a, err
	case a.Status != model.AgentActive:
		return a, errors.New("the agent was disabled before the call was placed")
	}
	return a, nil
}

// transition applies a non-final change; false when the call is already
// over (ended elsewhere), so the caller stops.
func (q *Queue) transition(c model.Call, ch call.Change) bool {
	_, ok := q.write(c.OrgID, c.ID, ch, nil)
	return ok
}

// end applies a final change, then delivers the post-call webhook.
func (q *Queue) end(c model.Call, ch call.Change) {
	ended, ok := q.write(c.OrgID, c.ID, ch, nil)
	if !ok {
		return
	}
	cause := ""
	if ended.HangupCause != nil {
		cause = *ended.HangupCause
	}
	q.o.Metrics.ended.WithLabelValues(ended.Status, cause).Inc()
	q.deliver(ended)
}

// write applies ch to the stored call (see change), retrying while the
// database does not take it: the worker holds the call, and its lease is
// renewed, until the change lands. It gives up (false) when the retries'
// budget is spent or shutdown halts them; the call, no longer run, is then
// ended by the reaper.
func (q *Queue) write(orgID, id string, ch call.Change, dialog []byte) (model.Call, bool) {
	ctx := context.WithoutCancel(q.base)
	var c model.Call
	tries := 0
	err := q.o.Writes.Do(q.writes, "call state", func(actx context.Context) error {
		tries++
		var err error
		c, err = q.change(actx, orgID, id, ch, dialog, tries > 1)
		return err
	})
	return c, q.changed(ctx, id, orgID, ch, err)
}

// writeOnce applies ch once, for a request that answers its caller now (a
// cancel through the API): a database that does not take it is the
// request's error.
func (q *Queue) writeOnce(ctx context.Context, orgID, id string, ch call.Change) (model.Call, bool, error) {
	c, err := q.change(ctx, orgID, id, ch, nil, false)
	var illegal *call.IllegalTransition
	if err != nil && !errors.As(err, &illegal) {
		return c, false, err
	}
	return c, q.changed(ctx, id, orgID, ch, err), nil
}

// changed reads change's error: a change to a call that is already final is
// a race (it ended elsewhere) and wrote nothing; any other illegal change
// is a bug: logged and refused.
func (q *Queue) changed(ctx context.Context, id, orgID string, ch call.Change, err error) bool {
	var illegal *call.IllegalTransition
	switch {
	case errors.As(err, &illegal) && call.IsFinal(illegal.From):
		return false
	case err != nil:
		q.o.Logger.ErrorContext(ctx, "call state change refused", "call_id", id, "org_id", orgID, "to", ch.To, "err", err)
		q.mu.Lock()
		if w := q.running[id]; w != nil {
			w.gaveUp = true
		}
		q.mu.Unlock()
		return false
	}
	return true
}

// change applies ch to the stored call in one transaction, holding the row
// from the read to the write so no other writer's change is lost; with it,
// dialog (when not nil) is saved as the call's leg, and a final change
// deletes the saved leg: the call's end is the end of its dialog. again
// says an earlier try may have committed without its answer reaching us:
// finding the call already moved to ch.To is then that try's success.
func (q *Queue) change(ctx context.Context, orgID, id string, ch call.Change, dialog []byte, again bool) (model.Call, error) {
	var c model.Call
	err := q.o.Store.Update(ctx, func(tx store.Tx) error {
		var err error
		if c, err = tx.GetCallForUpdate(ctx, orgID, id); err != nil {
			return err
		}
		if again && c.Status == ch.To {
			return nil
		}
		before := c
		before.Variables, before.Metrics = maps.Clone(c.Variables), maps.Clone(c.Metrics) // Apply changes them in place
		if err := call.Apply(&c, ch, model.Now()); err != nil {
			return persist.Permanent(err)
		}
		if call.IsFinal(c.Status) {
			if err := q.capturePostCallURL(ctx, tx, &c); err != nil {
				return err
			}
		}
		if err := tx.ChangeCall(ctx, &before, &c); err != nil {
			return err
		}
		switch {
		case call.IsFinal(c.Status) && (before.Status == model.CallRinging || before.Status == model.CallInProgress): // only calls that rang have one
			return tx.DeleteCallDialog(ctx, orgID, id)
		case dialog != nil:
			return tx.PutCallDialog(ctx, &model.CallDialog{OrgID: orgID, CallID: id, State: dialog})
		case c.Status == model.CallInProgress && before.Status == model.CallRinging:
			return tx.DeleteCallDialog(ctx, orgID, id) // answered with no dialog to save: the ringing INVITE is no longer the leg
		}
		return nil
	})
	return c, err
}

// capturePostCallURL records where the post-call webhook goes, as the agent
// says when the call ends: skipped when the agent has no URL (or is gone).
func (q *Queue) capturePostCallURL(ctx context.Context, tx store.Tx, c *model.Call) error {
	a, err := tx.GetCallAgent(ctx, c.OrgID, c.AgentID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err == nil && a.Config.PostCallWebhookURL != nil {
		c.PostCallWebhookURL = a.Config.PostCallWebhookURL
		return nil
	}
	skipped := model.WebhookSkipped
	c.PostCallWebhookStatus = &skipped
	return nil
}

// Cancel ends a call through the API: a queued call becomes CANCELED at
// once; a dialing or ringing call is abandoned (CANCELED); a live call is
// hung up (COMPLETED, API_ENDED). Canceling a call that is over is a
// conflict. The call is returned as it stands after the request.
func (q *Queue) Cancel(ctx context.Context, orgID, id string) (model.Call, error) {
	for {
		c, err := store.Read(ctx, q.o.Store, func(tx store.Tx) (model.Call, error) { return tx.GetCall(ctx, orgID, id) })
		if err != nil {
			return c, err
		}
		if call.IsFinal(c.Status) {
			return c, &invalid.Conflict{Message: "the call has already ended (" + c.Status + ")"}
		}
		q.mu.Lock()
		w := q.running[id]
		q.mu.Unlock()
		if w != nil {
			w.cancel(errAPIEnded)
			select {
			case <-w.done:
			case <-ctx.Done():
				return c, ctx.Err()
			}
			return store.Read(ctx, q.o.Store, func(tx store.Tx) (model.Call, error) { return tx.GetCall(ctx, orgID, id) })
		}
		// Queued, or live on another server: write the end here; the server
		// running it sees the call ended at its next heartbeat and hangs up.
		ch := call.Change{To: model.CallCanceled, HangupCause: call.CauseAPIEnded}
		if c.Status == model.CallInProgress {
			ch.To = model.CallCompleted
		}
		ended, ok, err := q.writeOnce(ctx, orgID, id, ch)
		if err != nil {
			return c, err
		}
		if ok {
			q.o.Metrics.ended.WithLabelValues(ended.Status, call.CauseAPIEnded).Inc()
			q.deliver(ended)
			q.Wake()
			return ended, nil
		}
		// It changed under us (admitted, answered or ended): look again.
	}
}
