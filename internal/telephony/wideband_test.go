package telephony

import (
	"context"
	"fmt"
	"strings"
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

// A caller offering PCMU first and G.722 too gets G.722 in Parley's answer
// (Parley answers in its own order of preference); one offering only G.711
// gets G.711, on a line at 8 kHz.
func TestInboundAnswerPrefersG722(t *testing.T) {
	siptest.RequireSipp(t)
	for _, tc := range []struct {
		formats, want, rtpmap, line string
	}{
		{"0 8 9 101", "9", "a=rtpmap:9 G722/8000", "G722 16000"},
		{"0 8 101", "0", "a=rtpmap:0 PCMU/8000", "PCMU 8000"},
	} {
		lines := make(chan string, 1)
		e := newEnv(t, func(p *Phone, _ *callqueueOptions) {
			p.Conversation = convFunc(func(ctx context.Context, l *Live) {
				codec := ""
				if c, ok := l.Session.(interface{ Codec() string }); ok {
					codec = c.Codec()
				}
				lines <- fmt.Sprintf("%s %d", codec, l.Rate)
				<-l.Session.Done()
			})
		})
		a := e.agent()
		e.number("+15551230000", &a.ID, nil)
		uac := siptest.UAC(t, "uac_call", e.ua.Addr(), siptest.Options{Service: "+15551230000",
			Keys: map[string]string{"from": "+15559870000", "formats": tc.formats, "hold": "500"}})
		if err := uac.Wait(); err != nil {
			t.Fatal(err)
		}
		if got := <-lines; got != tc.line {
			t.Errorf("offer %q: the conversation's line is %q, want %q", tc.formats, got, tc.line)
		}
		answer := answerSDP(uac.Messages())
		// The answer lists the formats both sides have, Parley's choice
		// first. diago writes G.722's rtpmap as "G722/8000/1" (one
		// channel, said explicitly), which RFC 4566 allows.
		if !strings.Contains(answer, " RTP/AVP "+tc.want+" ") || !strings.Contains(answer, tc.rtpmap) {
			t.Errorf("offer %q: Parley's answer does not put %s first with %q:\n%s", tc.formats, tc.want, tc.rtpmap, answer)
		}
	}
}

// answerSDP is the 200 to the INVITE in sipp's message log, from its
// status line.
func answerSDP(log string) string {
	i := strings.Index(log, "SIP/2.0 200")
	for i >= 0 && !strings.Contains(log[i:min(len(log), i+400)], "INVITE") {
		j := strings.Index(log[i+1:], "SIP/2.0 200")
		if j < 0 {
			return ""
		}
		i += 1 + j
	}
	if i < 0 {
		return ""
	}
	end := strings.Index(log[i:], "-----")
	if end < 0 {
		return log[i:]
	}
	return log[i : i+end]
}
