package telephony

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/siptest"
)

// listenFor reports the line the conversation ran on and whether it heard
// freq, then ends the call.
type listenFor struct {
	freq   float64
	report chan string
}

func (lf listenFor) Run(ctx context.Context, l *Live) call.Outcome {
	lf.converse(ctx, l)
	return call.Outcome{}
}

func (lf listenFor) converse(ctx context.Context, l *Live) {
	codec := ""
	if c, ok := l.Session.(interface{ Codec() string }); ok {
		codec = c.Codec()
	}
	a := l.Session.Audio(l.Rate)
	heard, frames := false, 0
	for deadline := time.Now().Add(5 * time.Second); !heard && time.Now().Before(deadline); frames++ {
		f, err := a.Read(ctx)
		if err != nil {
			break
		}
		heard = audio.DetectTone(f, l.Rate, lf.freq)
	}
	lf.report <- fmt.Sprintf("%s %d heard=%v", codec, l.Rate, heard)
	l.End(call.CauseEndCallTool)
}

// baresip with G.722 first answers Parley's call: they talk G.722, and the
// phone's 6 kHz tone, which G.711 cannot carry, reaches the agent at 16 kHz.
func TestBaresipTalksG722WithTheAgent(t *testing.T) {
	siptest.RequireBaresip(t)
	conv := listenFor{freq: siptest.BaresipG722Tone, report: make(chan string, 1)}
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.Conversation = conv })
	phone := siptest.BaresipG722(t)
	phone.URI("+15557654321")
	c := e.place(e.agent(withTrunk(e.trunk(phone.Addr()).ID)), "+15557654321")
	select {
	case got := <-conv.report:
		if got != "G722 16000 heard=true" {
			t.Errorf("line %q, want G722 at 16000 with baresip's %d Hz tone heard; baresip said:\n%s", got, siptest.BaresipG722Tone, phone.Output())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the call never reached the conversation; baresip said:\n%s", phone.Output())
	}
	e.waitFinal(c.ID)
}
