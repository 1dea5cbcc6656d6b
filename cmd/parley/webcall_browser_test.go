package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

// received is what the page's peer connection received of the agent.
type received struct {
	Packets int    `json:"packets"`
	Codec   string `json:"codec"`
}

// requireChromium fails under CI and skips elsewhere without Debian's
// chromium.
func requireChromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("chromium is missing (run scripts/deps.sh): %v", err)
	}
	t.Skipf("chromium is missing: %v", err)
	return ""
}

// talkPage is the least a web page needs to talk to an agent: the
// microphone, a data channel (hang-ups travel over it), a complete offer,
// and the answer. It posts the offer to its own origin, where the test
// adds the API key, as a dashboard's server side would.
const talkPage = `<!doctype html>
<title>talk</title>
<audio id="agent" autoplay></audio>
<script>
window.state = "new";
async function talk() {
  const pc = new RTCPeerConnection();
  window.pc = pc;
  const dc = pc.createDataChannel("parley");
  dc.onclose = () => { window.state = "ended"; };
  const mic = await navigator.mediaDevices.getUserMedia({audio: true});
  mic.getTracks().forEach(t => pc.addTrack(t, mic));
  pc.ontrack = e => { document.getElementById("agent").srcObject = e.streams[0] || new MediaStream([e.track]); };
  pc.onconnectionstatechange = () => { if (window.state !== "ended") window.state = pc.connectionState; };
  await pc.setLocalDescription(await pc.createOffer());
  if (pc.iceGatheringState !== "complete") {
    await new Promise(done => pc.addEventListener("icegatheringstatechange", () => { if (pc.iceGatheringState === "complete") done(); }));
  }
  const r = await fetch("/offer", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({sdp: pc.localDescription.sdp})});
  const j = await r.json();
  if (!r.ok) throw new Error(JSON.stringify(j));
  window.callId = j.data.call.id;
  await pc.setRemoteDescription({type: "answer", sdp: j.data.sdp});
  return window.callId;
}
async function received() {
  const stats = await window.pc.getStats();
  let out = {packets: 0, codec: ""};
  stats.forEach(s => { if (s.type === "inbound-rtp" && s.kind === "audio") { out.packets = s.packetsReceived; out.codecId = s.codecId; } });
  stats.forEach(s => { if (s.id === out.codecId) out.codec = s.mimeType; });
  return out;
}
</script>`

// Chromium talks to an agent: its fake microphone plays an espeak-ng WAV
// (a pause, then a sentence), the page offers audio and a data channel,
// and Parley answers with G.722; the agent hears the sentence, answers
// and ends the call, which closes the page's data channel. Chromium is
// started with mDNS host-candidate hiding off so its offer carries real
// addresses (the server's candidates are on 127.0.0.1 here).
func TestChromiumTalksToTheAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and chromium")
	}
	requireLocalSpeech(t)
	chromium := requireChromium(t)
	wav := filepath.Join(t.TempDir(), "caller.wav")
	ssml := `<speak><break time="4s"/>Hello, I would like a table for two tonight please.<break time="20s"/></speak>`
	if out, err := exec.Command("espeak-ng", "-m", "-w", wav, ssml).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	reply := "Certainly, a table for two tonight is booked. Goodbye!"
	fake := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		if strings.HasPrefix(system, "Summarize") {
			return llmtest.Reply{Text: []string{"A caller booked a table."}}
		}
		if r.Messages[len(r.Messages)-1]["role"] == "tool" {
			return llmtest.Reply{}
		}
		return llmtest.Reply{Text: []string{reply}, ToolCalls: []llmtest.ToolCallReply{{ID: "call_end", Name: "end_call", Arguments: "{}"}}}
	})
	srv := startServer(t, build(t), []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30300-30399",
		"--llm-base-url", fake.URL, "--llm-api-key", "test-key", "--llm-model", "fake-model")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	agent := a.do("POST", "/agents", `{"name":"Front desk","promptTemplate":"You are the front desk of Luigi's.",
		"firstMessage":"Luigi's restaurant.","firstMessageMode":"static","endCallEnabled":true}`, 201)

	page := http.NewServeMux()
	page.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, talkPage) })
	page.HandleFunc("POST /offer", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequest("POST", a.base+"/agents/"+agent["id"].(string)+"/web-calls", bytes.NewReader(body))
		req.Header.Set("x-api-key", a.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
	site := httptest.NewServer(page)
	defer site.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-audio-capture", wav),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.Flag("disable-features", "WebRtcHideLocalIpsWithMdns"))
	alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer stopAlloc()
	browser, stopBrowser := chromedp.NewContext(alloc)
	defer stopBrowser()
	ctx, cancel := context.WithTimeout(browser, 150*time.Second)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL)); err != nil {
		t.Fatal(err)
	}
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`talk()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("the page did not start the call: %v\n%s", err, srv.logs)
	}
	state := ""
	for state != "ended" {
		if state, err = chromedp.Run(ctx, chromedp.Evaluate[string](`window.state`)); err != nil {
			t.Fatalf("the call did not end on the page (last state %q): %v\n%v\n%s", state, err, a.do("GET", "/calls/"+id, "", 200), srv.logs)
		}
		if state == "failed" {
			t.Fatalf("the page's connection failed:\n%s", srv.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[received](`received()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if got.Packets < 100 || !strings.EqualFold(got.Codec, "audio/G722") {
		t.Errorf("chromium received %d packets of %q, want G.722 audio", got.Packets, got.Codec)
	}
	var rec map[string]any
	eventually(t, "the call's end", func() bool {
		rec = a.do("GET", "/calls/"+id, "", 200)
		return rec["status"] == "COMPLETED"
	})
	if rec["hangupCause"] != "END_CALL_TOOL" || rec["fromNumber"] != "web" {
		t.Errorf("call from %v ended %v", rec["fromNumber"], rec["hangupCause"])
	}
	entries, _ := rec["transcript"].([]any)
	var said []string
	for _, e := range entries {
		e := e.(map[string]any)
		said = append(said, fmt.Sprintf("%v:%v", e["role"], e["text"]))
	}
	joined := strings.Join(said, "\n")
	if !strings.Contains(joined, "user:") || !strings.Contains(joined, "assistant:"+reply) {
		t.Errorf("transcript:\n%s\nwant the caller heard and the agent's reply", joined)
	}
}
