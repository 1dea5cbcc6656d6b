package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/flow"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/store"
)

// A recognizer that can adapt to what a conversation is about (stt/sphinx
// builds a language model from it) hears the caller far better than one
// that expects any English at all. The domain of a call is the agent's
// own texts: what it is told to talk about is what callers answer.

// maxKnowledgeText bounds the knowledge sources' text in a domain: a
// language model gains little from more, and building it costs time.
const maxKnowledgeText = 256 << 10

// agentDomain is what callers of agent a are likely to say: its prompt,
// first message, default variables' values, end-call and transfer
// conditions, flow (instructions, lines, edge and global conditions,
// extracted variables' descriptions and values), custom tools'
// descriptions and its knowledge sources' text. Its Key is a hash of the
// texts, so an edited agent (or knowledge base) gets a new model and an
// unchanged one reuses the last.
func agentDomain(a model.Agent, tools []model.CustomTool, knowledge []string) stt.Domain {
	cfg := a.Config
	var texts []string
	add := func(s ...string) {
		for _, t := range s {
			if t = strings.TrimSpace(t); t != "" {
				texts = append(texts, t)
			}
		}
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	add(cfg.PromptTemplate, deref(cfg.FirstMessage), deref(cfg.EndCallRulesOverride), deref(cfg.TransferDescriptionOverride))
	for _, k := range sortedKeys(cfg.DefaultVariables) {
		add(fmt.Sprint(cfg.DefaultVariables[k]))
	}
	for _, r := range cfg.TransferRoutes {
		add(r.Condition)
	}
	if a.Mode == model.ModeConversationFlow && len(cfg.FlowDefinition) > 0 {
		if f, err := flow.Parse(cfg.FlowDefinition); err == nil {
			add(flowTexts(f)...)
		}
	}
	for _, t := range tools {
		add(deref(t.Description))
		add(schemaTexts(t.Schema)...)
	}
	add(knowledge...)
	h := sha256.New()
	for _, t := range texts {
		h.Write([]byte(t))
		h.Write([]byte{0})
	}
	return stt.Domain{Key: hex.EncodeToString(h.Sum(nil)[:16]), Texts: texts}
}

// flowTexts are the words of a flow: what its nodes say and ask, and the
// conditions a caller's words are judged against.
func flowTexts(f *flow.Flow) []string {
	out := []string{f.GlobalPrompt}
	for _, n := range f.Nodes {
		out = append(out, n.Name, n.Instruction, n.StaticText, n.Text, n.GlobalCondition())
		for _, e := range n.Edges {
			out = append(out, e.Condition)
		}
		for _, v := range n.Variables {
			out = append(out, v.Description)
			out = append(out, v.Enum...)
		}
	}
	return out
}

// schemaTexts are the descriptions and enumerated values in a tool's JSON
// Schema, at any depth.
func schemaTexts(schema map[string]any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(v) {
				switch k {
				case "description", "title":
					if s, ok := v[k].(string); ok {
						out = append(out, s)
					}
				case "enum":
					if vals, ok := v[k].([]any); ok {
						for _, e := range vals {
							if s, ok := e.(string); ok {
								out = append(out, s)
							}
						}
					}
				default:
					walk(v[k])
				}
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(schema)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// knowledgeTexts are the text of the knowledge bases' sources, in
// creation order, up to maxKnowledgeText bytes.
func knowledgeTexts(ctx context.Context, tx store.Tx, orgID string, kbIDs []string) ([]string, error) {
	var out []string
	left := maxKnowledgeText
	for _, id := range kbIDs {
		sources, err := tx.ListKnowledgeSources(ctx, orgID, id)
		if err != nil {
			return out, err
		}
		for _, s := range sources {
			if left <= 0 {
				return out, nil
			}
			text := s.Content
			if len(text) > left {
				text = text[:left]
			}
			left -= len(text)
			out = append(out, s.DisplayName, text)
		}
	}
	return out, nil
}

// adaptation is the domain recognizer being made on a goroutine of its
// own: done closes once r and err are set (the goroutine's only writes),
// so the loop and a transcription waiting for it read them after done.
type adaptation struct {
	done chan struct{}
	r    stt.Recognizer
	err  error
}

// adapt asks an adaptable recognizer for the call's domain model on its
// own goroutine (building one can take a moment the first time an agent
// is heard), so the greeting is not held up. An utterance that starts
// before it is ready waits for it a little (streamer); one heard whole
// takes whichever is ready when it ends. The goroutine never blocks.
func (c *conversation) adapt(ctx context.Context, d stt.Domain) {
	ad, ok := c.e.STT.(stt.Adaptable)
	if !ok || len(d.Texts) == 0 {
		return
	}
	a := &adaptation{done: make(chan struct{})}
	c.adapting = a
	go func() {
		a.r, a.err = ad.Adapt(ctx, d)
		close(a.done)
		c.wake.wake()
	}()
}

// adaptWait bounds how long an utterance's stream waits for the domain
// recognizer before it opens on the unadapted one. The audio queues
// meanwhile and is decoded faster than real time once the stream opens,
// so the wait costs the text nothing unless it outlasts the utterance.
const adaptWait = 2 * time.Second

// streamer is the recognizer an utterance that started while a was being
// made streams to: a's, when it is ready before the utterance ends
// (ended closes) and within adaptWait, else fallback.
func (a *adaptation) streamer(ctx context.Context, ended <-chan struct{}, fallback stt.Streamer) stt.Streamer {
	wait := time.NewTimer(adaptWait)
	defer wait.Stop()
	select {
	case <-a.done:
	case <-ended:
	case <-wait.C:
	case <-ctx.Done():
	}
	select {
	case <-a.done:
		if s, ok := a.r.(stt.Streamer); ok && a.err == nil {
			return s
		}
	default:
	}
	return fallback
}

// takeAdapted switches to the domain recognizer once it is ready.
func (c *conversation) takeAdapted() {
	if c.adapting == nil {
		return
	}
	select {
	case <-c.adapting.done:
		a := c.adapting
		c.adapting = nil
		if a.err != nil {
			if !errors.Is(a.err, context.Canceled) {
				c.e.log().Warn("speech recognition not adapted to the agent", "call_id", c.live.Call.ID, "err", a.err)
			}
			return
		}
		if a.r != nil {
			c.stt = a.r
		}
	default:
	}
}
