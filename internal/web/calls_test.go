package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// newAgentIn creates an agent named name in the organization.
func (e *env) newAgentIn(orgID, name string) agent.View {
	e.t.Helper()
	a, err := e.svc.Agents.Create(context.Background(), orgID, agent.Input{Name: opt.Value(name), PromptTemplate: opt.Value("p")})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// newCall stores a call of the agent with status, changed by mods.
func (e *env) newCall(a agent.View, status string, mods ...func(*model.Call)) model.Call {
	e.t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	c := model.Call{
		ID: model.NewID(), OrgID: a.OrgID, AgentID: a.ID, AgentName: a.Name, Direction: model.Outbound, Status: status,
		FromNumber: "+15550001000", ToNumber: "+15550002000", Prompt: "p", CreatedAt: now, UpdatedAt: now,
		Variables: map[string]any{}, Transcript: []map[string]any{}, Metrics: map[string]any{},
	}
	for _, m := range mods {
		m(&c)
	}
	ctx := context.Background()
	if err := e.st.Update(ctx, func(tx store.Tx) error { return tx.CreateCall(ctx, &c) }); err != nil {
		e.t.Fatal(err)
	}
	return c
}

// conversation is a finished call's record: what was said, a tool call
// and its result, usage and per-turn latency.
func conversation(c *model.Call) {
	started := c.CreatedAt.Add(2 * time.Second)
	ended := started.Add(3 * time.Second)
	c.StartedAt, c.EndedAt, c.DurationSeconds = &started, &ended, ptr(3)
	c.Summary = ptr("The caller booked a table for two.")
	c.Transcript = []map[string]any{
		{"at": 0.2, "seq": 0.0, "role": "assistant", "type": "message", "text": "Hello, Luigi's, how can I help?", "turnId": "t0", "isFinal": true},
		{"at": 1.1, "endAt": 1.6, "seq": 1.0, "role": "user", "type": "message", "text": "A table for two tonight.", "turnId": "t1", "isFinal": true, "language": "en"},
		{"at": 1.9, "seq": 2.0, "role": "tool", "type": "tool_call", "turnId": "t1",
			"tool": map[string]any{"name": "book_table", "args": `{"people":2}`}, "result": map[string]any{"output": "booked at 8pm"}},
		{"at": 2.4, "seq": 3.0, "role": "assistant", "type": "message", "text": "Booked for 8 pm.", "turnId": "t1", "isFinal": true},
	}
	c.Metrics = map[string]any{
		"llm_prompt_tokens": 120.0, "tts_characters_count": 48.0,
		"turn_latency": []any{map[string]any{"turnId": "t1", "first_audio_ms": 612.0, "endpointing_ms": 200.0,
			"stt_ms": 90.0, "llm_first_token_ms": 180.0, "tts_first_audio_ms": 110.0, "overhead_ms": 32.0}},
	}
}

func ptr[T any](v T) *T { return &v }

// record writes a real stereo WAV of seconds for the call.
func (e *env) record(c model.Call, seconds int) {
	e.t.Helper()
	w, err := e.svc.Recordings.Create(c.OrgID, c.ID, 8000)
	if err != nil {
		e.t.Fatal(err)
	}
	tick := make([]int16, 160)
	for i := range tick {
		tick[i] = int16((i % 16) * 1000)
	}
	for range seconds * 50 {
		w.Write(tick, tick)
	}
	if err := w.Close(); err != nil {
		e.t.Fatal(err)
	}
}

func TestCallPageShowsTheConversation(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Luigi")
	c := e.newCall(a, model.CallCompleted, conversation)
	e.record(c, 1)
	p := b.get("/calls/" + c.ID)
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "COMPLETED", "Luigi", "15550001000", "The caller booked a table for two.",
		"A table for two tonight.", "book_table", "{&#34;people&#34;:2}", "booked at 8pm",
		`data-at="1.1" data-end-at="1.6"`, `data-at="1.9" data-end-at="1.9"`, `src="/calls/`+c.ID+`/recording"`, "612 ms", "32 ms", "llm_prompt_tokens", "120",
		`<script src="/static/call.js" defer></script>`)
	if contains(p.body, "Hang up") || contains(p.body, "hx-trigger=\"every 2s\"") {
		t.Fatal("an ended call offers a hang-up or polls")
	}
	// The recording is the file the API serves, and ranges work for seeking.
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/calls/"+c.ID+"/recording", nil)
	req.Header.Set("Range", "bytes=0-11")
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || resp.Header.Get("Content-Type") != "audio/wav" || string(head[:4]) != "RIFF" || string(head[8:12]) != "WAVE" {
		t.Fatalf("recording: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), head)
	}
	// Signed out: no recording.
	if p := e.browser().get("/calls/" + c.ID + "/recording"); p.status != http.StatusSeeOther || p.location() != "/signin" {
		t.Fatalf("signed out: %d to %q", p.status, p.location())
	}
	// A call without a recording has no player and its route answers 404.
	bare := e.newCall(a, model.CallFailed)
	p = b.get("/calls/" + bare.ID)
	wantStatus(t, p, http.StatusOK)
	if contains(p.body, "<audio") {
		t.Fatal("a call without a recording shows a player")
	}
	wantContains(t, p, "Nothing said yet.")
	wantStatus(t, b.get("/calls/"+bare.ID+"/recording"), http.StatusNotFound)
}

func TestCallListFilters(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	luigi, mario := e.newAgentIn(u.OrgID, "Luigi"), e.newAgentIn(u.OrgID, "Mario")
	e.newCall(luigi, model.CallCompleted, func(c *model.Call) { c.FromNumber = "+15550000001"; c.Summary = ptr("pizza order") })
	e.newCall(mario, model.CallFailed, func(c *model.Call) { c.FromNumber = "+15550000002"; c.Direction = model.Inbound })
	e.newCall(mario, model.CallInProgress, func(c *model.Call) { c.FromNumber = "+15550000003" })

	wantContains(t, b.get("/calls"), "3 calls", "15550000001", "15550000002", "15550000003")
	for _, c := range []struct {
		query string
		want  string
		not   []string
	}{
		{"status=COMPLETED", "1 call<", []string{"15550000002 →", "15550000003 →"}},
		{"status=COMPLETED,FAILED", "2 calls", []string{"15550000003 →"}},
		{"status=COMPLETED&status=FAILED", "2 calls", []string{"15550000003 →"}},
		{"direction=INBOUND", "1 call<", []string{"15550000001 →"}},
		{"agentId=" + luigi.ID, "1 call<", []string{"15550000002 →"}},
		{"fromNumber=%2B15550000002", "1 call<", []string{"15550000001 →"}},
		{"fromNumber=+15550000002", "1 call<", []string{"15550000001 →"}},
		{"q=pizza", "1 call<", []string{"15550000002 →"}},
		{"sortBy=status&sortDir=asc&pageSize=1", "Page 1 of 3", nil},
		{"createdTo=2000-01-01T00:00:00Z", "0 calls", []string{"15550000001 →"}},
		{"createdFrom=2000-01-01T00:00", "3 calls", nil},
	} {
		p := b.get("/calls?" + c.query)
		wantStatus(t, p, http.StatusOK)
		results := p.body[strings.Index(p.body, `id="results"`):]
		if !contains(results, c.want) {
			t.Errorf("%s: lacks %q:\n%s", c.query, c.want, results)
		}
		for _, n := range c.not {
			if contains(results, n) {
				t.Errorf("%s: lists %q", c.query, n)
			}
		}
	}
	for _, q := range []string{"status=DONE", "direction=sideways", "agentId=x", "fromNumber=555", "pageSize=101",
		"createdFrom=yesterday", "createdFrom=2026-01-02T00:00:00Z&createdTo=2026-01-01T00:00:00Z", "sortBy=agentName", "q=" + strings.Repeat("x", 65)} {
		p := b.get("/calls?" + q)
		if p.status != http.StatusBadRequest {
			t.Fatalf("%s: %d, want 400", q, p.status)
		}
		wantContains(t, p, `role="alert"`)
	}
	// The live section lists calls not yet ended, and polls.
	p := b.get("/calls/live")
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, `hx-get="/calls/live"`, `hx-trigger="every 2s"`, "15550000003", "IN_PROGRESS", "Live now")
	if contains(p.body, "15550000001") || contains(p.body, "<html") {
		t.Fatalf("the live partial:\n%s", p.body)
	}
}

func TestEndCall(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Luigi")
	ctx := context.Background()
	queued := e.newCall(a, model.CallQueued)
	live := e.newCall(a, model.CallInProgress, func(c *model.Call) {
		started := c.CreatedAt
		c.StartedAt = &started
		c.Transcript = []map[string]any{{"at": 0.5, "seq": 0.0, "role": "user", "type": "message", "text": "Still there?"}}
	})

	p := b.get("/calls/" + queued.ID)
	wantContains(t, p, "Cancel call", `action="/calls/`+queued.ID+`/end"`)
	p = b.get("/calls/" + live.ID)
	wantContains(t, p, "Hang up", `hx-get="/calls/`+live.ID+`/live"`, "Still there?")
	p = b.get("/calls/" + live.ID + "/live")
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, `hx-trigger="every 2s"`, "Still there?")
	if p.header.Get("HX-Refresh") != "" || contains(p.body, "<html") {
		t.Fatalf("the live transcript partial of a live call: %v\n%s", p.header, p.body)
	}

	// Without the CSRF token nothing ends.
	wantStatus(t, b.post("/calls/"+live.ID+"/end", url.Values{"csrf": {"forged"}}), http.StatusForbidden)
	if c, _ := e.svc.Calls.Get(ctx, u.OrgID, live.ID); c.Status != model.CallInProgress {
		t.Fatalf("a forged hang-up ended the call: %s", c.Status)
	}

	if p := b.post("/calls/"+queued.ID+"/end", nil); p.status != http.StatusSeeOther || p.location() != "/calls/"+queued.ID {
		t.Fatalf("cancel: %d to %q\n%s", p.status, p.location(), p.body)
	}
	if c, _ := e.svc.Calls.Get(ctx, u.OrgID, queued.ID); c.Status != model.CallCanceled {
		t.Fatalf("canceled call is %s", c.Status)
	}
	if p := b.post("/calls/"+live.ID+"/end", nil); p.status != http.StatusSeeOther {
		t.Fatalf("hang up: %d\n%s", p.status, p.body)
	}
	if c, _ := e.svc.Calls.Get(ctx, u.OrgID, live.ID); c.Status != model.CallCompleted || c.HangupCause == nil {
		t.Fatalf("hung-up call is %s", c.Status)
	}
	// Its polled transcript now reloads the page, and it polls no more.
	p = b.get("/calls/" + live.ID + "/live")
	if p.header.Get("HX-Refresh") != "true" || contains(p.body, "every 2s") {
		t.Fatalf("an ended call's partial: %v\n%s", p.header, p.body)
	}
	// Ending an ended call is refused.
	wantStatus(t, b.post("/calls/"+live.ID+"/end", nil), http.StatusConflict)
}
