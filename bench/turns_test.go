package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The turn on the wire, split: the silence the turn-taking policy chose
// for the turn (per turn, from the engine's own record of it) and the
// rest. Each wire turn is matched to the engine's turn by time: the
// server logs each turn ("turn", with its metrics.turn_latency figures)
// the moment its first audio is handed to the line, so the log line's
// time is that moment, and less first_audio_ms the arrival of the caller's
// last speech packet. The capture shows the same two moments: the agent's
// first voiced packet goes out on the line's next 20 ms tick, and the
// engine's VAD, run over the captured caller audio, ends the same speech
// one frame after that packet. Calls play the same audio a few tens of
// milliseconds apart, so a call is matched as a whole: the engine's call
// whose turns fit most of the wire call's turns.

// engineTurn is one turn as the server logged it.
type engineTurn struct {
	call, turn string
	handed     time.Duration // the first audio handed to the line (Unix time)
	speechEnd  time.Duration // the arrival of the caller's last speech packet (Unix time)
	figures    map[string]float64
}

// engineTurns reads the server's "turn" log lines (JSON).
func engineTurns(log string) []engineTurn {
	var out []engineTurn
	lines := bufio.NewScanner(strings.NewReader(log))
	lines.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for lines.Scan() {
		line := lines.Bytes()
		if !strings.Contains(string(line), `"msg":"turn"`) {
			continue
		}
		var rec map[string]any
		if json.Unmarshal(line, &rec) != nil || rec["msg"] != "turn" {
			continue
		}
		s, _ := rec["time"].(string)
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			continue
		}
		t := engineTurn{figures: map[string]float64{}}
		t.call, _ = rec["call_id"].(string)
		t.turn, _ = rec["turn_id"].(string)
		for k, v := range rec {
			if f, ok := v.(float64); ok && strings.HasSuffix(k, "_ms") {
				t.figures[k] = f
			}
		}
		t.handed = time.Duration(at.UnixNano())
		t.speechEnd = t.handed - time.Duration(t.figures["first_audio_ms"]*float64(time.Millisecond))
		out = append(out, t)
	}
	return out
}

// Matching tolerances. The agent's first packet leaves on the line's
// next tick after its audio was handed over: up to a frame later, more
// for a late frame on a busy machine. The engine's speech end is the
// arrival (read off the socket) of the packet the capture's VAD ends on,
// so at or after its capture: later by however late the server read it.
// A call that plays the same audio a little earlier fails the second,
// one a little later the first.
const (
	sendLagMin      = -3 * time.Millisecond
	sendLagMax      = frameDur + 60*time.Millisecond
	speechEndTolMin = -3 * time.Millisecond
	speechEndTolMax = 40 * time.Millisecond
)

// capturedTurn is a wire turn of one captured call, with the end of the
// caller's speech as the engine's VAD puts it on the captured audio (0:
// none found near).
type capturedTurn struct {
	wireTurn
	vadEnd time.Duration
}

// fits says whether engine turn e can be wire turn w, and how far apart
// their speech ends are (the send lag when the VAD found no end).
func (w capturedTurn) fits(e engineTurn) (time.Duration, bool) {
	lag := w.agentStart - e.handed
	if lag < sendLagMin || lag > sendLagMax {
		return 0, false
	}
	if w.vadEnd == 0 {
		return absDur(lag - frameDur/2), true
	}
	// vadEnd is just after the last speech frame; the engine counts from
	// that frame's arrival.
	d := e.speechEnd - (w.vadEnd - frameDur)
	return absDur(d), d >= speechEndTolMin && d <= speechEndTolMax
}

// matchCall finds the engine's call whose turns fit most of turns (ties:
// the closer fit; none when no call fits half of them) and pairs each
// turn with the nearest-fitting of its engine turns, each used once; -1
// where none fits.
func matchCall(turns []capturedTurn, byCall map[string][]engineTurn) ([]int, string) {
	best, bestN, bestCost := "", 0, time.Duration(math.MaxInt64)
	var bestPairs []int
	calls := make([]string, 0, len(byCall))
	for c := range byCall {
		calls = append(calls, c)
	}
	slices.Sort(calls) // the same answer every run
	for _, c := range calls {
		pairs, n, cost := pairTurns(turns, byCall[c])
		if n > bestN || (n == bestN && n > 0 && cost < bestCost) {
			best, bestN, bestCost, bestPairs = c, n, cost, pairs
		}
	}
	if bestN == 0 || 2*bestN < len(turns) {
		return nil, ""
	}
	return bestPairs, best
}

// pairTurns pairs each wire turn with the engine turn that fits it
// nearest, each engine turn used once: how many paired, and their summed
// distance.
func pairTurns(turns []capturedTurn, engine []engineTurn) ([]int, int, time.Duration) {
	pairs := make([]int, len(turns))
	used := make([]bool, len(engine))
	n, cost := 0, time.Duration(0)
	for i, w := range turns {
		pairs[i] = -1
		bestD := time.Duration(math.MaxInt64)
		for j, e := range engine {
			if d, ok := w.fits(e); ok && !used[j] && d < bestD {
				pairs[i], bestD = j, d
			}
		}
		if pairs[i] >= 0 {
			used[pairs[i]] = true
			n++
			cost += bestD
		}
	}
	return pairs, n, cost
}

// turnSplit is the wire's turns split into the policy's wait and the
// rest, over the turns matched to the engine's.
type turnSplit struct {
	matched, unmatched int
	waits              []float64 // the policy's wait (endpointing_wait_ms) per matched turn
	rest               []float64 // wire turn less the wait and providerDelays
	// What the rest is made of, per matched turn: the engine's speech end
	// after the wire's last voiced packet (the two definitions of the
	// caller's end), endpointing_ms beyond the wait (the frame grid, a
	// late partial text), the providers' measured time beyond the fakes'
	// delays, overhead_ms (Parley's own, by the engine), and the first
	// audio's way to the wire (the line's next tick).
	definition, grid, providers, overhead, line []float64
	// own is Parley's own share on the wire: the rest less the providers'
	// measured time beyond the fakes' delays.
	own []float64
}

// splitTurns matches the captured calls' turns (by port) to the engine's and
// splits each matched one.
func splitTurns(captured map[uint16][]capturedTurn, engine []engineTurn) turnSplit {
	byCall := map[string][]engineTurn{}
	for _, e := range engine {
		byCall[e.call] = append(byCall[e.call], e)
	}
	var s turnSplit
	ports := make([]uint16, 0, len(captured))
	for p := range captured {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, p := range ports {
		turns := captured[p]
		pairs, call := matchCall(turns, byCall)
		engineCall := byCall[call]
		delete(byCall, call) // one engine call per captured call
		for i, w := range turns {
			if pairs == nil || pairs[i] < 0 {
				s.unmatched++
				continue
			}
			t := engineCall[pairs[i]]
			f := t.figures
			wait := f["endpointing_wait_ms"]
			s.matched++
			s.waits = append(s.waits, wait)
			s.rest = append(s.rest, ms(w.agentStart-w.callerEnd)-wait-ms(providerDelays))
			s.definition = append(s.definition, ms(t.speechEnd-w.callerEnd))
			s.grid = append(s.grid, f["endpointing_ms"]-wait)
			s.providers = append(s.providers, f["first_audio_ms"]-f["endpointing_ms"]-f["overhead_ms"]-ms(providerDelays))
			s.overhead = append(s.overhead, f["overhead_ms"])
			s.line = append(s.line, ms(w.agentStart-t.handed))
			s.own = append(s.own, s.rest[len(s.rest)-1]-s.providers[len(s.providers)-1])
		}
	}
	return s
}

// setSplit puts the split's figures in the result.
func (r *heldResult) setSplit(s turnSplit) {
	r.WireMatched, r.WireUnmatched = s.matched, s.unmatched
	r.WireWaitP50, r.WireWaitP99 = percentile(s.waits, 50), percentile(s.waits, 99)
	r.WireWaits = countWaits(s.waits)
	r.WireRestP50, r.WireRestP99 = percentile(s.rest, 50), percentile(s.rest, 99)
	r.WireOwnP50, r.WireOwnP99 = percentile(s.own, 50), percentile(s.own, 99)
	r.WireRestParts = map[string][2]float64{}
	for name, v := range map[string][]float64{"definition": s.definition, "grid": s.grid, "providers": s.providers, "overhead": s.overhead, "line": s.line} {
		r.WireRestParts[name] = [2]float64{percentile(v, 50), percentile(v, 99)}
	}
}

// countWaits counts turns by their wait, in whole milliseconds.
func countWaits(waits []float64) map[string]int {
	out := map[string]int{}
	for _, w := range waits {
		out[fmt.Sprint(math.Round(w))]++
	}
	return out
}

// waitsText is waits as "300 ms ×12, 525 ms ×40", shortest first.
func waitsText(waits map[string]int) string {
	keys := make([]string, 0, len(waits))
	for k := range waits {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		var x, y float64
		fmt.Sscan(a, &x)
		fmt.Sscan(b, &y)
		return int(x - y)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ms ×%d", k, waits[k])
	}
	return strings.Join(parts, ", ")
}

// restPartsText is the rest's parts as "definition 21.0 / 40.2, ...".
func restPartsText(parts map[string][2]float64) string {
	var out []string
	for _, name := range []string{"definition", "grid", "providers", "overhead", "line"} {
		if v, ok := parts[name]; ok {
			out = append(out, fmt.Sprintf("%s %.1f / %.1f", name, v[0], v[1]))
		}
	}
	return strings.Join(out, ", ")
}
