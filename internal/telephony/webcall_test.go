package telephony

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/media/webrtc"
	"github.com/parley-voice/parley/internal/media/webrtc/webrtctest"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// withWeb serves web calls on 127.0.0.1, conversing with conv.
func withWeb(t *testing.T, conv Conversation, mod ...func(*webrtc.Config)) envOption {
	cfg := webrtc.Config{Address: net.IPv4(127, 0, 0, 1), PortMin: 32000, PortMax: 32199}
	for _, m := range mod {
		m(&cfg)
	}
	w, err := webrtc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return func(p *Phone, _ *callqueueOptions) { p.Web, p.Conversation = w, conv }
}

// webCall starts a web call to a from a test browser offering codecs.
func (e *env) webCall(a model.Agent, codecs ...string) (*webrtctest.Browser, model.Call) {
	e.t.Helper()
	b := webrtctest.New(e.t, codecs...)
	c, answer, err := e.phone.WebCall(e.ctx, e.org.ID, a.ID, b.Offer())
	if err != nil {
		e.t.Fatal(err)
	}
	b.Accept(answer)
	return b, c
}

// A web call is an inbound call from "web" to the agent, with its test
// variables; the conversation runs at the codec's rate once the browser
// connects, hears it, speaks to it, and ends the call, which closes the
// browser's connection. The record is complete and the recording holds
// both sides at 16 kHz.
func TestWebCallTalksG722(t *testing.T) {
	said := make(chan string, 1)
	conv := convFunc(func(ctx context.Context, l *Live) {
		a := l.Session.Audio(l.Rate)
		heard := false
		for range 250 {
			f, err := a.Read(ctx)
			if err != nil {
				break
			}
			if heard = audio.DetectTone(f, l.Rate, 6000); heard {
				break
			}
		}
		_ = a.Write(audio.Tone(5000, l.Rate, time.Second, 0.3))
		_ = a.Drain(ctx)
		if heard {
			said <- "heard"
		} else {
			said <- "deaf"
		}
		l.End(call.CauseEndCallTool)
	})
	e := newEnv(t, withWeb(t, conv))
	agent := e.agent(func(a *model.Agent) {
		a.Config.TestVariables = map[string]any{"name": "Tester"}
		a.Config.DefaultVariables = map[string]any{"name": "Default", "plan": "gold"}
	})
	b, c := e.webCall(agent, "PCMU", "G722")
	if c.Direction != model.Inbound || c.FromNumber != call.WebCaller || c.ToNumber != "agent-"+agent.ID ||
		c.DialedAgentID == nil || *c.DialedAgentID != agent.ID || c.Status != model.CallInitiated {
		t.Fatalf("web call %s %s -> %s dialed %v, status %s", c.Direction, c.FromNumber, c.ToNumber, c.DialedAgentID, c.Status)
	}
	if c.Variables["name"] != "Tester" || c.Variables["plan"] != "gold" || c.Prompt != "Hello Tester" {
		t.Errorf("variables %v, prompt %q: want the test variables over the defaults", c.Variables, c.Prompt)
	}
	b.Play(audio.Tone(6000, 16000, 3*time.Second, 0.3))
	if got := <-said; got != "heard" {
		t.Fatal("the conversation did not hear the browser's 6 kHz tone")
	}
	wait(t, "the browser to be hung up on", b.Ended())
	got := e.waitFinal(c.ID)
	wantEnd(t, got, model.CallCompleted, call.CauseEndCallTool)
	if got.RecordingURL == nil || got.StartedAt == nil {
		t.Fatalf("record %+v lacks its recording or start", got)
	}
	w := e.recordingOf(got)
	if w.Rate != 16000 || len(w.Channels) != 2 {
		t.Fatalf("recording at %d Hz with %d channels, want 16000 and two", w.Rate, len(w.Channels))
	}
	if !toneIn(w.Channels[0], 16000, 6000) || !toneIn(w.Channels[1], 16000, 5000) {
		t.Error("the recording lacks the browser's 6 kHz tone or the agent's 5 kHz one")
	}
	if !toneIn(b.Heard(), 16000, 5000) {
		t.Error("the browser did not hear the agent's 5 kHz tone")
	}
}

func toneIn(pcm []int16, rate int, freq float64) bool {
	n := rate / 50
	for i := 0; i+n <= len(pcm); i += n {
		if audio.DetectTone(pcm[i:i+n], rate, freq) {
			return true
		}
	}
	return false
}

func wait(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(15 * time.Second):
		t.Fatalf("waited 15 s for %s", what)
	}
}

// A browser offering PCMU alone gets a line (and a recording) at 8 kHz;
// its hanging up ends the call COMPLETED/USER_ENDED.
func TestWebCallPCMUAndTheBrowserHangsUp(t *testing.T) {
	rates := make(chan int, 1)
	conv := convFunc(func(ctx context.Context, l *Live) {
		rates <- l.Rate
		<-l.Session.Done()
	})
	e := newEnv(t, withWeb(t, conv))
	b, c := e.webCall(e.agent(), "PCMU")
	if r := <-rates; r != 8000 {
		t.Errorf("line at %d Hz, want 8000", r)
	}
	wait(t, "the data channel", b.Open())
	b.Close()
	got := e.waitFinal(c.ID)
	wantEnd(t, got, model.CallCompleted, call.CauseUserEnded)
	if w := e.recordingOf(got); w.Rate != 8000 {
		t.Errorf("recording at %d Hz, want PCMU's 8000", w.Rate)
	}
}

// Web calls count against the organization's limit: at it, the next is
// refused with ErrConcurrencyLimit and nothing is stored.
func TestWebCallAtTheLimit(t *testing.T) {
	conv := convFunc(func(ctx context.Context, l *Live) { <-l.Session.Done() })
	e := newEnv(t, withWeb(t, conv))
	e.write(func(tx store.Tx) error {
		e.org.ConcurrencyLimit = 1
		return tx.UpdateOrg(e.ctx, &e.org)
	})
	a := e.agent()
	b, first := e.webCall(a, "G722")
	e.waitFor(first.ID, "IN_PROGRESS", func(c model.Call) bool { return c.Status == model.CallInProgress })
	second := webrtctest.New(t, "G722")
	_, _, err := e.phone.WebCall(e.ctx, e.org.ID, a.ID, second.Offer())
	if !errors.Is(err, callqueue.ErrConcurrencyLimit) {
		t.Fatalf("second web call: %v, want the concurrency limit", err)
	}
	if n := len(e.calls()); n != 1 {
		t.Errorf("%d calls stored, want the first alone", n)
	}
	wait(t, "the data channel", b.Open())
	b.Close()
	e.waitFinal(first.ID)
}

// Refusals before anything is stored: a bad offer names the sdp field, a
// disabled agent is a conflict, another organization's agent is not found.
func TestWebCallRefusals(t *testing.T) {
	e := newEnv(t, withWeb(t, Hold{}))
	a := e.agent()
	var bad *invalid.Error
	if _, _, err := e.phone.WebCall(e.ctx, e.org.ID, a.ID, "v=0\r\n"); !errors.As(err, &bad) || bad.Fields[0].Name != "sdp" {
		t.Errorf("bad offer: %v, want a validation error on sdp", err)
	}
	off := e.agent(func(a *model.Agent) { a.Status = model.AgentDisabled })
	var conflict *invalid.Conflict
	if _, _, err := e.phone.WebCall(e.ctx, e.org.ID, off.ID, webrtctest.New(t, "G722").Offer()); !errors.As(err, &conflict) {
		t.Errorf("disabled agent: %v, want a conflict", err)
	}
	if _, _, err := e.phone.WebCall(e.ctx, model.NewID(), a.ID, webrtctest.New(t, "G722").Offer()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another organization's agent: %v, want not found", err)
	}
	if n := len(e.calls()); n != 0 {
		t.Errorf("%d calls stored", n)
	}
}

// A browser that never connects (it never got the answer) leaves the call
// FAILED/WEBRTC_ERROR, never answered.
func TestWebCallBrowserNeverConnects(t *testing.T) {
	e := newEnv(t, withWeb(t, Hold{}, func(c *webrtc.Config) { c.ConnectTimeout = 500 * time.Millisecond }))
	b := webrtctest.New(t, "G722")
	c, _, err := e.phone.WebCall(e.ctx, e.org.ID, e.agent().ID, b.Offer())
	if err != nil {
		t.Fatal(err)
	}
	got := e.waitFinal(c.ID)
	wantEnd(t, got, model.CallFailed, call.CauseWebRTCError)
	if got.StartedAt != nil {
		t.Errorf("never-connected call has startedAt %v", got.StartedAt)
	}
}
