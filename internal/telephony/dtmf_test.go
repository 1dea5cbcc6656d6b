package telephony

import (
	"context"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/siptest"
)

// pressDigits sends its digits once answered, then waits for the far end.
type pressDigits struct {
	digits string
	errs   chan error
}

func (p pressDigits) Run(ctx context.Context, l *Live) call.Outcome {
	p.converse(ctx, l)
	return call.Outcome{}
}

func (p pressDigits) converse(ctx context.Context, l *Live) {
	time.Sleep(300 * time.Millisecond) // let the far end's media settle
	p.errs <- l.Session.SendDigits(ctx, p.digits)
	select {
	case <-l.Session.Done():
	case <-time.After(5 * time.Second):
		l.End(call.CauseEndCallTool)
	}
}

func TestAgentDigitsReachBaresip(t *testing.T) {
	siptest.RequireBaresip(t)
	conv := pressDigits{digits: "159#*0", errs: make(chan error, 1)}
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.Conversation = conv })
	phone := siptest.Baresip(t)
	phone.URI("+15557654321") // baresip answers only users it has accounts for
	c := e.place(e.agent(withTrunk(e.trunk(phone.Addr()).ID)), "+15557654321")
	if err := <-conv.errs; err != nil {
		t.Fatal(err)
	}
	var got []rune
	timeout := time.After(5 * time.Second)
	for len(got) < len(conv.digits) {
		select {
		case d := <-phone.Digits():
			got = append(got, d)
		case <-timeout:
			t.Fatalf("baresip heard %q of %q:\n%s", string(got), conv.digits, phone.Output())
		}
	}
	if string(got) != conv.digits {
		t.Errorf("baresip heard %q, want %q", string(got), conv.digits)
	}
	e.waitFinal(c.ID)
}

// collectDigits gathers the caller's keypad digits until the call ends.
type collectDigits struct{ got chan rune }

func (c collectDigits) Run(ctx context.Context, l *Live) call.Outcome {
	c.converse(ctx, l)
	return call.Outcome{}
}

func (c collectDigits) converse(ctx context.Context, l *Live) {
	for {
		select {
		case d := <-l.Session.Digits():
			c.got <- d
		case <-l.Session.Done():
			return
		case <-ctx.Done():
			return
		}
	}
}

func TestCallerDigitsReachTheAgent(t *testing.T) {
	siptest.RequireSipp(t)
	conv := collectDigits{got: make(chan rune, 16)}
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.Conversation = conv })
	a := e.agent()
	e.number("+15551230000", &a.ID, nil)
	uac := siptest.UAC(t, "uac_dtmf", e.ua.Addr(), siptest.Options{Service: "+15551230000",
		Keys: map[string]string{"from": "+15559870000", "digits": "42#", "hold": "1500"}})
	if err := uac.Wait(); err != nil {
		t.Fatal(err)
	}
	var got []rune
	timeout := time.After(3 * time.Second)
	for len(got) < 3 {
		select {
		case d := <-conv.got:
			got = append(got, d)
		case <-timeout:
			t.Fatalf("the agent heard %q, want 42#", string(got))
		}
	}
	if string(got) != "42#" {
		t.Errorf("the agent heard %q, want 42#", string(got))
	}
	wantEnd(t, e.waitFinal(e.calls()[0].ID), model.CallCompleted, call.CauseUserEnded)
}
