package bench

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"testing"
	"time"
)

// turnLog writes the server's "turn" log line for a turn whose first
// audio was handed to the line at handed, as internal/pipeline logs it.
func turnLog(t *testing.T, h slog.Handler, handed time.Time, call, turn string, f map[string]float64) {
	t.Helper()
	r := slog.NewRecord(handed, slog.LevelInfo, "turn", 0)
	r.AddAttrs(slog.String("call_id", call), slog.String("turn_id", turn))
	for _, k := range []string{"first_audio_ms", "endpointing_ms", "endpointing_wait_ms", "stt_ms", "llm_first_token_ms", "tts_first_audio_ms", "overhead_ms"} {
		r.AddAttrs(slog.Float64(k, f[k]))
	}
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// TestSplitTurns: three engine calls play the same turns, a's 6 ms after
// b's and c's 25 ms before; the wire's call b is matched to b, whose turns
// fit best (its speech ends on the capture's, its first audio a few ms
// before the wire's): a's fit too, less closely, c's do not. A turn whose
// speech end the capture's VAD did not find is matched by its send lag
// alone. Each turn's wait on the wire is the engine's endpointing_wait_ms
// and the rest its parts. A call the engine has no turns for is unmatched.
func TestSplitTurns(t *testing.T) {
	var log bytes.Buffer
	h := slog.NewJSONHandler(&log, nil)
	base := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	waits := []float64{525, 300, 1200}
	// Each turn: the wait on the 20 ms grid, the fakes' 350 ms exactly
	// and 3 ms of Parley's own.
	figures := func(wait float64) map[string]float64 {
		grid := math.Ceil(wait/20) * 20
		return map[string]float64{"endpointing_wait_ms": wait, "endpointing_ms": grid, "stt_ms": 50,
			"first_audio_ms": grid + 350 + 3, "overhead_ms": 3}
	}
	offset := map[string]time.Duration{"a": 6 * time.Millisecond, "b": 0, "c": -25 * time.Millisecond}
	speechEnd := func(call string, k int) time.Time {
		return base.Add(time.Duration(k)*5*time.Second + offset[call])
	}
	for _, call := range []string{"a", "b", "c"} {
		for k, w := range waits {
			f := figures(w)
			handed := speechEnd(call, k).Add(time.Duration(f["first_audio_ms"] * float64(time.Millisecond)))
			turnLog(t, h, handed, call, "turn-"+string(rune('1'+k)), f)
		}
	}
	// Unrelated lines are skipped.
	slog.New(h).Info("serving", "addr", "127.0.0.1:1")
	engine := engineTurns(log.String())
	if len(engine) != 9 {
		t.Fatalf("read %d turns from the log, want 9:\n%s", len(engine), log.String())
	}

	// Call b on the wire: the last voiced packet a frame before the
	// engine's speech end, the VAD's end a frame after it (none found for
	// the second turn), the agent's first packet 7 ms after the hand-over.
	var wire []capturedTurn
	for k, w := range waits {
		s := time.Duration(speechEnd("b", k).UnixNano())
		handed := s + time.Duration(figures(w)["first_audio_ms"]*float64(time.Millisecond))
		ct := capturedTurn{wireTurn: wireTurn{callerEnd: s - 20*time.Millisecond, agentStart: handed + 7*time.Millisecond}, vadEnd: s + frameDur}
		if k == 1 {
			ct.vadEnd = 0
		}
		wire = append(wire, ct)
	}
	stranger := []capturedTurn{{wireTurn: wireTurn{callerEnd: time.Duration(base.UnixNano()) + time.Hour, agentStart: time.Duration(base.UnixNano()) + time.Hour + time.Second}}}
	s := splitTurns(map[uint16][]capturedTurn{20000: wire, 20002: stranger}, engine)
	if s.matched != 3 || s.unmatched != 1 {
		t.Fatalf("matched %d, unmatched %d, want 3 and 1", s.matched, s.unmatched)
	}
	for i, w := range waits {
		grid := math.Ceil(w/20)*20 - w
		// definition 20 + grid + providers 0 + overhead 3 + line 7
		if want := 20 + grid + 3 + 7; math.Abs(s.rest[i]-want) > 0.01 || s.waits[i] != w {
			t.Errorf("turn %d: wait %v, rest %v; want %v and %v", i, s.waits[i], s.rest[i], w, want)
		}
		if math.Abs(s.own[i]-(s.rest[i]-s.providers[i])) > 0.01 {
			t.Errorf("turn %d: own share %v, want the rest %v less the providers' %v", i, s.own[i], s.rest[i], s.providers[i])
		}
		parts := s.definition[i] + s.grid[i] + s.providers[i] + s.overhead[i] + s.line[i]
		if math.Abs(parts-s.rest[i]) > 0.01 || math.Abs(s.definition[i]-20) > 0.01 || math.Abs(s.line[i]-7) > 0.01 || s.grid[i] != grid {
			t.Errorf("turn %d: parts definition %v, grid %v, providers %v, overhead %v, line %v, want them to add up to the rest %v",
				i, s.definition[i], s.grid[i], s.providers[i], s.overhead[i], s.line[i], s.rest[i])
		}
	}
}
