package pipeline

import (
	"context"
	"flag"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
	"github.com/parley-voice/parley/internal/telephony"
)

// TestMain runs up to 4 parallel tests at once where -parallel is not
// given (its default is GOMAXPROCS, 2 in CI): a call waits on its fake
// line's 20 ms clock, not on the CPU. Tests that time something in wall
// clock (an interruption's stop, a retrieval budget) or count goroutines
// are not parallel.
func TestMain(m *testing.M) {
	flag.Parse()
	if !flagGiven("test.parallel") {
		flag.Set("test.parallel", "4")
	}
	goleak.VerifyTestMain(m)
}

func flagGiven(name string) (given bool) {
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// scriptedSTT hears, in order, the texts it was given: one per utterance.
type scriptedSTT struct {
	mu    sync.Mutex
	texts []string
	heard []int // samples of each utterance
}

func (s *scriptedSTT) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heard = append(s.heard, len(pcm))
	if len(s.texts) == 0 {
		return stt.Result{Language: "en"}, nil
	}
	t := s.texts[0]
	s.texts = s.texts[1:]
	return stt.Result{Text: t, Language: "en", Audio: time.Duration(len(pcm)) * time.Second / time.Duration(rate)}, nil
}

type bench struct {
	st    store.Store
	call  model.Call
	agent model.Agent
}

func newBench(t testing.TB, mods ...func(*model.Agent)) bench {
	t.Helper()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	org := model.Organization{Name: "acme", ConcurrencyLimit: 5, CreatedAt: model.Now(), UpdatedAt: model.Now()}
	yes, greeting := true, "Hello, this is Parley."
	a := model.Agent{Name: "Front desk", Status: model.AgentActive, Mode: model.ModeSinglePrompt, CreatedAt: model.Now(), UpdatedAt: model.Now(),
		Config: model.AgentConfig{PromptTemplate: "You take restaurant bookings.", FirstMessage: &greeting, EndCallEnabled: &yes,
			InterruptionThresholdMs: model.DefaultInterruptionThresholdMs}}
	for _, m := range mods {
		m(&a)
	}
	now := model.Now()
	c := model.Call{ID: model.NewID(), Direction: model.Inbound, Status: model.CallInProgress, FromNumber: "+15550001111", ToNumber: "+15550002222",
		Prompt: a.Config.PromptTemplate, FirstMessage: a.Config.FirstMessage, Variables: map[string]any{}, Transcript: []map[string]any{},
		Metrics: map[string]any{}, StartedAt: &now, CreatedAt: now, UpdatedAt: now}
	err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &org); err != nil {
			return err
		}
		a.OrgID = org.ID
		if err := tx.CreateAgent(ctx, &a); err != nil {
			return err
		}
		c.OrgID, c.AgentID, c.AgentName = org.ID, a.ID, a.Name
		return tx.CreateCall(ctx, &c)
	})
	if err != nil {
		t.Fatal(err)
	}
	return bench{st: st, call: c, agent: a}
}

func (b bench) stored(t *testing.T) model.Call {
	t.Helper()
	c, err := store.Read(context.Background(), b.st, func(tx store.Tx) (model.Call, error) {
		return tx.GetCall(context.Background(), b.call.OrgID, b.call.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func requireSpeechErr() error { return espeak.Available() }

func newEspeak() *espeak.Synthesizer { return espeak.New(espeak.Config{}) }

func requireSpeech(t *testing.T) {
	t.Helper()
	if err := espeak.Available(); err != nil {
		if testingCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// callerSays synthesizes the caller's words at Rate.
func callerSays(t *testing.T, text string) []int16 {
	t.Helper()
	var pcm []int16
	_, err := espeak.New(espeak.Config{}).Synthesize(context.Background(), ttsRequest(text), Rate, func(p []int16) error {
		pcm = append(pcm, p...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pcm
}

func TestAConversationTurnEndsWithEndCall(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	b := newBench(t)
	model := llmtest.New(t, func(req llmtest.Request) llmtest.Reply {
		if len(req.Tools) == 0 { // the post-call summary
			return llmtest.Reply{Text: []string{"A caller booked a table for two tonight."}}
		}
		return llmtest.Reply{
			Text:      []string{"Sure, your table ", "for two is booked. ", "Goodbye!"},
			ToolCalls: []llmtest.ToolCallReply{{ID: "call_1", Name: "end_call", Arguments: "{}"}},
		}
	})
	recognizer := &scriptedSTT{texts: []string{"I would like a table for two tonight"}}
	e := &Engine{LLM: openai.New(openai.Config{BaseURL: model.URL, APIKey: "k", Model: "m"}), STT: recognizer,
		TTS: espeak.New(espeak.Config{}), Store: b.st}
	sess := newFakeSession()
	defer sess.hangup()
	ended := make(chan string, 1)
	live := telephony.NewLive(b.call, b.agent, sess, func(cause string) { ended <- cause; sess.hangup() })
	done := make(chan struct{})
	var out call.Outcome
	go func() { out = e.Run(context.Background(), live); close(done) }()

	// The greeting plays; then the caller speaks.
	b.waitEntries(t, 1)
	sess.say(callerSays(t, "I would like a table for two tonight."))

	select {
	case cause := <-ended:
		if cause != call.CauseEndCallTool {
			t.Fatalf("ended with %s", cause)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end")
	}
	<-done

	c := b.ended(t, out)
	var got []string
	for _, e := range c.Transcript {
		got = append(got, e["role"].(string)+":"+str(e["text"])+str(e["tool"]))
	}
	want := []string{
		"assistant:Hello, this is Parley.",
		"user:I would like a table for two tonight",
		"assistant:Sure, your table for two is booked. Goodbye!",
		"tool:map[args:{} name:end_call]",
	}
	if len(got) != len(want) {
		t.Fatalf("transcript %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %q, want %q", i, got[i], want[i])
		}
	}
	for i, e := range c.Transcript {
		if int(e["seq"].(float64)) != i || e["turnId"] == nil {
			t.Errorf("entry %d: seq %v turnId %v", i, e["seq"], e["turnId"])
		}
	}
	if c.Transcript[1]["language"] != "en" || c.Transcript[1]["isFinal"] != true {
		t.Errorf("user entry %v", c.Transcript[1])
	}
	for _, k := range []string{"llm_prompt_tokens", "llm_completion_tokens", "llm_prompt_cached_tokens", "llm_input_audio_tokens",
		"llm_output_audio_tokens", "stt_audio_duration", "tts_audio_duration", "tts_characters_count"} {
		if _, ok := c.Metrics[k]; !ok {
			t.Errorf("metrics lack %s: %v", k, c.Metrics)
		}
	}
	if c.Metrics["tts_characters_count"].(float64) < 40 || c.Metrics["stt_audio_duration"].(float64) < 1 {
		t.Errorf("metrics %v", c.Metrics)
	}
	// The model saw the whole exchange, then summarized it.
	reqs := model.Requests()
	if len(reqs) != 2 || len(reqs[0].Messages) != 3 || len(reqs[0].Tools) != 1 {
		t.Fatalf("model requests %+v", reqs)
	}
	if c.Summary == nil || *c.Summary != "A caller booked a table for two tonight." {
		t.Errorf("summary %v", c.Summary)
	}
	if sum := reqs[1].Messages[1]["content"]; !strings.Contains(sum.(string), "Caller: I would like a table") {
		t.Errorf("summary request %v", reqs[1].Messages)
	}
}

func str(v any) string {
	if v == nil {
		return ""
	}
	if m, ok := v.(map[string]any); ok {
		return fmtMap(m)
	}
	return v.(string)
}

func TestCallerInterruptsTheAgent(t *testing.T) {
	requireSpeech(t)
	long := "Thank you for calling the restaurant. Today we have a long list of specials, starting with the soup of the day, then a fish course, and finally three kinds of dessert that the chef prepares every morning."
	for _, tc := range []struct {
		name          string
		disable       bool
		wantInterrupt bool
	}{{"interrupted", false, true}, {"disableInterruptions", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(t, func(a *model.Agent) {
				a.Config.FirstMessage = &long
				a.Config.DisableInterruptions = &tc.disable
			})
			b.call.FirstMessage = &long
			fake := llmtest.New(t, func(req llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Of course."}} })
			e := &Engine{LLM: openai.New(openai.Config{BaseURL: fake.URL, APIKey: "k", Model: "m"}),
				STT: &scriptedSTT{texts: []string{"Can I book a table"}}, TTS: espeak.New(espeak.Config{}), Store: b.st}
			full := len(callerSays(t, long))
			sess := newFakeSession()
			live := telephony.NewLive(b.call, b.agent, sess, func(string) { sess.hangup() })
			done := make(chan struct{})
			var out call.Outcome
			go func() { out = e.Run(context.Background(), live); close(done) }()
			deadline := time.Now().Add(10 * time.Second)
			for len(sess.playedAudio()) < Rate && time.Now().Before(deadline) { // a second of greeting
				time.Sleep(20 * time.Millisecond)
			}
			atSay := len(sess.playedAudio())
			sess.say(callerSays(t, "Sorry, can I book a table for tonight please?"))
			// Interrupted: the cut greeting, the caller, the reply. Not: three
			// seconds more of the greeting while the caller talks.
			deadline = time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				if tc.wantInterrupt && len(b.stored(t).Transcript) >= 3 || !tc.wantInterrupt && len(sess.playedAudio())-atSay >= 3*Rate {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			played := len(sess.playedAudio())
			sess.hangup()
			<-done

			c := b.ended(t, out)
			first := c.Transcript[0]
			if tc.wantInterrupt {
				// The greeting stopped early: far less than all of it played, and
				// the transcript keeps only what was heard.
				if played > full*2/3 {
					t.Errorf("played %d samples of a %d-sample greeting and a reply", played, full)
				}
				if first["interrupted"] != true || len(first["text"].(string)) >= len(long) {
					t.Errorf("first entry %v", first)
				}
				// The audio stopped within a frame of the threshold frame.
				stops, _ := c.Metrics["interruption_stop_ms"].([]any)
				if len(stops) != 1 || stops[0].(float64) >= 20 {
					t.Errorf("interruption_stop_ms %v", c.Metrics["interruption_stop_ms"])
				}
				// The model's history holds only what the caller heard.
				reqs := fake.Requests()
				if len(reqs) == 0 {
					t.Fatal("the model was not asked")
				}
				heard, _ := reqs[0].Messages[1]["content"].(string)
				if reqs[0].Messages[1]["role"] != "assistant" || heard != first["text"] || !strings.HasSuffix(heard, "…") && len(heard) >= len(long) {
					t.Errorf("history after the interruption: %v (transcript %q)", reqs[0].Messages[1], first["text"])
				}
			} else {
				// The agent talked on through the caller's words, until the
				// test hung up: the entry holds what was heard by then.
				if played-atSay < 3*Rate {
					t.Errorf("with interruptions disabled only %d samples played while the caller spoke", played-atSay)
				}
				text := strings.TrimSuffix(first["text"].(string), "…")
				if !strings.HasPrefix(long, text) || len(text) < len(long)/4 {
					t.Errorf("with interruptions disabled the greeting was cut: %v", first)
				}
			}
		})
	}
}

func TestSilentCallerIsReengagedThenTheCallEnds(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	two, five := 2, 5
	b := newBench(t, func(a *model.Agent) {
		a.Config.TurnTimeoutSeconds, a.Config.SilenceEndCallTimeoutSeconds = &two, &five
	})
	fake := llmtest.New(t, func(req llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Are you still there?"}} })
	e := &Engine{LLM: openai.New(openai.Config{BaseURL: fake.URL, APIKey: "k", Model: "m"}), STT: &scriptedSTT{},
		TTS: espeak.New(espeak.Config{}), Store: b.st}
	sess := newFakeSession()
	defer sess.hangup()
	ended := make(chan string, 1)
	live := telephony.NewLive(b.call, b.agent, sess, func(cause string) { ended <- cause; sess.hangup() })
	go e.Run(context.Background(), live)
	select {
	case cause := <-ended:
		if cause != call.CauseSilenceTimeout {
			t.Fatalf("ended with %s", cause)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a silent call never ended")
	}
	c := b.stored(t)
	var texts []string
	for _, e := range c.Transcript {
		texts = append(texts, str(e["text"]))
	}
	// Greeting, one nudge after 2 s (not one every 250 ms), then the end.
	if len(texts) != 2 || texts[1] != "Are you still there?" {
		t.Errorf("transcript %q", texts)
	}
	if reqs := fake.Requests(); len(reqs) == 0 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1]["content"].(string), "said nothing for 2 seconds") {
		t.Errorf("the model was not told the caller went quiet")
	}
}

func TestGreetingModes(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	static, dynamic := "static", "dynamic"
	for _, tc := range []struct {
		name      string
		mode      *string
		first     bool // the agent has a firstMessage
		wantText  string
		wantModel bool // the model wrote the greeting
	}{
		{"static", &static, true, "Hello, this is Parley.", false},
		{"dynamic", &dynamic, true, "Good evening, Luigi's here.", true},
		{"unset with a first message", nil, true, "Hello, this is Parley.", false},
		{"unset without one waits for the caller", nil, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBench(t, func(a *model.Agent) {
				a.Config.FirstMessageMode = tc.mode
				if !tc.first {
					a.Config.FirstMessage = nil
				}
			})
			if !tc.first {
				b.call.FirstMessage = nil
			}
			fake := llmtest.New(t, func(req llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Text: []string{"Good evening, Luigi's here."}}
			})
			e := &Engine{LLM: openai.New(openai.Config{BaseURL: fake.URL, APIKey: "k", Model: "m"}), STT: &scriptedSTT{},
				TTS: espeak.New(espeak.Config{}), Store: b.st}
			sess := newFakeSession()
			live := telephony.NewLive(b.call, b.agent, sess, func(string) { sess.hangup() })
			done := make(chan struct{})
			go func() { e.Run(context.Background(), live); close(done) }()
			if tc.wantText != "" {
				b.waitEntries(t, 1)
			} else {
				sess.waitFrames(t, 125) // 2.5 s of line time: long enough for a greeting that must not come
			}
			sess.hangup()
			<-done
			c := b.stored(t)
			got := ""
			if len(c.Transcript) > 0 {
				got = str(c.Transcript[0]["text"])
			}
			if got != tc.wantText {
				t.Errorf("greeting %q, want %q", got, tc.wantText)
			}
			asked := len(fake.Requests()) > 0 && len(fake.Requests()[0].Tools) > 0
			if asked != tc.wantModel {
				t.Errorf("the model wrote the greeting: %v, want %v", asked, tc.wantModel)
			}
			if tc.wantModel {
				last := fake.Requests()[0].Messages[1]["content"].(string)
				if !strings.Contains(last, "inbound call has just been answered") {
					t.Errorf("the dynamic greeting request does not say the direction: %q", last)
				}
			}
		})
	}
}

func TestPressDigitTool(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	yes := true
	b := newBench(t, func(a *model.Agent) { a.Config.PlayKeypadTouchToneEnabled = &yes })
	fake := llmtest.New(t, func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case len(req.Tools) == 0:
			return llmtest.Reply{Text: []string{"The agent navigated a menu."}}
		case last["role"] == "tool":
			return llmtest.Reply{Text: []string{"Done."}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "c1", Name: "press_digit", Arguments: `{"digits":"1#"}`}}}
	})
	e := &Engine{LLM: openai.New(openai.Config{BaseURL: fake.URL, APIKey: "k", Model: "m"}),
		STT: &scriptedSTT{texts: []string{"For sales press one then hash"}}, TTS: espeak.New(espeak.Config{}), Store: b.st}
	sess := newFakeSession()
	live := telephony.NewLive(b.call, b.agent, sess, func(string) { sess.hangup() })
	done := make(chan struct{})
	go func() { e.Run(context.Background(), live); close(done) }()
	b.waitEntries(t, 1) // the greeting
	sess.say(callerSays(t, "For sales press one then hash."))
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c := b.stored(t); len(c.Transcript) >= 4 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	sess.hangup()
	<-done
	sess.mu.Lock()
	pressed := sess.pressed
	sess.mu.Unlock()
	if len(pressed) != 1 || pressed[0] != "1#" {
		t.Fatalf("keys pressed %q", pressed)
	}
	c := b.stored(t)
	var tool map[string]any
	for _, e := range c.Transcript {
		if e["type"] == "tool_call" {
			tool = e
		}
	}
	if tool == nil || str(tool["tool"]) != `map[args:{"digits":"1#"} name:press_digit]` || str(tool["result"]) != "map[output:pressed 1#]" {
		t.Errorf("tool entry %v", tool)
	}
	if reqs := fake.Requests(); len(reqs) < 2 || reqs[1].Messages[len(reqs[1].Messages)-1]["content"] != "pressed 1#" {
		t.Errorf("the model was not told the keys were pressed")
	}
}
