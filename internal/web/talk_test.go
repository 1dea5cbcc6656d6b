package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// fakeWebCalls stands in for the telephony phone: it stores the web call's
// record as the phone does, and answers with a fixed SDP, or fails with err.
type fakeWebCalls struct {
	st  store.Store
	err error

	mu     sync.Mutex
	offers []string // "orgID agentID offer" of each call asked for
}

func (f *fakeWebCalls) WebCall(ctx context.Context, orgID, agentID, offer string) (model.Call, string, error) {
	f.mu.Lock()
	f.offers = append(f.offers, orgID+" "+agentID+" "+offer)
	f.mu.Unlock()
	if f.err != nil {
		return model.Call{}, "", f.err
	}
	a, err := store.Read(ctx, f.st, func(tx store.Tx) (model.Agent, error) { return tx.GetAgent(ctx, orgID, agentID) })
	if err != nil {
		return model.Call{}, "", err
	}
	c := call.NewWebCall(a)
	c.Status = model.CallInitiated
	err = f.st.Update(ctx, func(tx store.Tx) error { return tx.CreateCall(ctx, &c) })
	return c, "v=0 answer", err
}

func (f *fakeWebCalls) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.offers...)
}

// withWebCalls serves web calls with a fake phone over the env's store.
func withWebCalls(f *fakeWebCalls) envOption {
	return func(c *Config) {
		f.st = c.Calls.Store
		c.WebCalls = f
	}
}

// postJSON sends body as a script on the talk page does: JSON with the
// CSRF token in its header (csrf "" leaves the header out).
func (b *browser) postJSON(path, body, csrf string) page {
	b.e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", b.e.srv.URL)
	if csrf != "" {
		req.Header.Set(csrfHeader, csrf)
	}
	return b.do(req)
}

func (e *env) agent(orgID, name string) agent.View {
	e.t.Helper()
	v, err := e.svc.Agents.Create(context.Background(), orgID, agent.Input{Name: opt.Value(name), PromptTemplate: opt.Value("You help callers.")})
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func decodeJSON[T any](t testing.TB, p page) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(p.body), &v); err != nil {
		t.Fatalf("answer is not JSON (%v):\n%s", err, p.body)
	}
	return v
}

func TestTalkStartsAWebCallAndFollowsItsTranscript(t *testing.T) {
	phone := &fakeWebCalls{}
	e := newEnv(t, withWebCalls(phone))
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.agent(u.OrgID, "Front desk")

	wantContains(t, b.get("/agents/"+a.ID), `href="/agents/`+a.ID+`/talk"`, "Talk to this agent")
	p := b.get("/agents/" + a.ID + "/talk")
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "Talk to Front desk", `id="talk-start"`, `src="/static/talk.js"`, `data-agent="`+a.ID+`"`, `data-csrf="`+b.csrf+`"`)
	if contains(p.body, "<script>") {
		t.Error("the talk page has an inline script, which the CSP refuses")
	}
	if js := b.get("/static/talk.js"); js.status != http.StatusOK || !contains(js.body, "createDataChannel") {
		t.Fatalf("talk.js: %d", js.status)
	}

	p = b.postJSON("/agents/"+a.ID+"/talk", `{"sdp":"v=0 offer"}`, b.csrf)
	wantStatus(t, p, http.StatusCreated)
	ans := decodeJSON[talkAnswer](t, p)
	if ans.SDP != "v=0 answer" || !model.IsUUID(ans.CallID) {
		t.Fatalf("answer %+v", ans)
	}
	if got := phone.asked(); len(got) != 1 || got[0] != u.OrgID+" "+a.ID+" v=0 offer" {
		t.Fatalf("the phone was asked %q", got)
	}

	progress := "/agents/" + a.ID + "/talk/" + ans.CallID
	st := decodeJSON[talkState](t, b.get(progress))
	if st.Status != model.CallInitiated || len(st.Lines) != 0 {
		t.Fatalf("a new call's state: %+v", st)
	}
	c, err := e.svc.Calls.Get(context.Background(), u.OrgID, ans.CallID)
	if err != nil || c.FromNumber != call.WebCaller {
		t.Fatalf("the call record: %+v, %v", c, err)
	}
	tr := call.NewTranscript(e.svc.Calls.Store, c, time.Now())
	for _, entry := range []map[string]any{
		{"role": "assistant", "type": "message", "text": "Luigi's restaurant."},
		{"role": "tool", "type": "tool_call", "name": "end_call"},
		{"role": "user", "type": "message", "text": "A table for two, please."},
	} {
		if err := tr.Append(context.Background(), entry); err != nil {
			t.Fatal(err)
		}
	}
	st = decodeJSON[talkState](t, b.get(progress))
	want := []talkLine{{"assistant", "Luigi's restaurant."}, {"user", "A table for two, please."}}
	if len(st.Lines) != len(want) || st.Lines[0] != want[0] || st.Lines[1] != want[1] {
		t.Fatalf("lines %+v, want %+v", st.Lines, want)
	}
}

func TestTalkNeedsTheSessionAndItsCSRFToken(t *testing.T) {
	phone := &fakeWebCalls{}
	e := newEnv(t, withWebCalls(phone))
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.agent(u.OrgID, "Front desk")
	path := "/agents/" + a.ID + "/talk"

	wantStatus(t, b.postJSON(path, `{"sdp":"v=0 offer"}`, ""), http.StatusForbidden)
	wantStatus(t, b.postJSON(path, `{"sdp":"v=0 offer"}`, "not-the-token"), http.StatusForbidden)
	stranger := e.browser()
	wantStatus(t, stranger.postJSON(path, `{"sdp":"v=0 offer"}`, b.csrf), http.StatusForbidden)
	if p := stranger.get(path); p.status != http.StatusSeeOther || p.location() != "/signin" {
		t.Errorf("the talk page without a session: %d to %q", p.status, p.location())
	}
	if got := phone.asked(); len(got) != 0 {
		t.Fatalf("calls were placed without a valid token: %q", got)
	}
}

// Each failure answers JSON with a message the page shows as it is.
func TestTalkFailuresAreMessages(t *testing.T) {
	for _, c := range []struct {
		name   string
		phone  *fakeWebCalls // nil: the server has no SIP side
		body   string
		status int
		says   string
	}{
		{"no SIP side", nil, `{"sdp":"v=0 offer"}`, http.StatusServiceUnavailable, "--dialer sip"},
		{"every line taken", &fakeWebCalls{err: callqueue.ErrConcurrencyLimit}, `{"sdp":"v=0 offer"}`, http.StatusTooManyRequests, "concurrency limit"},
		{"disabled agent", &fakeWebCalls{err: &invalid.Conflict{Message: "the agent is disabled: enable it to talk to it"}}, `{"sdp":"v=0 offer"}`, http.StatusConflict, "the agent is disabled"},
		{"offer without audio", &fakeWebCalls{err: invalid.One("sdp", "the offer has no audio")}, `{"sdp":"v=0 offer"}`, http.StatusBadRequest, "the offer has no audio"},
		{"no offer", &fakeWebCalls{}, `{}`, http.StatusBadRequest, "no call offer"},
		{"not JSON", &fakeWebCalls{}, `sdp=x`, http.StatusBadRequest, "no call offer"},
		{"offer twice", &fakeWebCalls{}, `{"sdp":"v=0 offer","sdp":"v=0 other"}`, http.StatusBadRequest, "no call offer"},
		{"broken phone", &fakeWebCalls{err: context.DeadlineExceeded}, `{"sdp":"v=0 offer"}`, http.StatusInternalServerError, "the server's log says why"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opts []envOption
			if c.phone != nil {
				opts = append(opts, withWebCalls(c.phone))
			}
			e := newEnv(t, opts...)
			b, u := e.signedIn("acme", "ada@example.com")
			a := e.agent(u.OrgID, "Front desk")
			p := b.postJSON("/agents/"+a.ID+"/talk", c.body, b.csrf)
			wantStatus(t, p, c.status)
			if msg := decodeJSON[talkError](t, p).Error; !contains(msg, c.says) {
				t.Errorf("message %q, want it to say %q", msg, c.says)
			}
			if c.phone == nil {
				wantContains(t, b.get("/agents/"+a.ID+"/talk"), "--dialer sip", `id="talk-start" disabled`)
			}
		})
	}
}
