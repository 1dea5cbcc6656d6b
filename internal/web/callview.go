package web

import (
	"fmt"
	"math"
	"slices"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
)

// callView is a call as its page shows it: the record, its transcript
// lines, metrics and per-turn latency read out of the maps the API answers.
type callView struct {
	model.Call
	Live      bool
	Queued    bool
	Lines     []line
	Metrics   []metric
	Latency   []turnLatency
	Recording bool
}

// line is one transcript entry: a message, a filler or a tool call with
// its result. At is when it began and EndAt when it ended, in seconds from
// the answer (HasAt false when unstamped; EndAt is At on a record from
// before entries had an end).
type line struct {
	At, EndAt  float64
	HasAt      bool
	Role, Type string
	Text       string
	TurnID     string
	Interrupt  bool
	Tool       string
	Args       string
	Output     string
}

// Clock is At as m:ss.
func (l line) Clock() string {
	s := int(math.Floor(l.At))
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// metric is one scalar figure of metrics.
type metric struct {
	Name, Value string
}

// turnLatency is one metrics.turn_latency entry, in milliseconds.
type turnLatency struct {
	TurnID                                      string
	Endpointing, STT, LLM, TTS, FirstAudio, Own string
}

func newCallView(c model.Call) callView {
	v := callView{Call: c, Live: !call.IsFinal(c.Status), Queued: c.Status == model.CallQueued}
	for _, e := range c.Transcript {
		v.Lines = append(v.Lines, transcriptLine(e))
	}
	keys := make([]string, 0, len(c.Metrics))
	for k := range c.Metrics {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch x := c.Metrics[k].(type) {
		case float64, int, int64, string, bool:
			v.Metrics = append(v.Metrics, metric{Name: k, Value: fmt.Sprint(x)})
		}
	}
	if turns, ok := c.Metrics["turn_latency"].([]any); ok {
		for _, t := range turns {
			m, ok := t.(map[string]any)
			if !ok {
				continue
			}
			v.Latency = append(v.Latency, turnLatency{
				TurnID: text(m["turnId"]), Endpointing: ms(m["endpointing_ms"]), STT: ms(m["stt_ms"]),
				LLM: ms(m["llm_first_token_ms"]), TTS: ms(m["tts_first_audio_ms"]),
				FirstAudio: ms(m["first_audio_ms"]), Own: ms(m["overhead_ms"]),
			})
		}
	}
	return v
}

func transcriptLine(e map[string]any) line {
	l := line{Role: text(e["role"]), Type: text(e["type"]), Text: text(e["text"]), TurnID: text(e["turnId"])}
	if at, ok := e["at"].(float64); ok {
		l.At, l.EndAt, l.HasAt = at, at, true
		if end, ok := e["endAt"].(float64); ok && end >= at {
			l.EndAt = end
		}
	}
	l.Interrupt, _ = e["interrupted"].(bool)
	if l.Type == "filler" && l.Text == "" {
		l.Text = "(" + text(e["sound"]) + " sound)"
	}
	if t, ok := e["tool"].(map[string]any); ok {
		l.Tool, l.Args = text(t["name"]), text(t["args"])
	}
	if r, ok := e["result"].(map[string]any); ok {
		l.Output = text(r["output"])
	}
	return l
}

func text(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func ms(v any) string {
	f, ok := v.(float64)
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%.0f ms", f)
}
