package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	sttfake "github.com/parley-voice/parley/internal/provider/stt/openai/openaitest"
	ttsfake "github.com/parley-voice/parley/internal/provider/tts/openai/openaitest"
)

// voiceRate is the rate the speech fake answers in: a Piper voice's.
const voiceRate = 22050

// codebook gives each line an agent says a pitch: the speech fake speaks
// a line as a tone at its pitch, and the transcription fake hears a line
// by it. A line played at the wrong speed (22,050 Hz taken for 24 kHz)
// sounds 8.8% sharp, which is no line's pitch, so it is not heard at all.
type codebook struct {
	mu    sync.Mutex
	pitch map[string]float64
}

func (c *codebook) add(lines ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range lines {
		c.pitch[l] = 500 + 200*float64(len(c.pitch))
	}
}

func (c *codebook) of(line string) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.pitch[line]
	return f, ok
}

// hear is the line whose pitch holds most of the energy of pcm's sound
// (its silent frames left out), at least a third, or "".
func (c *codebook) hear(pcm []int16, rate int) string {
	var sound []int16
	for frame := range slices.Chunk(pcm, rate/50) {
		if audio.RMS(frame) > 0.01 {
			sound = append(sound, frame...)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	best, share := "", 1.0/3
	for line, f := range c.pitch {
		if s := audio.ToneShare(sound, rate, f); s > share {
			best, share = line, s
		}
	}
	return best
}

// voice is how the speech fake says a line: its pitch in as much white
// noise, 900 ms long. The noise keeps the VAD from taking it for a
// signalling tone (it passes steady tones by); the tone still holds most
// of the energy in the phone band.
func voice(pitch float64, rate int, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, uint64(pitch)))
	amp := 0.4 * 32767
	out := make([]int16, rate*9/10)
	for i := range out {
		v := amp*math.Sin(2*math.Pi*pitch*float64(i)/float64(rate)) + r.NormFloat64()*amp/math.Sqrt2
		out[i] = int16(max(-32768, min(32767, v)))
	}
	return out
}

// A fully local stack through the front door: the built binary runs with
// separate speech-to-text and speech URLs, no key anywhere (the model's
// server takes none either), a realtime transcription server and a speech
// server that answers 22,050 Hz WAVs whatever rate is asked for. Agent A
// calls agent B over the loopback trunk; each side's transcript holds
// exactly what the other said, and B's recording carries its greeting at
// the pitch it was synthesized at: played at the right speed.
func TestLocalStackOverTheLoopbackTrunk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	greeting := "Luigi's restaurant, how can I help you?"
	customer := []string{"Hi, I would like a table for two tonight.", "Perfect, thank you, goodbye."}
	frontDesk := []string{"Certainly, a table for two tonight is booked.", "You are welcome, goodbye!"}
	book := &codebook{pitch: map[string]float64{}}
	book.add(greeting)
	book.add(customer...)
	book.add(frontDesk...)

	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		if strings.HasPrefix(system, "Summarize") {
			return llmtest.Reply{Text: []string{"A table for two was booked."}}
		}
		heard := r.Turns()
		if strings.HasPrefix(system, "You are a customer") {
			return llmtest.Reply{Text: []string{customer[min(max(heard, 1), len(customer))-1]}}
		}
		if heard >= len(frontDesk) {
			if r.Messages[len(r.Messages)-1]["role"] == "tool" {
				return llmtest.Reply{}
			}
			return llmtest.Reply{Text: []string{frontDesk[1]},
				ToolCalls: []llmtest.ToolCallReply{{ID: "call_end", Name: "end_call", Arguments: "{}"}}}
		}
		return llmtest.Reply{Text: []string{frontDesk[max(heard, 1)-1]}}
	})
	var spoken atomic.Uint64 // a seed of its own for each line's noise
	speech := ttsfake.New(t, func(r ttsfake.Request) ttsfake.Reply {
		f, ok := book.of(r.Input)
		if !ok {
			t.Errorf("asked to say %q, no line of the script", r.Input)
			f = 300
		}
		return ttsfake.Reply{PCM: voice(f, voiceRate, spoken.Add(1)), Rate: voiceRate}
	})
	transcription := sttfake.New(t, func(r sttfake.Request) sttfake.Reply {
		return sttfake.Reply{Text: book.hear(r.Samples, r.Rate)}
	}, sttfake.Realtime(sttfake.GA))

	bin := build(t)
	srv := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir(), "PARLEY_TTS_BASE_URL=" + speech.URL},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "32000-32099",
		"--llm-base-url", model.URL, "--llm-model", "local-model",
		"--stt", "openai", "--stt-base-url", transcription.URL, "--openai-stt-model", "Systran/faster-whisper-small",
		"--tts", "openai", "--openai-tts-model", "kokoro")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}

	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	b := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Front desk","promptTemplate":"You are the front desk of Luigi's restaurant.",
		"firstMessage":%q,"firstMessageMode":"static","endCallEnabled":true}`, greeting), 201)
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Customer","promptTemplate":"You are a customer calling to book a table.",
		"sipTrunkId":%q}`, trunk["id"]), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230000","agentId":%q}`, b["id"]), 201)
	out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":"+15550001000","toNumber":"+15551230000"}`, caller["id"]), 201)
	outID := out["id"].(string)

	// B ends the call with end_call; both records settle.
	var in, outRec map[string]any
	deadline := time.Now().Add(120 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the conversation did not end: %v\n%v\n%s", a.do("GET", "/calls/"+outID, "", 200), in, srv.logs)
		}
		time.Sleep(200 * time.Millisecond)
		list := a.do("GET", "/calls?direction=INBOUND", "", 200)
		data, _ := list["data"].([]any)
		if len(data) != 1 {
			continue
		}
		in = a.do("GET", "/calls/"+data[0].(map[string]any)["id"].(string), "", 200)
		outRec = a.do("GET", "/calls/"+outID, "", 200)
		if in["status"] != "IN_PROGRESS" && outRec["status"] != "IN_PROGRESS" && in["endedAt"] != nil && outRec["endedAt"] != nil {
			break
		}
	}
	if in["status"] != "COMPLETED" || in["hangupCause"] != "END_CALL_TOOL" {
		t.Errorf("B's call ended %v %v %v\n%s", in["status"], in["hangupCause"], in["errorMessage"], srv.logs)
	}

	// Each side heard, word for word, what the other said.
	lines := func(rec map[string]any, role string) []string {
		var got []string
		for _, e := range rec["transcript"].([]any) {
			if e := e.(map[string]any); e["role"] == role {
				got = append(got, e["text"].(string))
			}
		}
		return got
	}
	if got, want := lines(in, "user"), customer; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("B heard %q, want %q", got, want)
	}
	if got, want := lines(outRec, "user"), []string{greeting, frontDesk[0]}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("A heard %q, want %q", got, want)
	}
	if got, want := lines(in, "assistant"), []string{greeting, frontDesk[0], frontDesk[1]}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("B said %q, want %q", got, want)
	}

	// B's recording (caller left, agent right): its greeting at the pitch
	// it was synthesized at, not 8.8% sharp.
	rec := recording(t, a, in["id"].(string))
	agent := rec.Channels[1]
	start := -1
	frame := rec.Rate / 50
	for i := 0; i+frame <= len(agent); i += frame {
		if audio.RMS(agent[i:i+frame]) > 0.05 {
			start = i
			break
		}
	}
	if start < 0 || start+rec.Rate/2 > len(agent) {
		t.Fatalf("no speech on the agent's channel of %s", rec.Duration())
	}
	said := agent[start+rec.Rate/10 : start+rec.Rate/2] // 400 ms inside the greeting
	pitch, _ := book.of(greeting)
	if !audio.DetectTone(said, rec.Rate, pitch) || audio.DetectTone(said, rec.Rate, pitch*24000/voiceRate) {
		t.Errorf("the greeting plays with %.2f of its energy at %.0f Hz (the pitch synthesized) and %.2f at %.0f Hz (too fast)",
			audio.ToneShare(said, rec.Rate, pitch), pitch, audio.ToneShare(said, rec.Rate, pitch*24000/voiceRate), pitch*24000/voiceRate)
	}

	// The servers: no key anywhere, the rate asked for, realtime sessions.
	for _, r := range speech.Requests() {
		if _, ok := r.Header["Authorization"]; ok || r.ResponseFormat != "wav" || r.SampleRate == nil || *r.SampleRate != rec.Rate ||
			r.Model != "kokoro" {
			t.Errorf("speech request: Authorization %q, %q at %v Hz, model %q", r.Header.Get("Authorization"), r.ResponseFormat, r.SampleRate, r.Model)
		}
	}
	sessions := transcription.Sessions()
	if len(sessions) < 4 {
		t.Errorf("%d realtime sessions, want one per utterance heard (4 or more)", len(sessions))
	}
	for _, s := range sessions {
		if _, ok := s.Header["Authorization"]; ok || s.Model != "Systran/faster-whisper-small" || s.Language != "en" {
			t.Errorf("realtime session: Authorization %q, model %q, language %q", s.Header.Get("Authorization"), s.Model, s.Language)
		}
	}
	for _, r := range model.Requests() {
		if _, ok := r.Header["Authorization"]; ok {
			t.Errorf("the model was sent Authorization %q", r.Header.Get("Authorization"))
		}
	}
	if !strings.Contains(srv.logs.String(), `"stt":{"engine":"openai","base_url":"`+transcription.URL+`"`) ||
		!strings.Contains(srv.logs.String(), `"tts":{"engine":"openai","base_url":"`+speech.URL+`"`) {
		t.Errorf("the configuration line does not name each side's server:\n%s", srv.logs)
	}
}
