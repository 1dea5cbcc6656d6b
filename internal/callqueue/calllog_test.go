package callqueue

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/logtest"
	"github.com/parley-voice/parley/internal/model"
)

// withLog sends the queue's log to l.
func withLog(l *logtest.Log) harnessOption {
	return func(o *Options) { o.Logger = l.Logger() }
}

// TestCallLogLines: a call's life is in the log, one line for each step,
// each with the call's ids: placed, answered, ended (status, cause,
// duration); a failed call ends with a WARN line with its error; a queued
// call canceled through the API is placed QUEUED and ends CANCELED; an
// inbound call refused at the limit is a WARN line. On both engines.
func TestCallLogLines(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			var log logtest.Log
			h := newHarness(t, open(t), 1, withLog(&log))
			campaign := model.NewID()

			// Answered, then hung up by the far end; placed by a campaign.
			c := model.Call{
				ID: model.NewID(), OrgID: h.org.ID, AgentID: h.agent.ID, AgentName: h.agent.Name, Direction: model.Outbound,
				FromNumber: "+14155550100", ToNumber: "+14155550123", Variables: map[string]any{}, Prompt: "P",
				Transcript: []map[string]any{}, Metrics: map[string]any{}, CampaignID: &campaign,
			}
			if err := h.queue.Place(t.Context(), &c, false); err != nil {
				t.Fatal(err)
			}
			line := h.dialed().Answer()
			h.waitStatus(c.ID, model.CallInProgress)
			// Queued behind it (one line): canceled before it is dialed.
			queued := h.mustPlace("+14155550124")
			if _, err := h.queue.Cancel(t.Context(), h.org.ID, queued.ID); err != nil {
				t.Fatal(err)
			}
			line.RemoteHangup()
			ended := h.waitPost(c.ID)

			lines := log.Where(t, "call_id", c.ID)
			if got, want := logtest.Events(lines), []string{"INFO call placed", "INFO call answered", "INFO call ended"}; !slices.Equal(got, want) {
				t.Fatalf("answered call: lines %q, want %q", got, want)
			}
			for _, m := range lines {
				if m["org_id"] != h.org.ID || m["agent_id"] != h.agent.ID || m["campaign_id"] != campaign || m["direction"] != model.Outbound {
					t.Errorf("%s: ids %v %v %v %v", m["msg"], m["org_id"], m["agent_id"], m["campaign_id"], m["direction"])
				}
				if m["to"] != nil || m["from"] != nil {
					t.Errorf("%s: a phone number is in the log: %v", m["msg"], m)
				}
			}
			if lines[0]["status"] != model.CallInitiated {
				t.Errorf("placed with status %v, want %s", lines[0]["status"], model.CallInitiated)
			}
			end := lines[2]
			if end["status"] != model.CallCompleted || end["cause"] != call.CauseUserEnded || end["duration_s"] != float64(*ended.DurationSeconds) {
				t.Errorf("end line %v, call %s %s %ds", end, ended.Status, *ended.HangupCause, *ended.DurationSeconds)
			}

			q := log.Where(t, "call_id", queued.ID)
			if got, want := logtest.Events(q), []string{"INFO call placed", "INFO call ended"}; !slices.Equal(got, want) {
				t.Fatalf("canceled call: lines %q, want %q", got, want)
			}
			if q[0]["status"] != model.CallQueued || q[1]["status"] != model.CallCanceled || q[1]["cause"] != call.CauseAPIEnded || q[1]["duration_s"] != 0.0 {
				t.Errorf("canceled call: %v", q)
			}
			if _, ok := q[0]["campaign_id"]; ok {
				t.Errorf("a call no campaign placed names one: %v", q[0])
			}

			// A dial that fails: a WARN line with the cause and the error.
			failed := h.mustPlace("+14155550125")
			h.dialed().Fail(busy())
			h.waitPost(failed.ID)
			f := log.Where(t, "call_id", failed.ID)
			if got, want := logtest.Events(f), []string{"INFO call placed", "WARN call failed"}; !slices.Equal(got, want) {
				t.Fatalf("failed call: lines %q, want %q", got, want)
			}
			if f[1]["status"] != model.CallFailed || f[1]["cause"] != call.CauseBusy || f[1]["error"] != "486 Busy Here" {
				t.Errorf("failed call's end: %v", f[1])
			}

			// An inbound call: received, answered, ended; refused at the
			// limit while it holds the line: a WARN line.
			in := inbound(h)
			answered := make(chan *inboundLine, 1)
			err := h.queue.Answer(t.Context(), &in, func(ctx context.Context, progress func(call.Change) bool) (call.Line, error) {
				l := newInboundLine()
				if !progress(call.Change{To: model.CallRinging}) {
					return nil, context.Canceled
				}
				answered <- l
				return l, nil
			}, true)
			if err != nil {
				t.Fatal(err)
			}
			il := <-answered
			refused := inbound(h)
			if err := h.queue.Answer(t.Context(), &refused, nil, true); err != ErrConcurrencyLimit {
				t.Fatalf("a second inbound call at the limit: %v", err)
			}
			il.end(call.Result{Status: model.CallCompleted, HangupCause: call.CauseUserEnded})
			h.waitPost(in.ID)
			if got, want := logtest.Events(log.Where(t, "call_id", in.ID)), []string{"INFO call received", "INFO call answered", "INFO call ended"}; !slices.Equal(got, want) {
				t.Errorf("inbound call: lines %q, want %q", got, want)
			}
			r := log.Where(t, "call_id", refused.ID)
			if got, want := logtest.Events(r), []string{"WARN call failed"}; !slices.Equal(got, want) || r[0]["cause"] != call.CauseBusy || r[0]["direction"] != model.Inbound {
				t.Errorf("refused inbound call: lines %v", r)
			}
		})
	}
}

// inbound is an inbound call to h's agent, as call.NewInbound builds one.
func inbound(h *harness) model.Call {
	return model.Call{
		ID: model.NewID(), OrgID: h.org.ID, AgentID: h.agent.ID, AgentName: h.agent.Name, Direction: model.Inbound,
		FromNumber: "+14155559999", ToNumber: "+14155550100", Variables: map[string]any{}, Prompt: "P",
		Transcript: []map[string]any{}, Metrics: map[string]any{},
	}
}

// inboundLine is an answered inbound leg the test ends.
type inboundLine struct {
	once   sync.Once
	ended  chan struct{}
	result call.Result
}

func newInboundLine() *inboundLine { return &inboundLine{ended: make(chan struct{})} }

func (l *inboundLine) end(r call.Result) {
	l.once.Do(func() {
		l.result = r
		close(l.ended)
	})
}

func (l *inboundLine) Ended() <-chan struct{} { return l.ended }
func (l *inboundLine) Result() call.Result    { <-l.ended; return l.result }
func (l *inboundLine) Hangup(cause string) {
	l.end(call.Result{Status: model.CallCompleted, HangupCause: cause})
}
func (l *inboundLine) RecordingURL() string { return "" }
