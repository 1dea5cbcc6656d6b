package browsertest

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// TestCallPage: a finished call's page shows its transcript with the tool
// call, and its recording plays in the browser; choosing a transcript
// line seeks the player there and highlights the line.
func TestCallPage(t *testing.T) {
	e := newEnv(t)
	ctx := tab(t)
	orgID := signIn(t, e, ctx)
	a, err := e.svc.Agents.Create(context.Background(), orgID, agent.Input{Name: opt.Value("Luigi's bookings"), PromptTemplate: opt.Value("p")})
	if err != nil {
		t.Fatal(err)
	}
	done := storeCall(t, e, a, model.CallCompleted, "+14155550123", finished, func(c *model.Call) {
		link := e.svc.Recordings.URL(c.ID, time.Now()) // a call with a recording has its link
		c.RecordingURL = &link
	})
	recordTone(t, e, done, 3)
	storeCall(t, e, a, model.CallInProgress, "+14155550177", func(c *model.Call) {
		started := c.CreatedAt
		c.StartedAt = &started
	})

	run(t, ctx,
		chromedp.Navigate(e.url+"/calls"),
		chromedp.WaitVisible(`//section[@id="live"]//a[contains(text(), "+14155550177")]`),
		chromedp.WaitVisible(`//section[@id="results"]//span[text()="COMPLETED"]`),
	)
	screenshot(t, ctx, "calls")

	run(t, ctx,
		chromedp.Click(`//section[@id="results"]//tr[.//span[text()="COMPLETED"]]//a`),
		chromedp.WaitVisible(`//p[contains(text(), "A table for two tonight.")]`),
		chromedp.WaitVisible(`//code[text()="book_table"]`),
	)
	duration := read(t, ctx, chromedp.Poll[float64](`(() => { const a = document.getElementById("recording"); return a.readyState >= 1 && a.duration > 0 && a.duration; })()`,
		chromedp.WithPollingTimeout(20*time.Second)))
	if math.Abs(duration-3) > 0.1 {
		t.Fatalf("the player's duration is %v s, want 3", duration)
	}
	run(t, ctx, chromedp.Click(`//li[@data-at="1.1"]//button`))
	at := read(t, ctx, chromedp.Poll[string](`(() => { const l = document.querySelector("#transcript li.playing"); return l && l.dataset.at; })()`,
		chromedp.WithPollingTimeout(10*time.Second)))
	pos := read(t, ctx, chromedp.Evaluate[float64](`document.getElementById("recording").currentTime`))
	if (at != "1.1" && at != "1.9") || pos < 1.1 {
		t.Fatalf("after choosing 0:01 the line at %s plays, the player at %v s", at, pos)
	}
	// The line lit is the one the recording is in: of two going, the one
	// begun later; after a line that ended, the agent's line still going
	// (not the caller's, written later but over); between lines, the last.
	run(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("recording").pause()`))
	for _, tc := range []struct {
		pos  float64
		want string
	}{{2.3, "2.2"}, {2.7, "2"}, {1.75, "1.1"}, {0.5, "0.2"}} {
		run(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById("recording").currentTime = %v`, tc.pos)))
		lit := read(t, ctx, chromedp.Poll[string](fmt.Sprintf(`(() => {
			const a = document.getElementById("recording"), l = document.querySelector("#transcript li.playing");
			return !a.seeking && Math.abs(a.currentTime - %v) < 0.01 && l && l.dataset.at === %q && l.dataset.at;
		})()`, tc.pos, tc.want), chromedp.WithPollingTimeout(10*time.Second)))
		if lit != tc.want {
			t.Errorf("at %v s the line at %s is lit, want %s", tc.pos, lit, tc.want)
		}
	}
	screenshot(t, ctx, "call")
}

// signIn signs a new user of acme in through the pages and returns its
// organization.
func signIn(t *testing.T, e *env, ctx context.Context) string {
	t.Helper()
	oneTime, u, err := e.svc.Accounts.CreateUser(context.Background(), "acme", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	const password = "correct horse battery staple"
	run(t, ctx,
		chromedp.Navigate(e.url+"/signin"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), "ada@example.com"),
		chromedp.SendKeys(chromedp.CSS(`#password`), oneTime),
		chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`#newPassword`)),
		chromedp.SendKeys(chromedp.CSS(`#currentPassword`), oneTime),
		chromedp.SendKeys(chromedp.CSS(`#newPassword`), password),
		chromedp.SendKeys(chromedp.CSS(`#confirmPassword`), password),
		chromedp.Submit(chromedp.CSS(`#confirmPassword`)),
		chromedp.WaitVisible(`//h1[text()="Agents"]`),
	)
	return u.OrgID
}

// storeCall stores a call of the agent, as the call plane would have.
func storeCall(t *testing.T, e *env, a agent.View, status, from string, mods ...func(*model.Call)) model.Call {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	c := model.Call{
		ID: model.NewID(), OrgID: a.OrgID, AgentID: a.ID, AgentName: a.Name, Direction: model.Inbound, Status: status,
		FromNumber: from, ToNumber: "+14155550100", Prompt: "p", CreatedAt: now, UpdatedAt: now,
		Variables: map[string]any{}, Transcript: []map[string]any{}, Metrics: map[string]any{},
	}
	for _, m := range mods {
		m(&c)
	}
	ctx := context.Background()
	if err := e.st.Update(ctx, func(tx store.Tx) error { return tx.CreateCall(ctx, &c) }); err != nil {
		t.Fatal(err)
	}
	return c
}

// finished is a three-second booking: what was said, a tool call and its
// result, usage and the latency of the answered turn.
func finished(c *model.Call) {
	started := c.CreatedAt.Add(-time.Minute)
	ended := started.Add(3 * time.Second)
	three := 3
	summary := "The caller booked a table for two at 8 pm."
	c.StartedAt, c.EndedAt, c.DurationSeconds, c.Summary = &started, &ended, &three, &summary
	c.Transcript = []map[string]any{
		{"at": 0.2, "endAt": 1.0, "seq": 0.0, "role": "assistant", "type": "message", "text": "Hello, Luigi's, how can I help?", "turnId": "t0", "isFinal": true},
		{"at": 1.1, "endAt": 1.6, "seq": 1.0, "role": "user", "type": "message", "text": "A table for two tonight.", "turnId": "t1", "isFinal": true, "language": "en"},
		{"at": 1.9, "endAt": 1.9, "seq": 2.0, "role": "tool", "type": "tool_call", "turnId": "t1",
			"tool": map[string]any{"name": "book_table", "args": `{"people":2,"time":"20:00"}`}, "result": map[string]any{"output": "booked, table 12"}},
		{"at": 2, "endAt": 2.9, "seq": 3.0, "role": "assistant", "type": "message", "text": "You're booked for 8 pm, table 12.", "turnId": "t1", "isFinal": true},
		// Said over the agent, which could not be interrupted: written
		// after the agent's line, though it began during it.
		{"at": 2.2, "endAt": 2.5, "seq": 4.0, "role": "user", "type": "message", "text": "Lovely.", "turnId": "t2", "isFinal": true, "language": "en"},
	}
	c.Metrics = map[string]any{
		"llm_prompt_tokens": 412.0, "llm_completion_tokens": 38.0, "tts_characters_count": 66.0, "stt_audio_duration": 1.4,
		"turn_latency": []any{map[string]any{"turnId": "t1", "first_audio_ms": 642.0, "endpointing_ms": 220.0,
			"stt_ms": 95.0, "llm_first_token_ms": 190.0, "tts_first_audio_ms": 105.0, "overhead_ms": 32.0}},
	}
}

// recordTone writes seconds of a real stereo WAV as the call's recording,
// where the store keeps it. (Not through recording.Writer: it takes a
// tick every 20 ms, as a call's media clock gives them, and drops what a
// burst of more than its ring would hold.)
func recordTone(t *testing.T, e *env, c model.Call, seconds int) {
	t.Helper()
	path := e.svc.Recordings.Path(c.OrgID, c.ID)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := audio.NewStereoWAV(f, 8000)
	if err != nil {
		t.Fatal(err)
	}
	caller, agentSide := make([]int16, 160), make([]int16, 160)
	for n := range seconds * 50 {
		for i := range caller {
			s := float64(n*160+i) / 8000
			caller[i] = int16(3000 * math.Sin(2*math.Pi*330*s))
			agentSide[i] = int16(3000 * math.Sin(2*math.Pi*440*s))
		}
		if err := w.Write(caller, agentSide); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
