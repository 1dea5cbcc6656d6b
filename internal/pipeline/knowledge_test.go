package pipeline

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
	"github.com/parley-voice/parley/internal/store"
)

// withKnowledgeBase gives the bench's agent a base with two sources and
// returns the knowledge service.
func withKnowledgeBase(t *testing.T, b bench) *knowledge.Service {
	t.Helper()
	ctx := context.Background()
	k := &knowledge.Service{Store: b.st}
	kb, err := k.Create(ctx, b.agent.OrgID, knowledge.Input{Name: opt.Value("Restaurant")})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"Opening hours": "Luigi's is open Tuesday to Sunday from 6 pm to 11 pm. We are closed on Mondays.",
		"Corkage":       "Guests may bring their own wine; corkage is 15 dollars per bottle.",
	} {
		if _, err := k.AddSource(ctx, b.agent.OrgID, kb.ID, knowledge.SourceInput{SourceType: opt.Value("text"),
			DisplayName: opt.Value(name), Content: opt.Value(text)}); err != nil {
			t.Fatal(err)
		}
	}
	k.Wait()
	if err := b.st.Update(ctx, func(tx store.Tx) error {
		return tx.SetAgentKnowledgeBases(ctx, b.agent.OrgID, b.agent.ID, []string{kb.ID})
	}); err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKnowledgeInCalls runs alone: automatic retrieval has a 300 ms budget
// of wall time, which a machine busy with the parallel calls can overrun.
func TestKnowledgeInCalls(t *testing.T) {
	requireSpeech(t)
	t.Run("automatic: the chunks reach the prompt", func(t *testing.T) {
		b := newBench(t)
		var mu sync.Mutex
		var prompt []map[string]any
		e := &Engine{Knowledge: withKnowledgeBase(t, b), STT: &scriptedSTT{texts: []string{"Are you open on Monday evenings?"}},
			TTS: espeak.New(espeak.Config{}), Store: b.st, RetrievalBudget: time.Minute} // a loaded machine's search still counts
		e.LLM = fakeLLM(t, func(req llmtest.Request) llmtest.Reply {
			if len(req.Tools) > 0 && req.Messages[len(req.Messages)-1]["role"] == "user" {
				mu.Lock()
				prompt = req.Messages
				mu.Unlock()
			}
			return llmtest.Reply{Text: []string{"We are closed on Mondays."}}
		})
		r := start(t, b, e)
		b.waitEntries(t, 1) // the greeting
		r.sess.say(callerSays(t, "Are you open on Monday evenings?"))
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) && len(b.stored(t).Transcript) < 3 {
			time.Sleep(100 * time.Millisecond)
		}
		r.sess.hangup()
		<-r.done
		mu.Lock()
		defer mu.Unlock()
		if len(prompt) < 3 {
			t.Fatalf("the model was not asked: %v", prompt)
		}
		note := prompt[len(prompt)-2]
		if note["role"] != "system" || !strings.Contains(note["content"].(string), "Opening hours: Luigi's is open Tuesday to Sunday") {
			t.Errorf("the message before the caller's is %v", note)
		}
		if strings.Contains(note["content"].(string), "corkage") {
			t.Errorf("an irrelevant chunk reached the prompt: %v", note["content"])
		}
		retrievals, _ := b.ended(t, r.out).Metrics["knowledge_retrievals"].([]any)
		if len(retrievals) != 1 || !strings.Contains(str(retrievals[0].(map[string]any)["query"]), "Monday") {
			t.Errorf("knowledge_retrievals %v", retrievals)
		}
	})
	t.Run("query_tool: the model searches and the search is a tool entry", func(t *testing.T) {
		mode := "query_tool"
		b := newBench(t, func(a *model.Agent) { a.Config.KnowledgeBaseRetrievalMode = &mode })
		e := &Engine{Knowledge: withKnowledgeBase(t, b)}
		entry, result := toolTurn(t, b, e, "search_knowledge_base", `{"query":"corkage wine"}`)
		if str(entry["tool"]) != `map[args:{"query":"corkage wine"} name:search_knowledge_base]` || !strings.Contains(result, "Corkage: Guests may bring their own wine") {
			t.Errorf("entry %v result %q", entry, result)
		}
	})
}
