package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/sms/twilio"
	"github.com/parley-voice/parley/internal/sms/twilio/twiliotest"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// inboundBench is an API with a carrier, a model and the webhook sender
// wired as serve wires them, and one connection.
type inboundBench struct {
	*env
	carrier *twiliotest.Server
	model   *llmtest.Server
	conn    map[string]any
	url     string // the connection's inbound webhook URL
	metrics *prometheus.Registry
}

func newInboundBench(t testing.TB, reply string, opts ...envOption) *inboundBench {
	b := &inboundBench{env: newEnv(t, opts...), carrier: twiliotest.New(t, twiliotest.Options{})}
	b.model = llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{reply}} })
	m := b.server.Messages
	m.PublicURL = b.srv.URL
	m.LLM = openai.New(openai.Config{BaseURL: b.model.URL, APIKey: "k", Model: "m"})
	m.Webhooks = webhook.New(webhook.Options{AllowPrivate: true})
	m.Secret = b.server.Orgs.WebhookSecret
	b.metrics = prometheus.NewRegistry()
	m.Metrics = sms.NewMetrics(b.metrics)
	b.conn = b.create("/v1/messaging-connections", map[string]any{"provider": "twilio", "accountSid": b.carrier.AccountSID,
		"authToken": b.carrier.AuthToken, "fromNumber": "+14155550100", "baseUrl": b.carrier.URL})
	org := b.must(http.StatusOK, "GET", "/v1/organization", nil).Data(t)["id"].(string)
	b.url = b.srv.URL + "/v1/messaging-connections/" + b.conn["id"].(string) + "/inbound?org=" + org
	if b.conn["inboundUrl"] != b.url {
		t.Fatalf("the connection's inboundUrl is %v, want %s", b.conn["inboundUrl"], b.url)
	}
	return b
}

// text has the carrier deliver an inbound message and waits until it has
// been forwarded and answered.
func (b *inboundBench) text(from, to, body string) {
	b.t.Helper()
	if err := b.carrier.Inbound(context.Background(), b.url, from, to, body); err != nil {
		b.t.Fatal(err)
	}
	b.server.Messages.Wait()
}

// messages lists the organization's messages in a direction, oldest first.
func (b *inboundBench) messages(direction string) []map[string]any {
	l := b.must(http.StatusOK, "GET", "/v1/messages?pageSize=100&direction="+direction, nil).List(b.t)
	for i, j := 0, len(l)-1; i < j; i, j = i+1, j-1 {
		l[i], l[j] = l[j], l[i]
	}
	return l
}

// counted is the value of a messaging counter with the given labels.
func (b *inboundBench) counted(name string, labels ...string) float64 {
	b.t.Helper()
	families, err := b.metrics.Gather()
	if err != nil {
		b.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for i, l := range m.GetLabel() {
				if l.GetValue() != labels[i] {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// roles is a model request's messages as "role: content" (the system
// prompt by its first line).
func roles(r llmtest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		c := fmt.Sprint(m["content"])
		if m["role"] == "system" {
			c, _, _ = strings.Cut(c, "\n")
		}
		out = append(out, fmt.Sprintf("%s: %s", m["role"], c))
	}
	return out
}

// A text to an agent's number is recorded INBOUND and answered by the
// model from the agent's SMS prompt and the thread, through the carrier,
// from the number texted; the thread continues, and starts over after
// conversationIdleResetDays of silence.
func TestInboundMessageIsAnswered(t *testing.T) {
	b := newInboundBench(t, "We open at 9.")
	a := b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"],
		"messagingConfig": map[string]any{"smsPrompt": "You answer texts for Luigi's ({{agent_number}})."}})

	b.text("+14155550199", "+14155550100", "When do you open?")
	in, out := b.messages("INBOUND"), b.messages("OUTBOUND")
	if len(in) != 1 || len(out) != 1 {
		t.Fatalf("%d inbound, %d outbound", len(in), len(out))
	}
	if m := in[0]; m["status"] != "received" || m["agentId"] != a["id"] || m["fromNumber"] != "+14155550199" ||
		m["toNumber"] != "+14155550100" || m["body"] != "When do you open?" || !strings.HasPrefix(fmt.Sprint(m["providerMessageId"]), "SM") ||
		m["messagingConnectionId"] != b.conn["id"] || m["errorMessage"] != nil {
		t.Errorf("inbound = %v", m)
	}
	thread := in[0]["conversationId"]
	if r := out[0]; r["body"] != "We open at 9." || r["generatedByLlm"] != true || r["status"] != "sent" || r["fromNumber"] != "+14155550100" ||
		r["toNumber"] != "+14155550199" || r["conversationId"] != thread || r["agentId"] != a["id"] {
		t.Errorf("reply = %v", r)
	}
	if sent := b.carrier.Messages(); len(sent) != 1 || sent[0].Form.Get("Body") != "We open at 9." || sent[0].Form.Get("To") != "+14155550199" {
		t.Errorf("carrier saw %+v", sent)
	}
	want := []string{"system: You answer texts for Luigi's (+14155550100).", "user: When do you open?"}
	if got := roles(b.model.Requests()[0]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("model saw %q, want %q", got, want)
	}

	// The reply goes on in the same thread, with its history.
	b.text("+14155550199", "+14155550100", "And on Sunday?")
	want = []string{want[0], "user: When do you open?", "assistant: We open at 9.", "user: And on Sunday?"}
	if got := roles(b.model.Requests()[1]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("second turn: model saw %q, want %q", got, want)
	}
	for _, m := range append(b.messages("INBOUND"), b.messages("OUTBOUND")...) {
		if m["conversationId"] != thread {
			t.Errorf("%s left the thread: %v", m["body"], m["conversationId"])
		}
	}

	// A thread silent for longer than conversationIdleResetDays starts
	// over: a new conversationId, and the model sees none of the old one.
	b.must(http.StatusOK, "PATCH", "/v1/agents/"+a["id"].(string), map[string]any{
		"messagingConfig": map[string]any{"smsPrompt": "You answer texts for Luigi's ({{agent_number}}).", "conversationIdleResetDays": 2}})
	old := time.Now().Add(-3 * 24 * time.Hour)
	agentID, agentName, connID := a["id"].(string), a["name"].(string), b.conn["id"].(string)
	err := b.store.Update(context.Background(), func(tx store.Tx) error {
		for i, body := range []string{"Do you have gluten-free pasta?", "We do."} {
			m := model.Message{ID: model.NewMessageID(), OrgID: b.orgID(), AgentID: &agentID, AgentName: &agentName,
				MessagingConnectionID: &connID, ConversationID: "conv_old", Channel: model.ChannelSMS, Direction: model.Inbound,
				FromNumber: "+14155550198", ToNumber: "+14155550100", Body: body, Status: model.MessageReceived,
				CreatedAt: old.Add(time.Duration(i) * time.Minute), UpdatedAt: old}
			if i == 1 {
				m.Direction, m.FromNumber, m.ToNumber, m.Status = model.Outbound, m.ToNumber, m.FromNumber, model.MessageDelivered
			}
			if err := tx.CreateMessage(context.Background(), &m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b.text("+14155550198", "+14155550100", "Is the terrace open?")
	in = b.messages("INBOUND")
	if last := in[len(in)-1]; last["conversationId"] == "conv_old" || last["conversationId"] == thread {
		t.Errorf("after 3 silent days the thread did not start over: %v", last["conversationId"])
	}
	want = []string{want[0], "user: Is the terrace open?"}
	if got := roles(b.model.Requests()[2]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the reset: model saw %q, want %q", got, want)
	}
	// Within the window the old thread would have gone on.
	b.must(http.StatusOK, "PATCH", "/v1/agents/"+a["id"].(string), map[string]any{
		"messagingConfig": map[string]any{"conversationIdleResetDays": 30}})
	b.text("+14155550198", "+14155550100", "Thanks!")
	in = b.messages("INBOUND")
	if in[len(in)-1]["conversationId"] != in[len(in)-2]["conversationId"] {
		t.Errorf("a 30-day window started a new thread")
	}
}

func (e *env) orgID() string {
	return e.must(http.StatusOK, "GET", "/v1/organization", nil).Data(e.t)["id"].(string)
}

// The carrier's inbound webhook is refused unsigned, wrongly signed, for
// another organization, and without its fields; a retry is recorded once;
// a number no agent owns is recorded and not answered.
func TestInboundMessageWebhook(t *testing.T) {
	b := newInboundBench(t, "Hello!")
	b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"]})
	ctx := context.Background()

	forger := twiliotest.New(t, twiliotest.Options{AccountSID: b.carrier.AccountSID, AuthToken: "not-the-token"})
	if err := forger.Inbound(ctx, b.url, "+14155550199", "+14155550100", "hi"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("forged: %v", err)
	}
	resp, err := http.PostForm(b.url, url.Values{"MessageSid": {"SM1"}, "From": {"+14155550199"}, "To": {"+14155550100"}, "Body": {"hi"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned: %d", resp.StatusCode)
	}
	other := strings.Replace(b.url, "org=", "org=0"+model.NewID()[1:]+"&x=", 1)
	if err := b.carrier.Inbound(ctx, other, "+14155550199", "+14155550100", "hi"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("another organization: %v", err)
	}
	if err := b.carrier.Post(ctx, b.url, url.Values{"MessageSid": {"SM1"}, "To": {"+14155550100"}}); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("no From: %v", err)
	}
	if n := len(b.messages("INBOUND")); n != 0 {
		t.Fatalf("%d refused webhooks were recorded", n)
	}

	// The TwiML answer, and a retry of the same MessageSid.
	form := url.Values{"MessageSid": {twiliotest.NewSID("SM")}, "From": {"+14155550199"}, "To": {"+14155550100"}, "Body": {"hi"}}
	for range 2 {
		if err := b.carrier.Post(ctx, b.url, form); err != nil {
			t.Fatal(err)
		}
	}
	b.server.Messages.Wait()
	if in, out := b.messages("INBOUND"), b.messages("OUTBOUND"); len(in) != 1 || len(out) != 1 {
		t.Errorf("a retried message: %d recorded, %d replies", len(in), len(out))
	}
	req, _ := http.NewRequest("POST", b.url, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", twilio.Sign(b.carrier.AuthToken, b.url, form))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	twiml, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/xml") || !strings.Contains(string(twiml), "<Response></Response>") {
		t.Errorf("answer %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), twiml)
	}

	// No agent owns the number: recorded, not answered.
	b.text("+14155550199", "+14155550177", "wrong number?")
	in := b.messages("INBOUND")
	if last := in[len(in)-1]; last["agentId"] != nil || last["toNumber"] != "+14155550177" || len(b.messages("OUTBOUND")) != 1 {
		t.Errorf("unowned number: %v; %d replies", last, len(b.messages("OUTBOUND")))
	}
}

// Which agent a text reaches: the phone number's, then the one whose
// messagingConfig.fromNumber it is, then the connection's only agent.
func TestInboundMessageRouting(t *testing.T) {
	b := newInboundBench(t, "Hi.")
	byNumber := b.createAgent(map[string]any{"name": "Numbered", "messagingConnectionId": b.conn["id"]})
	b.create("/v1/phone-numbers", map[string]any{"e164": "+14155550122", "agentId": byNumber["id"]})
	byConfig := b.createAgent(map[string]any{"name": "Configured", "messagingConnectionId": b.conn["id"],
		"messagingConfig": map[string]any{"fromNumber": "+14155550133"}})
	b.text("+14155550199", "+14155550122", "one")
	b.text("+14155550199", "+14155550133", "two")
	// Two agents use the connection: its own number is nobody's.
	b.text("+14155550199", "+14155550100", "three")
	in := b.messages("INBOUND")
	if in[0]["agentId"] != byNumber["id"] || in[1]["agentId"] != byConfig["id"] || in[2]["agentId"] != nil {
		t.Errorf("routed to %v, %v, %v", in[0]["agentName"], in[1]["agentName"], in[2]["agentName"])
	}
	out := b.messages("OUTBOUND")
	if len(out) != 2 || out[0]["fromNumber"] != "+14155550122" || out[1]["fromNumber"] != "+14155550133" {
		t.Errorf("replies %v", out)
	}
	b.must(http.StatusNoContent, "DELETE", "/v1/agents/"+byConfig["id"].(string), nil)
	b.text("+14155550199", "+14155550100", "four")
	if in = b.messages("INBOUND"); in[3]["agentId"] != byNumber["id"] {
		t.Errorf("the connection's only agent did not take its number: %v", in[3]["agentName"])
	}
	// A deleted agent's number is nobody's.
	b.text("+14155550199", "+14155550133", "six")
	if in = b.messages("INBOUND"); in[4]["agentId"] != nil {
		t.Errorf("a deleted agent's number reached %v", in[4]["agentName"])
	}
}

// receiver is a customer's inboundWebhookUrl: it records deliveries and
// answers with answer.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func() (int, string)
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{answer: func() (int, string) { return 200, "" }}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), body})
		code, answer := r.answer()
		r.mu.Unlock()
		w.WriteHeader(code)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) set(code int, answer string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = func() (int, string) { return code, answer }
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// An agent with an inboundWebhookUrl forwards each inbound message, signed
// (event inbound_message, the message and its thread); the receiver's
// answer decides the reply: autoReply false takes the thread over, reply
// is sent as is, and a failing receiver leaves the agent to answer.
func TestInboundMessageForwarding(t *testing.T) {
	b := newInboundBench(t, "Let me check.")
	hook := newReceiver(t)
	a := b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"], "messagingConfig": map[string]any{
		"inboundWebhookUrl": hook.URL + "/sms?src=parley", "fromNumber": "+14155550100"}})
	secret := b.must(http.StatusCreated, "POST", "/v1/organization/webhook-secret", nil).Data(t)["secret"].(string)

	// Taken over: forwarded, nothing sent.
	hook.set(200, `{"autoReply": false}`)
	b.text("+14155550199", "+14155550100", "I want to talk to a person.")
	got := hook.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d deliveries", len(got))
	}
	d := got[0]
	if d.header.Get("X-Parley-Event") != "inbound_message" || d.header.Get("Content-Type") != "application/json" ||
		d.header.Get("User-Agent") != "Parley-Webhook/1" || d.header.Get("X-Parley-Delivery") == "" {
		t.Errorf("headers %v", d.header)
	}
	if err := webhook.Verify(secret, d.header.Get("X-Parley-Signature"), d.body, time.Now(), time.Minute); err != nil {
		t.Errorf("signature: %v", err)
	}
	var p struct {
		Event, AgentID, ConversationID string
		Message                        map[string]any
		Conversation                   []map[string]any
	}
	if err := json.Unmarshal(d.body, &p); err != nil {
		t.Fatal(err)
	}
	in := b.messages("INBOUND")
	if p.Event != "inbound_message" || p.AgentID != a["id"] || p.ConversationID != in[0]["conversationId"] ||
		p.Message["id"] != in[0]["id"] || p.Message["body"] != "I want to talk to a person." || len(p.Conversation) != 1 ||
		p.Conversation[0]["id"] != in[0]["id"] {
		t.Errorf("payload %s", d.body)
	}
	if n := len(b.messages("OUTBOUND")); n != 0 || len(b.model.Requests()) != 0 {
		t.Errorf("taken over, yet %d sent and %d model requests", n, len(b.model.Requests()))
	}
	// The customer answers through the API, in the same thread.
	b.create("/v1/messages", map[string]any{"to": "+14155550199", "agentId": a["id"], "body": "This is Maria, how can I help?"})

	// The receiver writes the reply.
	hook.set(200, `{"reply": "Maria will call you back today."}`)
	b.text("+14155550199", "+14155550100", "Can she call me?")
	out := b.messages("OUTBOUND")
	if len(out) != 2 || out[1]["body"] != "Maria will call you back today." || out[1]["generatedByLlm"] != false ||
		out[1]["conversationId"] != in[0]["conversationId"] {
		t.Errorf("the receiver's reply: %v", out)
	}
	if d := hook.deliveries()[1]; !strings.Contains(string(d.body), "This is Maria") {
		t.Errorf("the second delivery lacks the thread: %s", d.body)
	}

	// A plain acknowledgement, and a failing receiver: the agent answers.
	hook.set(200, "ok")
	b.text("+14155550199", "+14155550100", "Thanks.")
	hook.set(500, "")
	b.text("+14155550199", "+14155550100", "Still there?")
	out = b.messages("OUTBOUND")
	if len(out) != 4 || out[2]["body"] != "Let me check." || out[3]["body"] != "Let me check." || out[3]["generatedByLlm"] != true {
		t.Errorf("the agent's own replies: %v", out)
	}
	// The model saw the whole thread, the customer's own messages as the
	// agent's.
	reqs := b.model.Requests()
	want := []string{"user: I want to talk to a person.", "assistant: This is Maria, how can I help?", "user: Can she call me?",
		"assistant: Maria will call you back today.", "user: Thanks.", "assistant: Let me check.", "user: Still there?"}
	if got := roles(reqs[len(reqs)-1])[1:]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("model saw %q\nwant %q", got, want)
	}

	// A reply the receiver writes out of bounds is not sent; the inbound
	// message says why.
	hook.set(200, `{"reply": ""}`)
	b.text("+14155550199", "+14155550100", "Hello?")
	in = b.messages("INBOUND")
	if last := in[len(in)-1]; !strings.Contains(fmt.Sprint(last["errorMessage"]), "not answered") || len(b.messages("OUTBOUND")) != 4 {
		t.Errorf("an empty reply: %v", last)
	}
	// What an operator sees: 5 texts in, 5 messages out (the customer's
	// own through the API among them), and how each text was dealt with.
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"parley_messages_total", []string{"inbound", "received"}, 5},
		{"parley_messages_total", []string{"outbound", "sent"}, 4},
		{"parley_message_replies_total", []string{"taken_over"}, 1},
		{"parley_message_replies_total", []string{"answered"}, 3},
		{"parley_message_replies_total", []string{"not_answered"}, 1},
	} {
		if got := b.counted(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// Two agents texting each other would loop; the per-recipient cap stops
// the replies, and the inbound message says so.
func TestInboundRepliesAreCapped(t *testing.T) {
	b := newInboundBench(t, "Sure!")
	b.server.Messages.RecipientPerHour = 2
	b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"]})
	for range 3 {
		b.text("+14155550199", "+14155550100", "ping")
	}
	in, out := b.messages("INBOUND"), b.messages("OUTBOUND")
	if len(out) != 2 || in[2]["errorMessage"] == nil || !strings.Contains(in[2]["errorMessage"].(string), "an hour") {
		t.Errorf("%d replies; the third inbound: %v", len(out), in[2]["errorMessage"])
	}
}

// A disabled agent refuses calls; it does not answer texts either, though
// they are recorded (and forwarded) as its own.
func TestDisabledAgentDoesNotAnswerTexts(t *testing.T) {
	b := newInboundBench(t, "Hi!")
	a := b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"], "status": "disabled"})
	b.text("+14155550199", "+14155550100", "hello?")
	in := b.messages("INBOUND")
	if len(in) != 1 || in[0]["agentId"] != a["id"] || in[0]["errorMessage"] != "not answered: the agent is disabled" ||
		len(b.messages("OUTBOUND")) != 0 || len(b.model.Requests()) != 0 {
		t.Errorf("inbound %v; %d replies", in, len(b.messages("OUTBOUND")))
	}
}

// Whatever a correctly signed inbound webhook carries, the answer is 200
// (recorded) or 400 (a field missing or too long), never a server error.
func FuzzInboundWebhook(f *testing.F) {
	f.Add("MessageSid=SM1&From=%2B14155550199&To=%2B14155550100&Body=hi")
	f.Add("MessageSid=SM2&From=%2B1&To=%2B14155550100&Body=%00%ff%fe")
	f.Add("From=&To=&MessageSid=" + strings.Repeat("x", 70))
	f.Add("%zz=1&MessageSid")
	f.Add(strings.Repeat("Body=é&", 300) + "MessageSid=SM3&From=a&To=b")
	b := newInboundBench(f, "ok")
	f.Fuzz(func(t *testing.T, body string) {
		form, err := url.ParseQuery(body)
		if err != nil {
			return // the carrier signs a form it could parse
		}
		req, _ := http.NewRequest("POST", b.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(twilio.SignatureHeader, twilio.Sign(b.carrier.AuthToken, b.url, form))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%q: %d %s", body, resp.StatusCode, raw)
		}
		b.server.Messages.Wait()
	})
}

// A carrier's retry racing the first delivery: one record, one reply.
func TestConcurrentInboundRetries(t *testing.T) {
	b := newInboundBench(t, "Hi!")
	b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"]})
	form := url.Values{"MessageSid": {twiliotest.NewSID("SM")}, "From": {"+14155550199"}, "To": {"+14155550100"}, "Body": {"hi"}}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- b.carrier.Post(context.Background(), b.url, form) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	b.server.Messages.Wait()
	if in, out := b.messages("INBOUND"), b.messages("OUTBOUND"); len(in) != 1 || len(out) != 1 {
		t.Errorf("%d recorded, %d replies", len(in), len(out))
	}
}

// A server that stops after recording a text and before answering it
// leaves the reply owed; the next server's sweep takes it over once its
// lease has run out, unless it has been answered since, the text is over
// an hour old, or its agent is gone.
func TestOwedRepliesAreTakenOver(t *testing.T) {
	b := newInboundBench(t, "Sorry for the wait!")
	a := b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"], "messagingConfig": map[string]any{"fromNumber": "+14155550100"}})
	gone := b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"], "messagingConfig": map[string]any{"fromNumber": "+14155550144"}})
	stopped := b.server.Messages
	stopped.Close() // records texts, answers none: a server on its way down
	b.text("+14155550199", "+14155550100", "Are you open?")
	b.text("+14155550198", "+14155550100", "Hello?")
	b.text("+14155550197", "+14155550144", "Anyone?")
	b.must(http.StatusNoContent, "DELETE", "/v1/agents/"+gone["id"].(string), nil)
	// The customer answered one of them through the API meanwhile.
	b.create("/v1/messages", map[string]any{"to": "+14155550198", "agentId": a["id"], "body": "Yes, how can I help?"})
	if n := len(b.messages("OUTBOUND")); n != 1 {
		t.Fatalf("%d replies before the sweep", n)
	}

	next := &sms.Messages{Store: stopped.Store, Box: stopped.Box, LLM: stopped.LLM, PublicURL: stopped.PublicURL,
		Webhooks: stopped.Webhooks, Secret: stopped.Secret}
	defer next.Close()
	ctx := context.Background()
	if n, err := next.Sweep(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("swept %d (%v) while the leases run", n, err)
	}
	if n, err := next.Sweep(ctx, time.Now().Add(3*time.Minute)); err != nil || n != 3 {
		t.Fatalf("swept %d (%v) after the leases, want 3", n, err)
	}
	next.Wait()
	out := b.messages("OUTBOUND")
	if len(out) != 2 || out[1]["toNumber"] != "+14155550199" || out[1]["body"] != "Sorry for the wait!" {
		t.Fatalf("replies after the sweep: %v", out)
	}
	in := map[string]map[string]any{}
	for _, m := range b.messages("INBOUND") {
		in[m["fromNumber"].(string)] = m
	}
	if out[1]["conversationId"] != in["+14155550199"]["conversationId"] || in["+14155550199"]["errorMessage"] != nil ||
		in["+14155550198"]["errorMessage"] != nil || in["+14155550197"]["errorMessage"] != "not answered: the agent was deleted" {
		t.Errorf("inbound after the sweep: %v", in)
	}
	if n, err := next.Sweep(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("a second sweep took %d (%v)", n, err)
	}

	// Over an hour late: settled, unanswered, saying why.
	b.text("+14155550196", "+14155550100", "Open on Monday?")
	if n, _ := next.Sweep(ctx, time.Now().Add(2*time.Hour)); n != 1 {
		t.Fatalf("swept %d", n)
	}
	next.Wait()
	for _, m := range b.messages("INBOUND") {
		if m["fromNumber"] == "+14155550196" && !strings.Contains(fmt.Sprint(m["errorMessage"]), "over an hour old") {
			t.Errorf("a stale text: %v", m["errorMessage"])
		}
	}
	if n := len(b.messages("OUTBOUND")); n != 2 {
		t.Errorf("%d replies", n)
	}
}

// Carrier keywords (STOP, HELP, ...) are recorded and forwarded but not
// answered. An opt-out stops every text to the number through the
// connection, replies and POST /messages alike (recorded failed, the
// carrier never asked), until the number texts START.
func TestCarrierKeywordsAndOptOuts(t *testing.T) {
	b := newInboundBench(t, "Sure!")
	a := b.createAgent(map[string]any{"messagingConnectionId": b.conn["id"], "messagingConfig": map[string]any{"fromNumber": "+14155550100"}})
	b.text("+14155550199", "+14155550100", "Help")
	b.text("+14155550199", "+14155550100", "What time is it?")
	if out := b.messages("OUTBOUND"); len(out) != 1 || out[0]["status"] != "sent" {
		t.Fatalf("HELP opted the number out: %v", out)
	}
	for _, body := range []string{" stop. ", "unsubscribe"} {
		b.text("+14155550199", "+14155550100", body)
	}
	b.text("+14155550199", "+14155550100", "Please stop calling me at work")
	sentBefore, asked := len(b.carrier.Messages()), len(b.model.Requests())
	api := b.create("/v1/messages", map[string]any{"to": "+14155550199", "agentId": a["id"], "body": "Last chance!"})
	b.create("/v1/messages", map[string]any{"to": "+14155550198", "agentId": a["id"], "body": "Hello other number"})
	in, out := b.messages("INBOUND"), b.messages("OUTBOUND")
	for _, m := range []map[string]any{in[0], in[2], in[3]} {
		if !strings.Contains(fmt.Sprint(m["errorMessage"]), "carrier keyword") {
			t.Errorf("%q: %v", m["body"], m["errorMessage"])
		}
	}
	if len(out) != 4 || out[1]["status"] != "failed" || !strings.Contains(fmt.Sprint(out[1]["errorMessage"]), "opted out") ||
		!strings.Contains(fmt.Sprint(out[1]["errorMessage"]), "UNSUBSCRIBE") || api["status"] != "failed" || out[3]["status"] != "sent" {
		t.Errorf("after the opt-out: %v", out)
	}
	if n := len(b.carrier.Messages()) - sentBefore; n != 1 || asked != 1 || len(b.model.Requests()) != 1 {
		t.Errorf("the carrier was asked %d more times (the other number's only), the model %d times", n, len(b.model.Requests()))
	}
	// START opts back in.
	b.text("+14155550199", "+14155550100", "START")
	b.text("+14155550199", "+14155550100", "Hi again")
	if out := b.messages("OUTBOUND"); len(out) != 5 || out[4]["status"] != "sent" || out[4]["body"] != "Sure!" {
		t.Errorf("after START: %v", out[len(out)-1])
	}
}
