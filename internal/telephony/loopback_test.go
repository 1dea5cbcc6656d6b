package telephony

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
)

// toneTalker plays its tone and listens for the other side's; it reports
// whether it heard it, and the line it heard it on, then waits for the
// call to end (or hangs up). The caller's tone is 6 kHz: only a wideband
// codec carries it.
type toneTalker struct {
	mu    sync.Mutex
	heard map[string]bool   // by direction
	lines map[string]string // by direction: codec and rate
}

func (tt *toneTalker) Run(ctx context.Context, l *Live) call.Outcome {
	tt.converse(ctx, l)
	return call.Outcome{}
}

func (tt *toneTalker) converse(ctx context.Context, l *Live) {
	say, want := 6000.0, 440.0
	if l.Call.Direction == model.Inbound {
		say, want = 440, 6000
	}
	a := l.Session.Audio(16000)
	_ = a.Write(audio.Tone(say, 16000, 1500*time.Millisecond, 0.5))
	heard := false
	deadline := time.Now().Add(3 * time.Second)
	for !heard && time.Now().Before(deadline) {
		f, err := a.Read(ctx)
		if err != nil {
			break
		}
		heard = audio.DetectTone(f, 16000, want)
	}
	codec := ""
	if c, ok := l.Session.(interface{ Codec() string }); ok {
		codec = c.Codec()
	}
	tt.mu.Lock()
	tt.heard[l.Call.Direction] = heard
	tt.lines[l.Call.Direction] = fmt.Sprintf("%s %d", codec, l.Rate)
	tt.mu.Unlock()
	if l.Call.Direction == model.Outbound {
		_ = a.Drain(ctx)
		l.End(call.CauseEndCallTool)
		return
	}
	select {
	case <-l.Session.Done():
	case <-ctx.Done():
	}
}

// Two agents call each other over the loopback trunk: they negotiate
// G.722, so the conversation and the recordings run at 16 kHz and a 6 kHz
// tone, beyond G.711, goes through.
func TestLoopbackAgentCallsAgent(t *testing.T) {
	tt := &toneTalker{heard: map[string]bool{}, lines: map[string]string{}}
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.Conversation = tt })
	loop := e.trunk("")
	callee := e.agent(func(a *model.Agent) { a.Name = "Callee" })
	e.number("+15551230000", &callee.ID, nil)
	caller := e.agent(withTrunk(loop.ID))

	out := e.place(caller, "+15551230000")
	ended := e.waitFinal(out.ID)
	wantEnd(t, ended, model.CallCompleted, call.CauseEndCallTool)
	in := e.waitInbound()
	wantEnd(t, in, model.CallCompleted, call.CauseUserEnded)
	e.waitLegs(0) // our BYE ended both legs, each freed its slot
	if in.AgentID != callee.ID || in.FromNumber != out.FromNumber || in.ToNumber != "+15551230000" {
		t.Errorf("inbound record agent %s from %s to %s", in.AgentName, in.FromNumber, in.ToNumber)
	}
	tt.mu.Lock()
	if !tt.heard[model.Outbound] || !tt.heard[model.Inbound] {
		t.Errorf("tones heard: %v (want both directions)", tt.heard)
	}
	if tt.lines[model.Outbound] != "G722 16000" || tt.lines[model.Inbound] != "G722 16000" {
		t.Errorf("lines %v, want G722 at 16000 Hz both ways", tt.lines)
	}
	tt.mu.Unlock()

	// Each side's recording has the far end on the left and itself on the
	// right.
	for _, tc := range []struct {
		c                 model.Call
		farEnd, ourselves float64
	}{{ended, 440, 6000}, {in, 6000, 440}} {
		w := e.recordingOf(tc.c)
		if w.Rate != 16000 {
			t.Errorf("%s recording at %d Hz, want the line's 16000", tc.c.Direction, w.Rate)
		}
		if !hasTone(w.Channels[0], w.Rate, tc.farEnd) || !hasTone(w.Channels[1], w.Rate, tc.ourselves) {
			t.Errorf("%s recording: left %v Hz %v, right %v Hz %v", tc.c.Direction,
				tc.farEnd, hasTone(w.Channels[0], w.Rate, tc.farEnd), tc.ourselves, hasTone(w.Channels[1], w.Rate, tc.ourselves))
		}
	}
}

// hasTone reports whether freq dominates any 100 ms block of pcm.
func hasTone(pcm []int16, rate int, freq float64) bool {
	n := rate / 10
	for i := 0; i+n <= len(pcm); i += n / 2 {
		if audio.DetectTone(pcm[i:i+n], rate, freq) {
			return true
		}
	}
	return false
}

func TestLoopbackRefusesAnotherOrganizationsNumber(t *testing.T) {
	e := newEnv(t)
	other := model.Organization{Name: "globex", ConcurrencyLimit: 10, CreatedAt: model.Now(), UpdatedAt: model.Now()}
	e.write(func(tx storeTx) error { return tx.CreateOrg(e.ctx, &other) })
	theirs := model.Agent{OrgID: other.ID, Name: "Theirs", Status: model.AgentActive, Mode: model.ModeSinglePrompt,
		Config: model.AgentConfig{PromptTemplate: "x"}, CreatedAt: model.Now(), UpdatedAt: model.Now()}
	e.write(func(tx storeTx) error { return tx.CreateAgent(e.ctx, &theirs) })
	n := model.PhoneNumber{OrgID: other.ID, E164: "+15551239999", AgentID: &theirs.ID, CreatedAt: model.Now(), UpdatedAt: model.Now()}
	e.write(func(tx storeTx) error { return tx.CreatePhoneNumber(e.ctx, &n) })

	c := e.place(e.agent(withTrunk(e.trunk("").ID)), "+15551239999")
	ended := e.waitFinal(c.ID)
	wantEnd(t, ended, model.CallFailed, call.CauseSIPError)
	if deref(ended.ErrorMessage) != "SIP 404 Not Found" {
		t.Errorf("errorMessage %q", deref(ended.ErrorMessage))
	}
}

// Both legs of a loopback call live in this server with one Call-ID; each
// frees its own dialog slot. With room for two calls at once, 50 in a row
// connect only if no call leaves a slot behind.
func TestLoopbackCallsLeaveNoDialogSlotsBehind(t *testing.T) {
	// The caller hangs up as soon as the callee's side is up.
	up := make(chan struct{}, 1)
	hangUpAtOnce := convFunc(func(ctx context.Context, l *Live) {
		if l.Call.Direction == model.Inbound {
			up <- struct{}{}
			select {
			case <-l.Session.Done():
			case <-ctx.Done():
			}
			return
		}
		select {
		case <-up:
			l.End(call.CauseEndCallTool)
		case <-l.Session.Done():
		case <-ctx.Done():
		}
	})
	e := newEnvUA(t, sipua.Config{MaxDialogs: 4, MediaTimeout: 10 * time.Second},
		func(p *Phone, _ *callqueueOptions) { p.Conversation = hangUpAtOnce })
	caller := e.loopbackCaller()
	for i := range 50 {
		out := e.place(caller, "+15551230000")
		if c := e.waitFinal(out.ID); c.Status != model.CallCompleted {
			t.Fatalf("call %d ended %s/%s (%s) with %d dialog slots taken", i+1, c.Status,
				deref(c.HangupCause), deref(c.ErrorMessage), e.ua.Active())
		}
		e.waitLegs(0)
	}
	for _, c := range e.calls() {
		if c = e.waitFinal(c.ID); c.Status != model.CallCompleted {
			t.Errorf("%s call ended %s/%s", c.Direction, c.Status, deref(c.HangupCause))
		}
	}
}
