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
			q.freed() // a line is free
		}()
		q.run(ctx, w)
	}()
}

// run dials the call and follows it to its end.
func (q *Queue) run(ctx context.Context, w *worker) {
	c := w.call
	k := &known{orgID: c.OrgID, id: c.ID, call: &c}
	log := q.o.Logger.With("call_id", c.ID, "org_id", c.OrgID)
	agent, err := q.agentAvailable(ctx, c)
	if err != nil {
		q.end(k, call.Change{To: model.CallFailed, HangupCause: call.CauseAgentUnavailable, ErrorMessage: err.Error()})
		return
	}
	var line call.Line
	if w.connect != nil {
		// The connection writes its progress itself: the next change reads
		// the row.
		k.call = nil
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
		defer ring.wait()                                // its goroutine ends before the worker does
		rk := &known{orgID: c.OrgID, id: c.ID, call: &c} // the ringing write's view, the worker's again once it is done
		line, err = q.o.Dialer.Dial(ctx, req, func(state []byte) {
			ring.start(func() { q.write(rk, call.Change{To: model.CallRinging}, state, &ring) })
		})
		// Before any later change of the call: the ringing write lands
		// first, or the answer takes its place.
		if err != nil || !ring.fold() {
			ring.wait()
			if ring.rang() {
				k = rk
			}
		}
	}
	if err != nil {
		var dialErr *call.DialError
		switch {
		case errors.As(err, &dialErr):
			to := model.CallFailed
			if dialErr.Status != "" {
				to = dialErr.Status
			}
			q.end(k, call.Change{To: to, HangupCause: dialErr.Cause, ErrorMessage: dialErr.Message})
		case ctx.Err() != nil:
			q.abandoned(k, context.Cause(ctx))
		default:
			log.Error("dial failed", "err", err)
			q.end(k, call.Change{To: model.CallFailed, HangupCause: call.CauseDialFailed, ErrorMessage: err.Error()})
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
	answered, ok := q.write(k, call.Change{To: model.CallInProgress, RecordingURL: line.RecordingURL()}, dialog, nil)
	if !ok {
		line.Hangup(call.CauseAPIEnded)
		return
	}
	q.logAnswered(answered)
	select {
	case <-line.Ended():
	case <-ctx.Done():
		// Stopped from our side: hang up, and let the line finish (the
		// conversation's summary included) before the end is written.
		line.Hangup(hangupCause(context.Cause(ctx)))
		<-line.Ended()
		q.ended(k, context.Cause(ctx), line.Result().Outcome)
		return
	}
	r := line.Result()
	q.end(k, call.Change{To: r.Status, HangupCause: r.HangupCause, ErrorMessage: r.ErrorMessage, Outcome: r.Outcome})
}

// known is what a worker knows of its call as stored.
type known struct {
	orgID, id string
	// call is the call as the worker last wrote it: its next change is
	// written from it in one statement (store.Tx.ChangeCallFrom). nil when
	// the worker cannot tell (a connection writes an inbound call's
	// progress, or a write failed): the next change reads the row, locked.
	call *model.Call
	// leg says a leg's state may be saved for the call (call_dialogs; only
	// its worker saves one): only then is one deleted.
	leg bool
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
func (q *Queue) ended(k *known, cause error, out call.Outcome) {
	switch {
	case errors.Is(cause, errGone):
	case errors.Is(cause, errAPIEnded):
		q.end(k, call.Change{To: model.CallCompleted, HangupCause: call.CauseAPIEnded, Outcome: out})
	default:
		q.end(k, call.Change{To: model.CallFailed, HangupCause: call.CauseServerShutdown,
			ErrorMessage: "the server shut down during the call", Outcome: out})
	}
}

// abandoned records the end of a call stopped from our side before it was
// answered: canceled through the API (CANCELED), ended elsewhere, or cut by
// shutdown (FAILED).
func (q *Queue) abandoned(k *known, cause error) {
	switch {
	case errors.Is(cause, errGone):
	case errors.Is(cause, errAPIEnded):
		q.end(k, call.Change{To: model.CallCanceled, HangupCause: call.CauseAPIEnded})
	default:
		q.end(k, call.Change{To: model.CallFailed, HangupCause: call.CauseServerShutdown, ErrorMessage: "the server shut down during the call"})
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
	_, ok := q.write(&known{orgID: c.OrgID, id: c.ID}, ch, nil, nil)
	return ok
}

// end applies a final change, then delivers the post-call webhook.
func (q *Queue) end(k *known, ch call.Change) {
	ended, ok := q.write(k, ch, nil, nil)
	if !ok {
		return
	}
	cause := ""
	if ended.HangupCause != nil {
		cause = *ended.HangupCause
	}
	q.o.Metrics.ended.WithLabelValues(ended.Status, cause).Inc()
	q.logEnded(ended)
	q.deliver(ended)
}

// errFolded: a ringing write found, as its transaction began, that the
// answer took its place (ringWrite.fold).
var errFolded = errors.New("the ringing was folded into the answer")

// errMoved: the call's status was no longer the one its worker last wrote.
var errMoved = errors.New("the call moved on")

// write applies ch to the call k says (see change), with dialog, when not
// nil, saved as its leg, retrying while the database does not take it: the
// worker holds the call, and its lease is renewed, until the change lands.
// It gives up (false) when the retries' budget is spent or shutdown halts
// them; the call, no longer run, is then ended by the reaper. ring, when
// set, is the ringing write this is: an answer that took its place
// (ringWrite.fold) before a try's transaction began leaves nothing to write
// (and write says false). k follows what was written.
func (q *Queue) write(k *known, ch call.Change, dialog []byte, ring *ringWrite) (model.Call, bool) {
	ctx := context.WithoutCancel(q.base)
	var c model.Call
	tries, folded := 0, false
	from := k.call
	err := q.o.Writes.Do(q.writes, "call state", func(actx context.Context) error {
		tries++
		var err error
		// The first try writes from what the worker knows; a retry may
		// follow a try that committed unanswered, and reads the row.
		if tries > 1 {
			from = nil
		}
		if ring != nil && (ring.folded() || tries > 1 && !ring.begin()) {
			// Folded before this try: nothing to write, and no reason to
			// wait for the database.
			folded = true
			return nil
		}
		c, err = q.change(actx, k.orgID, k.id, ch, dialog, tries > 1, from, k.leg, ring)
		if errors.Is(err, errMoved) {
			from = nil
			c, err = q.change(actx, k.orgID, k.id, ch, dialog, false, nil, k.leg, ring)
		}
		if errors.Is(err, errFolded) {
			folded = true
			return nil
		}
		return err
	})
	if folded {
		return model.Call{}, false
	}
	k.leg = k.leg || dialog != nil
	ok := q.changed(ctx, k.id, k.orgID, ch, err)
	k.call = nil
	if ok {
		k.call = &c
		if dialog == nil && (ch.To == model.CallInProgress || call.IsFinal(ch.To)) {
			k.leg = false // the answer or the end deleted the ringing leg (saveLeg)
		}
	}
	return c, ok
}

// writeOnce applies ch once, for a request that answers its caller now (a
// cancel through the API): a database that does not take it is the
// request's error.
func (q *Queue) writeOnce(ctx context.Context, orgID, id string, ch call.Change) (model.Call, bool, error) {
	c, err := q.change(ctx, orgID, id, ch, nil, false, nil, true, nil)
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

// change applies ch to the stored call in one transaction, so no other
// writer's change is lost, and returns the call as committed. With from
// (the call as its worker last wrote it) the change is one guarded write,
// UPDATE … RETURNING, that finds the call still in from's status, or
// errMoved and nothing written; without it the row is read and held from
// the read to the write. With it, dialog (when not nil) is saved as the
// call's leg, and a final change deletes the saved leg (when leg says one
// may be saved): the call's end is the end of its dialog. again says an
// earlier try may have committed without its answer reaching us: finding
// the call already moved to ch.To is then that try's success. ring, when
// set, is asked first (ringWrite.begin): folded is errFolded, and nothing
// written.
func (q *Queue) change(ctx context.Context, orgID, id string, ch call.Change, dialog []byte, again bool, from *model.Call, leg bool, ring *ringWrite) (model.Call, error) {
	var c model.Call
	err := q.o.Store.Update(ctx, func(tx store.Tx) error {
		if ring != nil && !ring.begin() {
			return errFolded
		}
		var before model.Call
		if from != nil {
			before = *from
		} else {
			var err error
			if before, err = tx.GetCallForUpdate(ctx, orgID, id); err != nil {
				return err
			}
			if again && before.Status == ch.To {
				c = before
				return nil
			}
		}
		c = before
		c.Variables, c.Metrics = maps.Clone(before.Variables), maps.Clone(before.Metrics) // Apply changes them in place
		if err := call.Apply(&c, ch, model.Now()); err != nil {
			return persist.Permanent(err)
		}
		if call.IsFinal(c.Status) {
			if err := q.capturePostCallURL(ctx, tx, &c); err != nil {
				return err
			}
		}
		if from == nil {
			if err := tx.ChangeCall(ctx, &before, &c); err != nil {
				return err
			}
			return saveLeg(ctx, tx, orgID, id, before.Status, c.Status, dialog, leg)
		}
		// The leg first: a change in or out of the live statuses writes the
		// organization's live count, whose row admissions wait for, and
		// holds it until the commit.
		if err := saveLeg(ctx, tx, orgID, id, before.Status, c.Status, dialog, leg); err != nil {
			return err
		}
		stored, ok, err := tx.ChangeCallFrom(ctx, &before, &c)
		switch {
		case err != nil:
			return err
		case !ok:
			return errMoved // rolls the leg back too
		}
		c = stored
		return nil
	})
	return c, err
}

// saveLeg keeps the call's saved leg (call_dialogs) in step with a change
// from status from to status to: dialog, when not nil, is saved; a final
// change ends a rung call's leg, and an answer with no dialog to save ends
// the ringing INVITE's (when leg says one may be saved).
func saveLeg(ctx context.Context, tx store.Tx, orgID, id, from, to string, dialog []byte, leg bool) error {
	switch {
	case call.IsFinal(to) && (from == model.CallRinging || from == model.CallInProgress): // only calls that rang have one
		if leg {
			return tx.DeleteCallDialog(ctx, orgID, id)
		}
	case dialog != nil:
		return tx.PutCallDialog(ctx, &model.CallDialog{OrgID: orgID, CallID: id, State: dialog})
	case to == model.CallInProgress && from == model.CallRinging && leg:
		return tx.DeleteCallDialog(ctx, orgID, id) // answered with no dialog to save: the ringing INVITE is no longer the leg
	}
	return nil
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
			q.logEnded(ended)
			q.deliver(ended)
			q.freed()
			return ended, nil
		}
		// It changed under us (admitted, answered or ended): look again.
	}
}
