package telephony

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/siptest"
)

// transferOnAnswer transfers every call it runs to number at once.
type transferOnAnswer struct {
	number, mode string
	warm         WarmTransfer
	errs         chan error
}

func (c transferOnAnswer) Run(ctx context.Context, l *Live) call.Outcome {
	c.converse(ctx, l)
	return call.Outcome{}
}

func (c transferOnAnswer) converse(ctx context.Context, l *Live) {
	c.errs <- l.Transfer(ctx, c.number, c.mode, c.warm)
	select {
	case <-l.Session.Done():
	case <-ctx.Done():
	}
}

func transcriptTool(t *testing.T, c model.Call) (name string, args map[string]any, output string) {
	t.Helper()
	if len(c.Transcript) == 0 {
		t.Fatal("no transcript entry")
	}
	e := c.Transcript[len(c.Transcript)-1]
	tool, _ := e["tool"].(map[string]any)
	result, _ := e["result"].(map[string]any)
	if e["type"] != "tool_call" || e["role"] != "tool" || tool == nil || result == nil {
		t.Fatalf("entry %v", e)
	}
	_ = json.Unmarshal([]byte(tool["args"].(string)), &args)
	return tool["name"].(string), args, result["output"].(string)
}

func TestColdTransferByREFER(t *testing.T) {
	siptest.RequireSipp(t)
	conv := transferOnAnswer{number: "+15550009999", errs: make(chan error, 1)}
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.Conversation = conv })
	uas := siptest.UAS(t, "uas_refer", siptest.Options{Keys: map[string]string{"refer_to": "sip:+15550009999@{self}"}})
	c := e.place(e.agent(withTrunk(e.trunk(uas.Addr()).ID)), "+15557654321")
	if err := <-conv.errs; err != nil {
		t.Fatal(err)
	}
	ended := e.waitFinal(c.ID)
	wantEnd(t, ended, model.CallTransferred, call.CauseTransferred)
	if err := uas.Wait(); err != nil {
		t.Fatalf("the UAS did not see the REFER it expects: %v", err)
	}
	if !strings.Contains(uas.Messages(), "Refer-To: <sip:+15550009999@127.0.0.1") {
		t.Errorf("no Refer-To for the destination in:\n%s", uas.Messages())
	}
	e.waitLegs(0)
	name, args, out := transcriptTool(t, ended)
	if name != "transfer_to_number" || args["to_number"] != "+15550009999" || !strings.Contains(out, "REFER") {
		t.Errorf("tool entry %s %v %q", name, args, out)
	}
}

// toneSpeaker "says" text as a short 700 Hz beep: the destination can tell
// it was introduced.
type toneSpeaker struct{}

func (toneSpeaker) Say(ctx context.Context, s media.Session, text string) error {
	a := s.Audio(8000)
	_ = a.Write(audio.Tone(700, 8000, 300*time.Millisecond, 0.4))
	return a.Drain(ctx)
}

// endpoint is a test conversation per agent: the caller hums 1000 Hz; the
// destination listens for the introduction beep then for the caller's hum,
// and hums 440 Hz back.
type threeParty struct {
	callerID, agentID, destID string
	mu                        sync.Mutex
	destHeardIntro            bool
	destHeardCaller           bool
	callerHeardDest           bool
	transferErr               chan error
}

func (tp *threeParty) Run(ctx context.Context, l *Live) call.Outcome {
	tp.converse(ctx, l)
	return call.Outcome{}
}

func (tp *threeParty) converse(ctx context.Context, l *Live) {
	switch {
	case l.Agent.ID == tp.agentID:
		tp.transferErr <- l.Transfer(ctx, "+15550003333", TransferWarm, WarmTransfer{Summary: "The caller wants a refund.", Speaker: toneSpeaker{}})
	case l.Agent.ID == tp.callerID:
		a := l.Session.Audio(8000)
		// The caller talks until it hears the destination (then it flushes
		// the rest): on a loaded machine the transfer can take longer than
		// any fixed few seconds of speech.
		_ = a.Write(audio.Tone(1000, 8000, 60*time.Second, 0.4))
		for {
			f, err := a.Read(ctx)
			if err != nil {
				return
			}
			if audio.DetectTone(f, 8000, 440) {
				tp.mu.Lock()
				tp.callerHeardDest = true
				tp.mu.Unlock()
				time.Sleep(500 * time.Millisecond) // let the recordings take in the bridged audio
				a.Flush()
				l.End(call.CauseEndCallTool)
				return
			}
		}
	case l.Agent.ID == tp.destID:
		a := l.Session.Audio(8000)
		for {
			f, err := a.Read(ctx)
			if err != nil {
				return
			}
			tp.mu.Lock()
			if audio.DetectTone(f, 8000, 700) {
				tp.destHeardIntro = true
			}
			if tp.destHeardIntro && audio.DetectTone(f, 8000, 1000) && !tp.destHeardCaller {
				tp.destHeardCaller = true
				_ = a.Write(audio.Tone(440, 8000, 2*time.Second, 0.4))
			}
			tp.mu.Unlock()
		}
	}
	<-l.Session.Done()
}

func TestWarmTransferBetweenThreeEndpoints(t *testing.T) {
	tp := &threeParty{transferErr: make(chan error, 1)}
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.Conversation = tp })
	loop := e.trunk("")
	hold := "Please hold."
	intro := "I have a caller for you."
	yes := true
	agent := e.agent(withTrunk(loop.ID), func(a *model.Agent) {
		a.Name = "Agent"
		a.Config.WarmTransferConfig = &model.WarmTransferConfig{HoldMessage: &hold, IntroMessage: &intro, HoldMusicEnabled: &yes}
	})
	dest := e.agent(func(a *model.Agent) { a.Name = "Destination" })
	caller := e.agent(withTrunk(loop.ID), func(a *model.Agent) { a.Name = "Caller" })
	tp.callerID, tp.agentID, tp.destID = caller.ID, agent.ID, dest.ID
	e.number("+15550002222", &agent.ID, nil)
	e.number("+15550003333", &dest.ID, nil)

	out := e.place(caller, "+15550002222")
	if err := <-tp.transferErr; err != nil {
		t.Fatal(err)
	}
	wantEnd(t, e.waitFinal(out.ID), model.CallCompleted, call.CauseEndCallTool)
	tp.mu.Lock()
	if !tp.destHeardIntro || !tp.destHeardCaller || !tp.callerHeardDest {
		t.Errorf("intro heard %v, caller heard by destination %v, destination heard by caller %v",
			tp.destHeardIntro, tp.destHeardCaller, tp.callerHeardDest)
	}
	tp.mu.Unlock()
	for _, c := range e.calls() {
		c = e.waitFinal(c.ID)
		if c.AgentID == agent.ID {
			wantEnd(t, c, model.CallTransferred, call.CauseTransferred)
			name, args, out := transcriptTool(t, c)
			if name != "transfer_to_number" || args["to_number"] != "+15550003333" || args["mode"] != "warm" || !strings.Contains(out, "warm") {
				t.Errorf("tool entry %s %v %q", name, args, out)
			}
			// continueRecordingAfterTransfer (default on): after the bridge the
			// agent's recording has the caller (left) and the destination's
			// answer (right, what the caller hears).
			w := e.recordingOf(c)
			if !hasTone(w.Channels[0], w.Rate, 1000) || !hasTone(w.Channels[1], w.Rate, 440) {
				t.Errorf("the recording did not go on across the bridge")
			}
		}
	}
	// The caller's OUTBOUND call, the agent's INBOUND one (its transfer leg
	// is part of it) and the destination's INBOUND one.
	if n := len(e.calls()); n != 3 {
		t.Errorf("%d call records, want 3", n)
	}
	e.waitLegs(0) // four legs, two loopback calls sharing Call-IDs
}

// A far end that refuses REFER (diago answers 406) gets the destination
// bridged in by Parley instead.
func TestColdTransferBridgesWhenREFERIsRefused(t *testing.T) {
	conv := transferOnAnswer{number: "+15550009999", errs: make(chan error, 1)}
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.Conversation = conv })
	heard := make(chan bool, 1)
	pbx, err := sipua.New(sipua.Config{ListenAddr: "127.0.0.1:0", Logger: e.phone.Logger})
	if err != nil {
		t.Fatal(err)
	}
	err = pbx.Start(e.ctx, func(ctx context.Context, in *sipua.Incoming) {
		leg, err := in.Answer()
		if err != nil {
			return
		}
		a := leg.Audio(8000)
		switch in.User {
		case "+15557654321": // the customer: hums 1000 Hz until hung up (a loaded machine may take longer than a few seconds to bridge)
			_ = a.Write(audio.Tone(1000, 8000, 60*time.Second, 0.4))
		case "+15550009999": // the destination: listens for the customer
			got := false
			for !got {
				f, err := a.Read(ctx)
				if err != nil {
					break
				}
				got = audio.DetectTone(f, 8000, 1000)
			}
			heard <- got
			_ = leg.Hangup(ctx)
		}
		<-leg.Done()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pbx.Close() })

	c := e.place(e.agent(withTrunk(e.trunk(pbx.Addr()).ID)), "+15557654321")
	if err := <-conv.errs; err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-heard:
		if !got {
			t.Fatal("the destination never heard the customer")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the destination was not bridged to the customer")
	}
	ended := e.waitFinal(c.ID)
	wantEnd(t, ended, model.CallTransferred, call.CauseTransferred)
	if _, _, out := transcriptTool(t, ended); !strings.Contains(out, "bridging") {
		t.Errorf("tool output %q", out)
	}
	e.waitLegs(0)
	waitSlots(t, pbx, 0)
}
