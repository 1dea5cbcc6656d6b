package pipeline

import (
	"context"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/pipeline/voicemail"
)

// Voicemail detection runs on outbound calls of agents with
// voicemailEnabled, from the answer until the detector's verdict
// (pipeline/voicemail: greeting shape, beep, phrases in the transcript;
// at most its 6 s window). The agent holds its greeting meanwhile, and
// what the far end says is transcribed for the detector (and the
// transcript) but not answered. A person: the conversation starts as
// usual. A machine: voicemailAction hangup ends the call
// VOICEMAIL_DETECTED at once; leave_message waits for the beep (or the
// end of a greeting without one), says voicemailMessage rendered with the
// call's variables, and then ends the call VOICEMAIL_DETECTED.

// leaveMessageWait bounds the wait for a machine's beep.
const leaveMessageWait = 30 * time.Second

// screening is voicemail detection under way.
type screening struct {
	d       *voicemail.Detector
	machine time.Time // when the machine verdict came (zero: none yet)
}

// newScreening starts detection when the agent asks for it on this call.
func newScreening(c model.Call, a model.AgentConfig, rate int) *screening {
	if c.Direction != model.Outbound || !on(a.VoicemailEnabled) {
		return nil
	}
	return &screening{d: voicemail.New(voicemail.Config{Rate: rate})}
}

// screen feeds one frame to the detector and acts on its state.
func (c *conversation) screen(ctx context.Context, pcm []int16) {
	c.onScreened(ctx, c.screening.d.Frame(pcm))
}

// onScreened acts on the detector's state.
func (c *conversation) onScreened(ctx context.Context, st voicemail.State) {
	s := c.screening
	switch st.Verdict {
	case voicemail.Undecided:
		return
	case voicemail.Human:
		c.e.log().Info("a person answered", "call_id", c.live.Call.ID, "reason", st.Reason)
		c.screening = nil
		c.greet(ctx)
		return
	}
	if s.machine.IsZero() {
		s.machine = c.e.now()
		c.e.log().Info("voicemail detected", "call_id", c.live.Call.ID, "reason", st.Reason)
		if c.listening != nil {
			c.listening.abandon()
			c.listening = nil
		}
		if deref(c.agent.VoicemailAction) != "leave_message" || strings.TrimSpace(deref(c.agent.VoicemailMessage)) == "" {
			c.endCause = call.CauseVoicemail
			return
		}
	}
	if st.AfterBeep || st.GreetingDone || c.e.now().Sub(s.machine) > leaveMessageWait {
		c.screening = nil
		c.closing = true
		msg := call.Render(*c.agent.VoicemailMessage, c.live.Call.Variables)
		c.speak(ctx, fixedLine{text: msg, endCause: call.CauseVoicemail})
	}
}

// screenText gives the detector what was recognised of the far end.
func (c *conversation) screenText(ctx context.Context, text string) {
	if c.screening == nil || c.closing {
		return
	}
	c.screening.d.Transcript(text)
	c.onScreened(ctx, c.screening.d.State())
}
