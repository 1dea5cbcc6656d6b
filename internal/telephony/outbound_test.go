package telephony

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/siptest"
)

func withTrunk(id string) func(*model.Agent) { return func(a *model.Agent) { a.SIPTrunkID = &id } }

func TestOutboundAnsweredThenTheyHangUp(t *testing.T) {
	siptest.RequireSipp(t)
	e := newEnv(t)
	uas := siptest.UAS(t, "uas_answer_bye", siptest.Options{Keys: map[string]string{"hold": "2000"}})
	tr := e.trunk(uas.Addr())
	a := e.agent(withTrunk(tr.ID))
	c := e.place(a, "+15557654321")
	ended := e.waitFinal(c.ID)
	wantEnd(t, ended, model.CallCompleted, call.CauseUserEnded)
	if err := uas.Wait(); err != nil {
		t.Fatal(err)
	}
	e.waitLegs(0) // the far end's BYE freed the dialog slot
	if ended.StartedAt == nil || ended.DurationSeconds == nil || *ended.DurationSeconds < 1 || *ended.DurationSeconds > 3 {
		t.Errorf("durationSeconds %v, want about 2", ended.DurationSeconds)
	}
	if ended.RecordingURL == nil || !strings.HasPrefix(*ended.RecordingURL, "http://parley.test/v1/calls/"+c.ID+"/recording?expires=") {
		t.Fatalf("recordingUrl %v", deref(ended.RecordingURL))
	}
	w := e.recordingOf(ended)
	if len(w.Channels) != 2 || w.Rate != 8000 {
		t.Fatalf("recording has %d channels at %d Hz, want stereo 8 kHz", len(w.Channels), w.Rate)
	}
	if d := w.Duration(); d < 1500*time.Millisecond || d > 3*time.Second {
		t.Errorf("recording lasts %v, want about 2 s", d)
	}
	// The UAS plays a 1 kHz tone: it is on the caller (left) channel only.
	if !audio.DetectTone(w.Channels[0][4000:12000], 8000, 1000) {
		t.Errorf("the caller's 1 kHz tone is not on the left channel")
	}
	if audio.RMS(w.Channels[1]) > 0.01 {
		t.Errorf("the agent channel is not silent (RMS %.3f)", audio.RMS(w.Channels[1]))
	}
	msgs := uas.Messages()
	for _, want := range []string{`From: <sip:+15550001000@`, `To: <sip:+15557654321@`} {
		if !strings.Contains(msgs, want) {
			t.Errorf("the INVITE lacks %q", want)
		}
	}
}

func TestOutboundCallerIDNameIsTheFromDisplayName(t *testing.T) {
	siptest.RequireSipp(t)
	e := newEnv(t)
	uas := siptest.UAS(t, "uas_answer_bye", siptest.Options{Keys: map[string]string{"hold": "200", "audio": "0"}})
	a := e.agent(withTrunk(e.trunk(uas.Addr()).ID))
	name := "Acme Dental"
	c := model.Call{
		ID: model.NewID(), OrgID: e.org.ID, AgentID: a.ID, AgentName: a.Name, SIPTrunkID: a.SIPTrunkID, AgentCallerIDName: &name,
		Direction: model.Outbound, FromNumber: "+15550001000", ToNumber: "+15557654321",
		Variables: map[string]any{}, Transcript: []map[string]any{}, Metrics: map[string]any{},
	}
	if err := e.q.Place(e.ctx, &c, false); err != nil {
		t.Fatal(err)
	}
	wantEnd(t, e.waitFinal(c.ID), model.CallCompleted, call.CauseUserEnded)
	if err := uas.Wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(uas.Messages(), `From: "Acme Dental" <sip:+15550001000@`) {
		t.Errorf("the INVITE's From has no display name:\n%s", uas.Messages())
	}
}

func TestOutboundDigestAuthentication(t *testing.T) {
	siptest.RequireSipp(t)
	for _, scenario := range []string{"uas_auth", "uas_auth401"} {
		t.Run(scenario, func(t *testing.T) {
			e := newEnv(t)
			uas := siptest.UAS(t, scenario, siptest.Options{Keys: map[string]string{"user": "parley", "pass": "s3cret", "hold": "300"}})
			tr := e.trunk(uas.Addr(), func(tr *model.SIPTrunk) {
				u := "parley"
				tr.Username, tr.Password = &u, e.phone.Box.Seal("s3cret")
			})
			c := e.place(e.agent(withTrunk(tr.ID)), "+15557654321")
			wantEnd(t, e.waitFinal(c.ID), model.CallCompleted, call.CauseUserEnded)
			if err := uas.Wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOutboundFailures(t *testing.T) {
	siptest.RequireSipp(t)
	for _, tc := range []struct {
		name, scenario string
		keys           map[string]string
		cause, message string
	}{
		{"busy", "uas_busy", nil, call.CauseBusy, "SIP 486 Busy Here"},
		{"server error", "uas_reject", map[string]string{"code": "503", "reason": "Service Unavailable"}, call.CauseSIPError, "SIP 503 Service Unavailable"},
		{"temporarily unavailable", "uas_reject", map[string]string{"code": "480", "reason": "Temporarily Unavailable"}, call.CauseNoAnswer, "SIP 480 Temporarily Unavailable"},
		{"ring timeout", "uas_ring_forever", nil, call.CauseNoAnswer, "no answer within the ring timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.RingTimeout = time.Second })
			uas := siptest.UAS(t, tc.scenario, siptest.Options{Keys: tc.keys})
			c := e.place(e.agent(withTrunk(e.trunk(uas.Addr()).ID)), "+15557654321")
			ended := e.waitFinal(c.ID)
			wantEnd(t, ended, model.CallFailed, tc.cause)
			if deref(ended.ErrorMessage) != tc.message {
				t.Errorf("errorMessage %q, want %q", deref(ended.ErrorMessage), tc.message)
			}
			if ended.RecordingURL != nil || ended.StartedAt != nil {
				t.Errorf("an unanswered call has recordingUrl %v, startedAt %v", deref(ended.RecordingURL), ended.StartedAt)
			}
			e.waitLegs(0)
			if err := uas.Wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOutboundCanceledWhileRinging(t *testing.T) {
	siptest.RequireSipp(t)
	e := newEnv(t)
	uas := siptest.UAS(t, "uas_ring_forever", siptest.Options{})
	c := e.place(e.agent(withTrunk(e.trunk(uas.Addr()).ID)), "+15557654321")
	// Wait until sipp has the INVITE (it answers 180 at once).
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(uas.Messages(), "180 Ringing") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := e.q.Cancel(e.ctx, e.org.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	wantEnd(t, e.waitFinal(c.ID), model.CallCanceled, call.CauseAPIEnded)
	if err := uas.Wait(); err != nil {
		t.Fatalf("sipp did not see the CANCEL: %v", err)
	}
	e.waitLegs(0)
}

func TestOutboundWithoutTrunk(t *testing.T) {
	e := newEnv(t)
	c := e.place(e.agent(), "+15557654321")
	ended := e.waitFinal(c.ID)
	wantEnd(t, ended, model.CallFailed, call.CauseDialFailed)
	if !strings.Contains(deref(ended.ErrorMessage), "no default trunk") {
		t.Errorf("errorMessage %q", deref(ended.ErrorMessage))
	}
}

func TestOutboundThroughTheDefaultTrunk(t *testing.T) {
	siptest.RequireSipp(t)
	uas := siptest.UAS(t, "uas_auth401", siptest.Options{Keys: map[string]string{"user": "op", "pass": "pw", "hold": "200"}})
	host, port := splitAddr(t, uas.Addr())
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) {
		p.DefaultTrunk = &Trunk{Host: host, Port: port, Transport: "udp", Username: "op", Password: "pw"}
	})
	c := e.place(e.agent(), "+15557654321") // no trunk of its own
	ended := e.waitFinal(c.ID)
	wantEnd(t, ended, model.CallCompleted, call.CauseUserEnded)
	if ended.SIPTrunkID != nil {
		t.Errorf("sipTrunkId %v, want null for the operator's trunk", *ended.SIPTrunkID)
	}
	if err := uas.Wait(); err != nil {
		t.Fatal(err)
	}
}

func splitAddr(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

func TestOutboundTLSTrunkNeedsTLSOn(t *testing.T) {
	e := newEnv(t)
	tr := e.trunk("127.0.0.1:5061", func(tr *model.SIPTrunk) { tr.Transport = model.TransportTLS })
	c := e.place(e.agent(withTrunk(tr.ID)), "+15557654321")
	ended := e.waitFinal(c.ID)
	wantEnd(t, ended, model.CallFailed, call.CauseDialFailed)
	if !strings.Contains(deref(ended.ErrorMessage), "--sip-tls-addr") {
		t.Errorf("errorMessage %q", deref(ended.ErrorMessage))
	}
}
