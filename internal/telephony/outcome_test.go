package telephony

import (
	"context"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/model"
)

// summarizer is a conversation that ends the call as soon as the far end's
// media flows when it is the caller, and, once the call is over, takes a while to write its summary.
type summarizer struct {
	write time.Duration // how long the summary takes
	stuck chan struct{} // not nil: report only once it is closed
}

func (s summarizer) Run(ctx context.Context, l *Live) call.Outcome {
	if l.Call.Direction == model.Outbound {
		farEndHeard(ctx, l.Session)
		l.End(call.CauseEndCallTool)
	}
	select {
	case <-ctx.Done():
	case <-l.Session.Done():
	}
	if s.stuck != nil {
		<-s.stuck // a conversation stuck past its budget: the line gives up on it
		return call.Outcome{}
	}
	time.Sleep(s.write) // the model writing the summary, after the call is over
	text := "Summary of the " + l.Call.Direction + " side."
	return call.Outcome{Summary: &text, Metrics: map[string]any{"llm_prompt_tokens": 7}}
}

// farEndHeard returns once a packet of the far end's audio has arrived:
// its leg is up, so the answering side has its ACK and records the call
// answered. (A BYE sent right behind the ACK can overtake it on a loaded
// machine; the answering side then records a caller who hung up before
// the answer, which is another case than these tests are about.)
func farEndHeard(ctx context.Context, s media.Session) {
	a := s.Audio(8000)
	arrivals, ok := a.(media.Arrivals)
	for ok {
		if _, err := a.Read(ctx); err != nil || !arrivals.Arrived().IsZero() {
			return
		}
	}
}

// TestTheEndWaitsForTheOutcome: a loopback call whose caller hangs up as
// soon as the answer's media flows, and whose conversations each take a second and a half to report:
// both records end with their summary and metrics (none ends without, to be
// filled in later).
func TestTheEndWaitsForTheOutcome(t *testing.T) {
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.Conversation = summarizer{write: 1500 * time.Millisecond} })
	out := e.place(e.loopbackCaller(), "+15551230000")
	ended := e.waitFinal(out.ID)
	wantEnd(t, ended, model.CallCompleted, call.CauseEndCallTool)
	in := e.waitInbound()
	wantEnd(t, in, model.CallCompleted, call.CauseUserEnded)
	for _, c := range []model.Call{ended, in} {
		if c.Summary == nil || *c.Summary != "Summary of the "+c.Direction+" side." || c.Metrics["llm_prompt_tokens"] != 7.0 {
			t.Errorf("%s record ended without its outcome: summary %v metrics %v", c.Direction, c.Summary, c.Metrics)
		}
	}
}

// TestTheEndDoesNotWaitForeverForTheOutcome: a conversation that never
// reports holds the call's end for its post-call budget (and the grace),
// no longer; the call ends without a summary.
func TestTheEndDoesNotWaitForeverForTheOutcome(t *testing.T) {
	stuck := make(chan struct{})
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) {
		p.Conversation = summarizer{stuck: stuck}
		p.PostCallBudget = 200 * time.Millisecond
	})
	t.Cleanup(func() { close(stuck) }) // runs before the env's cleanup
	out := e.place(e.loopbackCaller(), "+15551230000")
	// The caller's record ends once the budget is spent, without an outcome.
	ended := e.waitFinal(out.ID)
	wantEnd(t, ended, model.CallCompleted, call.CauseEndCallTool)
	if ended.Summary != nil {
		t.Errorf("summary %q from a conversation that never reported", *ended.Summary)
	}
}
