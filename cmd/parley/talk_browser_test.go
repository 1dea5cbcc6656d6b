package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/web/screenshots"
)

var dashboardLogin = regexp.MustCompile(`(?m)^email: (\S+)\npassword: (\S+)$`)

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

// received is what the page's peer connection received of the agent.
type received struct {
	Packets int    `json:"packets"`
	Codec   string `json:"codec"`
}

// watchReceived is run in the page before its own scripts: it keeps, in
// window.received, what each peer connection the page makes has received
// of the agent's audio (packets, codec), read from its stats every 200 ms
// while it is open, as the page closes it when the call ends.
const watchReceived = `window.received = {packets: 0, codec: ""};
(function () {
  const Native = window.RTCPeerConnection;
  if (!Native) return;
  window.RTCPeerConnection = function (...args) {
    const pc = new Native(...args);
    const timer = setInterval(async function () {
      if (pc.signalingState === "closed") { clearInterval(timer); return; }
      try {
        const stats = await pc.getStats();
        let codecId = "", packets = 0;
        stats.forEach(s => { if (s.type === "inbound-rtp" && s.kind === "audio") { packets = s.packetsReceived; codecId = s.codecId; } });
        stats.forEach(s => { if (s.id === codecId && packets >= window.received.packets) window.received = {packets: packets, codec: s.mimeType}; });
      } catch (e) {}
    }, 200);
    return pc;
  };
  window.RTCPeerConnection.prototype = Native.prototype;
})();`

// The dashboard's talk page, end to end: the first start's printed login
// signs in, the agent's page leads to "Talk to this agent", and Chromium's
// fake microphone (an espeak-ng WAV) talks to the agent through the real
// serve stack (SIP side, local speech, a fake model). Chromium offers its
// codecs and Parley answers with G.722, which the page's connection
// receives. The agent's reply appears in the page's live transcript, the
// agent ends the call (END_CALL_TOOL), and the page links to the call's
// record. Chromium is started with mDNS host-candidate hiding off so its
// offer carries real addresses (the server's candidates are on 127.0.0.1
// here). The screenshot is docs/screenshots/talk.png.
func TestDashboardTalkPage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and chromium")
	}
	requireLocalSpeech(t)
	chromium := requireChromium(t)
	wav := filepath.Join(t.TempDir(), "caller.wav")
	ssml := `<speak><break time="10s"/>Hello, I would like a table for two tonight please.<break time="20s"/></speak>`
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
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30400-30499",
		"--llm-base-url", fake.URL, "--llm-api-key", "test-key", "--llm-model", "fake-model")
	login := dashboardLogin.FindStringSubmatch(srv.logs.String())
	if login == nil {
		t.Fatalf("the first start printed no dashboard login:\n%s", srv.logs)
	}
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	agent := a.do("POST", "/agents", `{"name":"Front desk","promptTemplate":"You are the front desk of Luigi's.",
		"firstMessage":"Luigi's restaurant.","firstMessageMode":"static","endCallEnabled":true}`, 201)
	id := agent["id"].(string)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.WindowSize(900, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
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

	const password = "correct horse battery staple"
	base := "http://" + srv.addr
	steps := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, srv.logs)
		}
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchReceived}); err != nil {
		t.Fatal(err)
	}
	steps("sign in with the printed login",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), login[1]),
		chromedp.SendKeys(chromedp.CSS(`#password`), login[2]),
		chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`#newPassword`)),
		chromedp.SendKeys(chromedp.CSS(`#currentPassword`), login[2]),
		chromedp.SendKeys(chromedp.CSS(`#newPassword`), password),
		chromedp.SendKeys(chromedp.CSS(`#confirmPassword`), password),
		chromedp.Submit(chromedp.CSS(`#confirmPassword`)),
		chromedp.WaitVisible(`//h1[text()="Agents"]`),
	)
	steps("open the talk page from the agent's",
		chromedp.Navigate(base+"/agents/"+id),
		chromedp.Click(`//a[text()="Talk to this agent"]`),
		chromedp.WaitVisible(chromedp.CSS(`#talk-start`)),
	)
	steps("talk until the agent's reply shows",
		chromedp.Click(chromedp.CSS(`#talk-start`)),
		chromedp.WaitVisible(`//ol[@id="talk-transcript"]/li[contains(@class, "assistant") and contains(., "table for two tonight is booked")]`),
		// The agent ended the call: the page says so and links to its record.
		chromedp.WaitVisible(`//span[@id="talk-status" and contains(., "The call has ended")]`),
		chromedp.WaitVisible(chromedp.CSS(`#talk-call-link`)),
	)
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	screenshots.Save(t, "talk", shot)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[received](`window.received`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Packets < 100 || !strings.EqualFold(got.Codec, "audio/G722") {
		t.Errorf("chromium received %d packets of %q, want G.722 audio", got.Packets, got.Codec)
	}
	transcript, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#talk-transcript`)))
	if err != nil {
		t.Fatal(err)
	}
	// The caller's line and the agent's reply (waited for above). The fake
	// microphone plays its file from the click, not from the agent's first
	// message: a machine slow to connect (more than the file's 10 s of
	// silence) has the caller talk over the greeting, which then, cut before
	// the caller heard a word of it, is rightly not on the record (3 s of
	// silence did that every time here).
	if !strings.Contains(transcript, "You") {
		t.Errorf("the live transcript lacks the caller:\n%s", transcript)
	}
	if !strings.Contains(transcript, "Luigi's restaurant.") {
		t.Logf("the caller spoke over the first message (slow to connect):\n%s", transcript)
	}
	link, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("talk-call-link").getAttribute("href")`))
	if err != nil {
		t.Fatal(err)
	}
	callID := strings.TrimPrefix(link, "/calls/")
	var rec map[string]any
	eventually(t, "the call's end", func() bool {
		rec = a.do("GET", "/calls/"+callID, "", 200)
		return rec["status"] == "COMPLETED"
	})
	if rec["fromNumber"] != "web" || rec["agentId"] != id || rec["hangupCause"] != "END_CALL_TOOL" {
		t.Errorf("the linked call is from %v to agent %v and ended %v, want a web call to %s ended by the agent",
			rec["fromNumber"], rec["agentId"], rec["hangupCause"], id)
	}
	entries, _ := rec["transcript"].([]any)
	var said []string
	for _, e := range entries {
		e := e.(map[string]any)
		said = append(said, fmt.Sprintf("%v:%v", e["role"], e["text"]))
	}
	if joined := strings.Join(said, "\n"); !strings.Contains(joined, "user:") || !strings.Contains(joined, "assistant:"+reply) {
		t.Errorf("the call's transcript:\n%s\nwant the caller heard and the agent's reply", joined)
	}
}
