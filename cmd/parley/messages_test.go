package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/sms/twilio/twiliotest"
)

// An agent texts its caller during a loopback call (the send_message tool):
// the carrier gets the text for the caller's number, the message records
// the call, and the call's transcript the tool. When the caller texts
// back, the agent answers by SMS in the same thread, with the model
// seeing the text it sent during the call.
func TestAgentTextsTheCallerOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireLocalSpeech(t)
	const address = "Luigi's is at 12 Via Roma, open from 6 pm."
	fake := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		last := r.Messages[len(r.Messages)-1]
		switch {
		case strings.HasPrefix(system, "Summarize"):
			return llmtest.Reply{Text: []string{"The caller asked for the address by text."}}
		case strings.HasPrefix(system, "You are a customer"):
			return llmtest.Reply{Text: []string{"Could you text me your address please?"}}
		case strings.HasPrefix(system, "You text for Luigi's"):
			return llmtest.Reply{Text: []string{"You're welcome, see you tonight!"}}
		case last["role"] == "tool":
			return llmtest.Reply{Text: []string{"I have texted you our address."}}
		}
		for _, m := range r.Messages {
			if m["role"] == "tool" {
				return llmtest.Reply{Text: []string{"Anything else?"}}
			}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "call_sms", Name: "send_message",
			Arguments: fmt.Sprintf(`{"body":%q}`, address)}}}
	})
	carrier := twiliotest.New(t, twiliotest.Options{})

	bin := build(t)
	srv := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30300-30399",
		"--llm-base-url", fake.URL, "--llm-api-key", "k")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	conn := a.do("POST", "/messaging-connections", fmt.Sprintf(`{"provider":"twilio","accountSid":%q,"authToken":%q,
		"baseUrl":%q,"fromNumber":"+15551230001"}`, carrier.AccountSID, carrier.AuthToken, carrier.URL), 201)
	desk := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Front desk","promptTemplate":"You are the front desk of Luigi's.",
		"firstMessage":"Luigi's, hello.","messagingConnectionId":%q,
		"messagingConfig":{"sendMessageEnabled":true,"smsPrompt":"You text for Luigi's."}}`, conn["id"]), 201)
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Customer","promptTemplate":"You are a customer who wants the address.",
		"sipTrunkId":%q}`, trunk["id"]), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230001","agentId":%q}`, desk["id"]), 201)
	out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":"+15550001000","toNumber":"+15551230001"}`, caller["id"]), 201)

	start := time.Now()
	// The text goes out while the call is live.
	var sent map[string]any
	deadline := time.Now().Add(120 * time.Second)
	for sent == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no message was sent during the call: %v", a.do("GET", "/calls?pageSize=10", "", 200))
		}
		time.Sleep(300 * time.Millisecond)
		// Listed as soon as it is queued; the carrier's answer comes after.
		if l := a.do("GET", "/messages?direction=OUTBOUND", "", 200)["data"].([]any); len(l) > 0 && l[0].(map[string]any)["status"] != "queued" {
			sent = l[0].(map[string]any)
		}
	}
	t.Logf("%s: texted during the call", time.Since(start))
	a.do("POST", "/calls/"+out["id"].(string)+"/cancel", "", 200)
	if sent["status"] != "sent" || sent["body"] != address || sent["toNumber"] != "+15550001000" || sent["fromNumber"] != "+15551230001" ||
		sent["agentId"] != desk["id"] || sent["callId"] == nil {
		t.Fatalf("message %v", sent)
	}
	if got := carrier.Messages(); len(got) != 1 || got[0].Form.Get("To") != "+15550001000" || got[0].Form.Get("Body") != address ||
		!got[0].BasicAuth || got[0].User != carrier.AccountSID {
		t.Errorf("the carrier saw %+v", got)
	}
	callID := sent["callId"].(string)
	if byCall := a.do("GET", "/messages?callId="+callID, "", 200); byCall["total"] != float64(1) {
		t.Errorf("messages of the call: %v", byCall["total"])
	}
	var deskCall map[string]any
	deadline = time.Now().Add(30 * time.Second)
	for deskCall == nil || deskCall["endedAt"] == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the desk's call did not end: %v", deskCall)
		}
		time.Sleep(200 * time.Millisecond)
		deskCall = a.do("GET", "/calls/"+callID, "", 200)
	}
	if deskCall["agentId"] != desk["id"] || deskCall["direction"] != "INBOUND" {
		t.Errorf("the message's call is %v / %v", deskCall["agentName"], deskCall["direction"])
	}
	var tool map[string]any
	for _, e := range deskCall["transcript"].([]any) {
		if e := e.(map[string]any); e["type"] == "tool_call" {
			tool = e
		}
	}
	if tool == nil || tool["tool"].(map[string]any)["name"] != "send_message" || !strings.Contains(fmt.Sprint(tool["tool"]), "12 Via Roma") ||
		!strings.Contains(fmt.Sprint(tool["result"]), "sent to +15550001000") {
		t.Errorf("send_message entry %v in %v", tool, deskCall["transcript"])
	}

	t.Logf("%s: the call ended", time.Since(start))
	// The caller texts back; the agent answers in the same thread.
	org := a.do("GET", "/organization", "", 200)["id"].(string)
	inbound := "http://" + srv.addr + "/v1/messaging-connections/" + conn["id"].(string) + "/inbound?org=" + org
	if conn["inboundUrl"] != inbound {
		t.Errorf("the connection's inboundUrl is %v, want %s", conn["inboundUrl"], inbound)
	}
	if err := carrier.Inbound(context.Background(), inbound, "+15550001000", "+15551230001", "Thanks!"); err != nil {
		t.Fatal(err)
	}
	var reply map[string]any
	deadline = time.Now().Add(30 * time.Second)
	for reply == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no reply to the text: %v", a.do("GET", "/messages", "", 200))
		}
		time.Sleep(100 * time.Millisecond)
		if l := a.do("GET", "/messages?direction=OUTBOUND", "", 200)["data"].([]any); len(l) > 1 {
			reply = l[0].(map[string]any)
		}
	}
	if reply["body"] != "You're welcome, see you tonight!" || reply["conversationId"] != sent["conversationId"] || reply["callId"] != nil {
		t.Errorf("reply %v (thread of the call's text: %v)", reply, sent["conversationId"])
	}
	var history []string
	for _, r := range fake.Requests() {
		if s, _ := r.Messages[0]["content"].(string); strings.HasPrefix(s, "You text for Luigi's") {
			for _, m := range r.Messages[1:] {
				history = append(history, fmt.Sprintf("%s: %s", m["role"], m["content"]))
			}
		}
	}
	if want := []string{"assistant: " + address, "user: Thanks!"}; fmt.Sprint(history) != fmt.Sprint(want) {
		t.Errorf("the model saw %q, want %q", history, want)
	}
}

// SIGKILL while the agent is writing its reply to a text: the restarted
// server answers the text (the reply was owed, not lost).
func TestCrashKeepsInboundTexts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	var asked atomic.Int32
	fake := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		if asked.Add(1) == 1 {
			return llmtest.Reply{Hang: true} // the first server dies here
		}
		return llmtest.Reply{Text: []string{"Yes, we are open until 10."}}
	})
	carrier := twiliotest.New(t, twiliotest.Options{})
	bin := build(t)
	env := []string{"PARLEY_DATA_DIR=" + t.TempDir()}
	args := []string{"--llm-base-url", fake.URL, "--llm-api-key", "k"}
	s := startServer(t, bin, env, args...)
	key := s.key
	conn := s.must(key, 201, "POST", "/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": carrier.AccountSID,
		"authToken": carrier.AuthToken, "baseUrl": carrier.URL, "fromNumber": "+14155550100"})["data"].(map[string]any)
	s.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "Desk", "promptTemplate": "You are the desk.", "messagingConnectionId": conn["id"]})
	org := s.must(key, 200, "GET", "/v1/organization", nil)["data"].(map[string]any)["id"].(string)
	inbound := func(s *server) string {
		return "http://" + s.addr + "/v1/messaging-connections/" + conn["id"].(string) + "/inbound?org=" + org
	}
	if err := carrier.Inbound(context.Background(), inbound(s), "+14155550199", "+14155550100", "Are you open tonight?"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the model asked for the reply", func() bool { return asked.Load() == 1 })
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.cmd.Wait()

	s = startServer(t, bin, env, args...)
	var reply map[string]any
	eventually(t, "the reply after the restart", func() bool {
		l := s.must(key, 200, "GET", "/v1/messages?direction=OUTBOUND", nil)["data"].([]any)
		if len(l) > 0 {
			reply = l[0].(map[string]any)
		}
		// Recorded queued first, then sent: wait for the carrier's answer.
		return reply != nil && reply["status"] != "queued"
	})
	in := s.must(key, 200, "GET", "/v1/messages?direction=INBOUND", nil)["data"].([]any)
	if len(in) != 1 || reply["body"] != "Yes, we are open until 10." || reply["status"] != "sent" || reply["toNumber"] != "+14155550199" ||
		reply["conversationId"] != in[0].(map[string]any)["conversationId"] || in[0].(map[string]any)["errorMessage"] != nil {
		t.Errorf("reply %v to %v", reply, in)
	}
	if sent := carrier.Messages(); len(sent) != 1 {
		t.Errorf("the carrier was asked %d times", len(sent))
	}
}
