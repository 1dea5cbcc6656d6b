package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

// Two agents understand each other offline: a patient (A) calls a dental
// clinic's front desk (B) over the loopback trunk, both on the local
// recognizer and espeak-ng with no cloud key, and each side's transcript
// of the other must match what the other said with at least minHeard
// word accuracy. Each recognizer is adapted to its own agent's texts (its
// prompt and first message), not to the other side's lines. The response
// gaps are read off B's stereo recording and logged; their distribution
// is measured by BenchmarkAgentsConverseOffline (docs/benchmarks.md,
// "Response gap"), not asserted here, where a loaded machine would fail
// a timing.
func TestAgentsUnderstandEachOtherOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireLocalSpeech(t)
	c := converseOffline(t, build(t), 30400)
	t.Logf("B heard A with %.0f %% word accuracy: %q", 100*c.bHeardA, c.bHeard)
	t.Logf("A heard B with %.0f %% word accuracy: %q", 100*c.aHeardB, c.aHeard)
	t.Logf("response gaps from B's recording: %v (median %v)", c.gaps, median(c.gaps))
	if c.bHeardA < minHeard {
		t.Errorf("B heard A with %.0f %% word accuracy, want at least %.0f %%:\nsaid:  %q\nheard: %q", 100*c.bHeardA, 100*minHeard, c.aSaid, c.bHeard)
	}
	if c.aHeardB < minHeard {
		t.Errorf("A heard B with %.0f %% word accuracy, want at least %.0f %%:\nsaid:  %q\nheard: %q", 100*c.aHeardB, 100*minHeard, c.bSaid, c.aHeard)
	}
	if len(c.gaps) < 4 {
		t.Errorf("%d response gaps on the recording, want one per turn (at least 4)", len(c.gaps))
	}
}

// BenchmarkAgentsConverseOffline measures the response gap of offline
// conversations: b.N calls as in TestAgentsUnderstandEachOtherOffline, one
// after another, every gap of every call pooled. It reports the median
// and 90th percentile gap and the mean word accuracy of each side.
func BenchmarkAgentsConverseOffline(b *testing.B) {
	requireLocalSpeech(b)
	bin := build(b)
	var gaps []time.Duration
	var accA, accB float64
	for i := 0; b.Loop(); i++ {
		c := converseOffline(b, bin, 30400+(i%4)*100)
		gaps = append(gaps, c.gaps...)
		accA += c.aHeardB
		accB += c.bHeardA
		b.Logf("call %d: gaps %v; A heard %.0f %%, B heard %.0f %%", i, c.gaps, 100*c.aHeardB, 100*c.bHeardA)
	}
	b.ReportMetric(float64(median(gaps).Milliseconds()), "gap-p50-ms")
	b.ReportMetric(float64(percentile(gaps, 0.9).Milliseconds()), "gap-p90-ms")
	b.ReportMetric(float64(len(gaps))/float64(b.N), "gaps/call")
	b.ReportMetric(100*accA/float64(b.N), "A-heard-%")
	b.ReportMetric(100*accB/float64(b.N), "B-heard-%")
}

// minHeard is the word accuracy each side must reach. Issue 18 aims at
// 70 %: calls score 72–75 % (B) and 84–90 % (A) since A's first utterance
// waits for A's domain model and the generic model is blended in
// (BenchmarkAgentsConverseOffline, docs/benchmarks.md), but one call of
// fifteen scored 66 % on B's side before that, so the test holds a floor
// with a margin for a loaded machine (before the in-process recognizer and
// G.722 it was 12–16 %, before the wait 57–75 %); the benchmark tracks the
// goal.
const minHeard = 0.6

// conversation is what one offline call showed.
type conversation struct {
	aSaid, bSaid   string // each side's lines the other had the chance to hear
	aHeard, bHeard string // each side's user entries, joined
	aHeardB        float64
	bHeardA        float64
	gaps           []time.Duration // from B's recording, both directions
}

var (
	patientLines = []string{
		"Hi, I would like to book a cleaning for next Tuesday morning.",
		"Yes, nine thirty works for me, my name is Maria Lopez.",
		"No, that is all, thank you very much, goodbye.",
	}
	deskGreeting = "Thank you for calling Bright Smile Dental, how can I help you today?"
	deskLines    = []string{
		"Sure, we have an opening on Tuesday at nine thirty in the morning, does that work for you?",
		"Thank you Maria, your cleaning is booked for Tuesday at nine thirty, is there anything else I can help with?",
		"You are welcome, have a great day, goodbye!",
	}
)

// converseOffline runs one call from the patient to the front desk on a
// fresh server with RTP ports from rtpBase, and reads its transcripts and
// B's recording.
func converseOffline(tb testing.TB, bin string, rtpBase int) conversation {
	tb.Helper()
	fake := llmtest.New(tb, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		if strings.HasPrefix(system, "Summarize") {
			return llmtest.Reply{Text: []string{"A patient booked a cleaning."}}
		}
		// Each side says its next line whatever it heard: the lines it
		// already said are the assistant messages (B's greeting is one).
		said := 0
		for _, m := range r.Messages {
			if m["role"] == "assistant" {
				said++
			}
		}
		if strings.HasPrefix(system, "You are Maria Lopez, a patient") {
			return llmtest.Reply{Text: []string{patientLines[min(said, len(patientLines)-1)]}}
		}
		if r.Messages[len(r.Messages)-1]["role"] == "tool" {
			return llmtest.Reply{}
		}
		if next := said - 1; next < len(deskLines)-1 {
			return llmtest.Reply{Text: []string{deskLines[next]}}
		}
		return llmtest.Reply{Text: []string{deskLines[len(deskLines)-1]},
			ToolCalls: []llmtest.ToolCallReply{{ID: "call_end", Name: "end_call", Arguments: "{}"}}}
	})
	hooks := newReceiver(tb)
	srv := startServer(tb, bin, []string{"PARLEY_DATA_DIR=" + tb.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", fmt.Sprintf("%d-%d", rtpBase, rtpBase+99),
		"--llm-base-url", fake.URL, "--llm-model", "fake-model")
	a := api{t: tb, base: "http://" + srv.addr + "/v1", key: srv.key}
	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	desk := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Front desk",
		"promptTemplate":"You are the front desk of Bright Smile Dental. Patients call to book a cleaning, a checkup or a filling. Offer the next opening, for example Tuesday at nine thirty in the morning, ask the patient's name, confirm the booking and ask whether there is anything else.",
		"firstMessage":%q,"firstMessageMode":"static","endCallEnabled":true,"postCallWebhookUrl":%q}`, deskGreeting, hooks.URL), 201)
	patient := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Patient",
		"promptTemplate":"You are Maria Lopez, a patient calling Bright Smile Dental to book a cleaning next Tuesday morning. Accept an opening in the morning, give your name when asked, and say goodbye when the booking is confirmed.",
		"sipTrunkId":%q,"postCallWebhookUrl":%q}`, trunk["id"], hooks.URL), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551239000","agentId":%q}`, desk["id"]), 201)
	out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":"+15550001000","toNumber":"+15551239000"}`, patient["id"]), 201)
	outID := out["id"].(string)

	// B ends the call; both records settle and both webhooks arrive.
	in, outRec := awaitConversation(tb, a, srv, hooks, outID, 240*time.Second)
	if in["hangupCause"] != "END_CALL_TOOL" {
		tb.Errorf("B's call ended %v %v %v", in["status"], in["hangupCause"], in["errorMessage"])
	}

	var c conversation
	// B heard each of A's lines before answering it; A heard B's greeting
	// and B's lines up to A's goodbye (B's own goodbye may be cut by the
	// hang-up).
	c.aSaid = strings.Join(patientLines, " ")
	c.bHeard = heardBefore(in, len(deskLines)+1)
	c.bSaid = strings.Join(append([]string{deskGreeting}, deskLines[:len(deskLines)-1]...), " ")
	c.aHeard = heardBefore(outRec, len(patientLines))
	c.bHeardA = wordAccuracy(c.aSaid, c.bHeard)
	c.aHeardB = wordAccuracy(c.bSaid, c.aHeard)

	rec := recording(tb, a, in["id"].(string))
	caller, agent := speechSpans(rec.Channels[0], rec.Rate), speechSpans(rec.Channels[1], rec.Rate)
	c.gaps = append(responseGaps(caller, agent), responseGaps(agent, caller)...)
	return c
}

// heardBefore joins the text of rec's user entries that come before its
// n-th assistant line (counting from 1; all of them when there are fewer).
func heardBefore(rec map[string]any, n int) string {
	entries, _ := rec["transcript"].([]any)
	var heard []string
	said := 0
	for _, e := range entries {
		e := e.(map[string]any)
		switch {
		case e["role"] == "assistant" && e["type"] != "tool_call":
			if said++; said == n {
				return strings.Join(heard, " ")
			}
		case e["role"] == "user":
			if s, _ := e["text"].(string); s != "" {
				heard = append(heard, s)
			}
		}
	}
	return strings.Join(heard, " ")
}

// recording downloads a call's stereo recording.
func recording(tb testing.TB, a api, id string) audio.WAV {
	tb.Helper()
	req, _ := http.NewRequest("GET", a.base+"/calls/"+id+"/recording", nil)
	req.Header.Set("x-api-key", a.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	wav, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	rec, err := audio.ReadWAV(bytes.NewReader(wav))
	if resp.StatusCode != 200 || err != nil || len(rec.Channels) != 2 {
		tb.Fatalf("recording of %s: %d, %v", id, resp.StatusCode, err)
	}
	return rec
}
