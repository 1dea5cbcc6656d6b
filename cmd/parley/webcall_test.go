package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/media/webrtc/webrtctest"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

// espeakWAV is text spoken by espeak-ng into a WAV file, read back and
// resampled to rate: what a browser's fake microphone would play.
func espeakWAV(t *testing.T, text string, rate int) []int16 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "speech.wav")
	if out, err := exec.Command("espeak-ng", "-w", path, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := audio.ReadWAV(f)
	if err != nil {
		t.Fatal(err)
	}
	return audio.NewResampler(w.Rate, rate).Process(nil, w.Channels[0])
}

// Talking to an agent from a browser, offline: a WebRTC peer on loopback
// (the test's browser, speaking G.722) starts a web call through the API,
// hears the agent's greeting, says an espeak-ng sentence, and the agent
// (local speech, a fake model) answers and ends the call, which closes
// the browser's connection. The record is a complete inbound call from
// "web" with the agent's test variables, its transcript and a 16 kHz
// recording, and the browser heard the agent.
func TestWebCallTalksToTheAgentOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireLocalSpeech(t)
	reply := "Certainly, a table for two tonight is booked. Goodbye!"
	fake := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		if strings.HasPrefix(system, "Summarize") {
			return llmtest.Reply{Text: []string{"A caller booked a table."}}
		}
		if r.Messages[len(r.Messages)-1]["role"] == "tool" {
			return llmtest.Reply{}
		}
		return llmtest.Reply{Text: []string{reply}, ToolCalls: []llmtest.ToolCallReply{{ID: "call_end", Name: "end_call", Arguments: "{}"}}}
	})
	bin := build(t)
	srv := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30200-30299",
		"--llm-base-url", fake.URL, "--llm-api-key", "test-key", "--llm-model", "fake-model")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	agent := a.do("POST", "/agents", `{"name":"Front desk","promptTemplate":"You are the front desk of Luigi's, talking to {{guest}}.",
		"firstMessage":"Luigi's restaurant, how can I help you?","firstMessageMode":"static","endCallEnabled":true,
		"testVariables":{"guest":"a tester"}}`, 201)

	b := webrtctest.New(t, "PCMU", "G722")
	started := a.do("POST", "/agents/"+agent["id"].(string)+"/web-calls", fmt.Sprintf(`{"sdp":%q}`, b.Offer()), 201)
	c := started["call"].(map[string]any)
	id := c["id"].(string)
	if c["direction"] != "INBOUND" || c["fromNumber"] != "web" || c["toNumber"] != "agent-"+agent["id"].(string) {
		t.Errorf("web call %v -> %v (%v)", c["fromNumber"], c["toNumber"], c["direction"])
	}
	b.Accept(started["sdp"].(string))
	select {
	case <-b.Connected():
	case <-time.After(15 * time.Second):
		t.Fatalf("the browser did not connect:\n%s", srv.logs)
	}

	// The greeting first, then the caller speaks.
	eventually(t, "the greeting, said to the end", func() bool {
		heard := b.Heard()
		quiet := b.Rate() * 6 / 10 // 600 ms
		return speechIn(heard, b.Rate()) > time.Second && len(heard) > quiet && speechIn(heard[len(heard)-quiet:], b.Rate()) == 0
	})
	b.Play(espeakWAV(t, "Hello, I would like a table for two tonight please.", b.Rate()))

	select {
	case <-b.Ended():
	case <-time.After(120 * time.Second):
		t.Fatalf("the agent did not end the call: %v\n%s", a.do("GET", "/calls/"+id, "", 200), srv.logs)
	}
	var rec map[string]any
	eventually(t, "the call's end", func() bool {
		rec = a.do("GET", "/calls/"+id, "", 200)
		return rec["status"] == "COMPLETED"
	})
	if rec["hangupCause"] != "END_CALL_TOOL" || rec["recordingUrl"] == nil {
		t.Errorf("call ended %v with recording %v", rec["hangupCause"], rec["recordingUrl"])
	}
	if vars, _ := rec["variables"].(map[string]any); vars["guest"] != "a tester" || vars["user_number"] != "web" {
		t.Errorf("variables %v", rec["variables"])
	}
	checkTranscript(t, "agent", rec, []string{"assistant:Luigi's restaurant, how can I help you?", "user", "assistant:" + reply, "tool:end_call"})
	w := recording(t, a, id)
	if w.Rate != 16000 {
		t.Errorf("recording at %d Hz, want G.722's 16000", w.Rate)
	}
	if speechIn(w.Channels[0], w.Rate) < time.Second || speechIn(w.Channels[1], w.Rate) < 2*time.Second {
		t.Errorf("recording: %v of the caller, %v of the agent", speechIn(w.Channels[0], w.Rate), speechIn(w.Channels[1], w.Rate))
	}
	// The browser heard the greeting and the reply.
	if got := speechIn(b.Heard(), b.Rate()); got < 3*time.Second {
		t.Errorf("the browser heard %v of the agent", got)
	}
}

// speechIn is how much of pcm (at rate) is louder than silence, in 20 ms
// frames.
func speechIn(pcm []int16, rate int) time.Duration {
	n := rate / 50
	var d time.Duration
	for i := 0; i+n <= len(pcm); i += n {
		if audio.RMS(pcm[i:i+n]) > 0.01 {
			d += 20 * time.Millisecond
		}
	}
	return d
}
