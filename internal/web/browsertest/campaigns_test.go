package browsertest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/domain"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// TestCampaignForm is a user creating a campaign: two calling windows
// (the second from the page's button) and a CSV file, previewed in the
// page, refused for its one bad line, which the page names; the corrected
// file creates the campaign with its recipients.
func TestCampaignForm(t *testing.T) {
	e := newEnv(t)
	ctx := tab(t)
	bg := context.Background()
	run(t, ctx, chromedp.EmulateViewport(1280, 900))
	orgID := signIn(t, e, ctx)
	a, err := e.svc.Agents.Create(bg, orgID, agent.Input{Name: opt.Value("Renewals desk"), PromptTemplate: opt.Value("You remind {{first_name}} to renew.")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := "toNumber,first_name\n" + strings.Join(recipientRows, "\n") + "\n"
	bad := "toNumber,first_name\n" + recipientRows[0] + "\n555-0102,Bob\n" + strings.Join(recipientRows[2:], "\n") + "\n"
	byID := func(id string) string { return `//*[@id="` + id + `"]` }

	run(t, ctx,
		chromedp.Click(`//nav//a[text()="Campaigns"]`),
		chromedp.WaitVisible(`//a[text()="New campaign"]`),
		chromedp.Click(`//a[text()="New campaign"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-name`)),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), "Spring renewals"),
		chromedp.SetValue(chromedp.CSS(`#f-agentId`), a.ID),
		chromedp.SendKeys(chromedp.CSS(`#f-fromNumbers`), "+14155550100\n+12125550100"),
		chromedp.SetValue(chromedp.CSS(`#f-timezone`), "America/New_York"),
		// Weekdays 9 to 5, and Saturday mornings: a second row from the page's button.
		chromedp.Click(`//input[@name="callingWindows.0.days" and @value="mon"]`),
		chromedp.Click(`//input[@name="callingWindows.0.days" and @value="tue"]`),
		chromedp.Click(`//input[@name="callingWindows.0.days" and @value="wed"]`),
		chromedp.Click(`//input[@name="callingWindows.0.days" and @value="thu"]`),
		chromedp.Click(`//input[@name="callingWindows.0.days" and @value="fri"]`),
		chromedp.SetValue(`//input[@name="callingWindows.0.start"]`, "09:00"),
		chromedp.SetValue(`//input[@name="callingWindows.0.end"]`, "17:00"),
		chromedp.Click(chromedp.CSS(`#add-window`)),
		chromedp.WaitVisible(`//input[@name="callingWindows.1.days" and @value="sat"]`),
		chromedp.Click(`//input[@name="callingWindows.1.days" and @value="sat"]`),
		chromedp.SetValue(`//input[@name="callingWindows.1.start"]`, "10:00"),
		chromedp.SetValue(`//input[@name="callingWindows.1.end"]`, "13:00"),
		chromedp.SetValue(byID("f-retry.maxAttempts"), "3"),
		chromedp.SetUploadFiles(chromedp.CSS(`#f-recipients`), []string{file("list.csv", bad)}),
		chromedp.WaitVisible(`//div[@id="csv-preview"]//td[text()="555-0102"]`),
	)
	preview := read(t, ctx, chromedp.Text(chromedp.CSS(`#csv-preview`)))
	if !strings.Contains(preview, "first_name") || !strings.Contains(preview, "Ada") || strings.Contains(preview, "Flo") {
		t.Fatalf("the preview shows %q, want the header and the first five rows", preview)
	}

	// The bad line is named; nothing is created.
	run(t, ctx,
		chromedp.Click(`//button[text()="Create campaign"]`),
		chromedp.WaitVisible(chromedp.CSS(`#csv-errors`)),
	)
	line := read(t, ctx, chromedp.Text(`//tr[@data-line="3"]`))
	if !strings.Contains(line, "3") || !strings.Contains(line, "toNumber") || !strings.Contains(line, "E.164") {
		t.Fatalf("the refused line reads %q", line)
	}
	if n := len(campaigns(t, e, orgID)); n != 0 {
		t.Fatalf("a refused file created %d campaigns", n)
	}
	run(t, ctx, chromedp.ScrollIntoView(chromedp.CSS(`#csv-errors`)))
	screenshot(t, ctx, "campaign-csv-refused")
	// The form kept its windows; the corrected file creates the campaign.
	if sat := read(t, ctx, chromedp.Evaluate[bool](`document.querySelector('input[name="callingWindows.1.days"][value="sat"]').checked`)); !sat {
		t.Fatal("the refused form lost its second window")
	}
	run(t, ctx,
		chromedp.SetUploadFiles(chromedp.CSS(`#f-recipients`), []string{file("list.csv", good)}),
		chromedp.Click(`//button[text()="Create campaign"]`),
		chromedp.WaitVisible(`//h1[text()="Spring renewals"]`),
		chromedp.WaitVisible(`//p[@id="added" and starts-with(text(), "6 recipients added")]`),
		chromedp.WaitVisible(`//strong[@id="count-pending" and text()="6"]`),
	)
	cs := campaigns(t, e, orgID)
	if len(cs) != 1 || len(cs[0].Config.CallingWindows) != 2 || cs[0].Config.CallingWindows[1].Days[0] != "sat" ||
		cs[0].Config.Retry.MaxAttempts != 3 || cs[0].Counts.Total != 6 {
		t.Fatalf("campaigns after the form: %+v", cs)
	}
}

// recipientRows are a list's rows: number, first_name.
var recipientRows = []string{"+14155550101,Ada", "+14155550102,Bob", "+12125550103,Cy", "+12125550104,Di", "+13125550105,Ed", "+13125550106,Flo"}

// farEnd is how the numbers of recipientRows answer: Cy's line is busy,
// Di's rings until someone hangs up, the others answer and hang up.
func farEnd(req call.DialRequest) calltest.Script {
	switch req.ToNumber {
	case "+12125550103":
		return calltest.Script{Fail: &call.DialError{Cause: call.CauseBusy, Message: "486 Busy Here"}}
	case "+12125550104":
		return calltest.Script{}
	}
	return calltest.Script{Answer: true, HangupAfterAnswer: true}
}

// TestCampaignProgress is a user running a campaign whose calls are
// really placed (the call queue and the dispatcher, a fake far end): one
// line at a time, so Di's ringing call holds the campaign. Started from
// the page, its progress moves as calls end; paused, it dials no one
// while Di's call is hung up from its call page; resumed, it calls the
// rest, Cy's busy line a second time, and completes, which the page shows
// by itself.
func TestCampaignProgress(t *testing.T) {
	var dialed atomic.Int32
	e := newEnvWith(t, callPlane(t, func(req call.DialRequest) calltest.Script {
		dialed.Add(1)
		return farEnd(req)
	}))
	ctx := tab(t)
	bg := context.Background()
	run(t, ctx, chromedp.EmulateViewport(1280, 900))
	orgID := signIn(t, e, ctx)
	a, err := e.svc.Agents.Create(bg, orgID, agent.Input{Name: opt.Value("Renewals desk"), PromptTemplate: opt.Value("You remind {{first_name}} to renew.")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.svc.Campaigns.Create(bg, orgID, campaign.Input{Name: opt.Value("Spring renewals"), AgentID: opt.Value(a.ID),
		FromNumbers: opt.Value([]string{"+14155550100", "+12125550100"}), MaxConcurrency: opt.Value(1), CallsPerMinute: opt.Value(600),
		Retry: opt.Value(campaign.RetryInput{MaxAttempts: opt.Value(2), DelaySeconds: opt.Value(0)})})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := campaign.ParseCSV(strings.NewReader("toNumber,first_name\n" + strings.Join(recipientRows, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Campaigns.AddRecipients(bg, orgID, c.ID, batch); err != nil {
		t.Fatal(err)
	}
	count := func(status, n string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(`//strong[@id="count-` + status + `" and text()="` + n + `"]`)
	}

	// Ada and Bob answer; Cy is busy (to be tried again); Di rings.
	run(t, ctx,
		chromedp.Navigate(e.url+"/campaigns/"+c.ID),
		chromedp.Click(`//button[text()="Start calling"]`),
		chromedp.WaitVisible(`//span[@id="campaign-status" and text()="running"]`),
		count("completed", "2"), count("in_progress", "1"), count("pending", "3"),
		chromedp.Reload(),
		chromedp.WaitVisible(`//tr[th[contains(., "+12125550104")]]//a[text()="call 1"]`),
		chromedp.ScrollIntoView(`//h1`),
	)
	screenshot(t, ctx, "campaign")

	// Paused: Di's call is hung up from its page, and no one else is called.
	run(t, ctx,
		chromedp.Click(`//button[text()="Pause"]`),
		chromedp.WaitVisible(`//span[@id="campaign-status" and text()="paused"]`),
		chromedp.WaitVisible(`//button[text()="Resume"]`),
	)
	if s := status(t, e, c); s != model.CampaignPaused {
		t.Fatalf("after pause: %s", s)
	}
	before := dialed.Load()
	run(t, ctx,
		chromedp.Click(`//tr[th[contains(., "+12125550104")]]//a[text()="call 1"]`),
		chromedp.Click(`//form[contains(@action, "/end")]//button`),
		chromedp.WaitNotPresent(`//form[contains(@action, "/end")]`),
		chromedp.WaitVisible(`//span[@class="badge call-CANCELED"]`),
		chromedp.Click(`//a[text()="the campaign that placed it"]`),
		chromedp.WaitVisible(`//span[@id="campaign-status" and text()="paused"]`),
		count("pending", "3"),
	)
	if after := dialed.Load(); after != before {
		t.Fatalf("a paused campaign dialed %d calls", after-before)
	}

	// Resumed: Ed and Flo answer, Cy is busy again and fails; the campaign
	// completes and the page reloads itself to show it.
	run(t, ctx,
		chromedp.Click(`//button[text()="Resume"]`),
		chromedp.WaitVisible(`//span[@id="campaign-status" and text()="running"]`),
		chromedp.WaitVisible(`//span[@id="campaign-status" and text()="completed"]`),
		count("completed", "4"), count("failed", "2"), count("pending", "0"),
	)
	if n := dialed.Load(); n != 7 {
		t.Fatalf("%d dials, want 7: six numbers, Cy's twice", n)
	}
	rs, _, err := e.svc.Campaigns.ListRecipients(bg, orgID, c.ID, store.RecipientFilter{Page: store.Page{Number: 1, Size: 10, SortDir: store.Asc}})
	if err != nil || len(rs) != 6 || rs[2].Attempts != 2 || rs[2].Status != model.RecipientFailed || rs[3].Status != model.RecipientFailed {
		t.Fatalf("recipients at the end: %+v, %v", rs, err)
	}
	run(t, ctx,
		chromedp.Click(`//nav//a[text()="Campaigns"]`),
		chromedp.WaitVisible(`//table//a[text()="Spring renewals"]`),
		chromedp.WaitVisible(`//span[contains(text(), "6 of 6 done")]`),
	)
	screenshot(t, ctx, "campaigns")
}

// callPlane runs a call queue whose far end answers as script says, and
// the campaign dispatcher placing calls through it; both stop when t ends.
func callPlane(t *testing.T, script func(call.DialRequest) calltest.Script) func(store.Store, *domain.Services) {
	return func(st store.Store, svc *domain.Services) {
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		q := callqueue.New(callqueue.Options{Store: st, Dialer: &calltest.Dialer{Script: script}, Webhooks: noPosts{}, Secret: noSecret,
			Node: "browsertest", LeaseTTL: 5 * time.Second, Poll: 50 * time.Millisecond, Drain: 50 * time.Millisecond, Logger: log})
		d := &campaign.Dispatcher{Store: st, Calls: q, Webhooks: noHooks{}, Secret: noSecret, Node: "browsertest",
			Tick: 100 * time.Millisecond, Logger: log}
		svc.Queue, svc.Campaigns.Wake = q, d.Wake
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); q.Run(ctx) }()
		go func() { defer wg.Done(); d.Run(ctx) }()
		t.Cleanup(func() {
			stop()
			wg.Wait()
		})
		<-q.Recovered()
	}
}

type noPosts struct{}

func (noPosts) PostCall(context.Context, string, string, []byte) string { return model.WebhookSkipped }

type noHooks struct{}

func (noHooks) Deliver(context.Context, webhook.Delivery) webhook.Result {
	return webhook.Result{Sent: true, StatusCode: 200}
}

func noSecret(context.Context, string) (string, error) { return "", nil }

// TestDoNotCallPage: a number added by hand, then a CSV import refused
// for its bad line, named on the page.
func TestDoNotCallPage(t *testing.T) {
	e := newEnv(t)
	ctx := tab(t)
	run(t, ctx, chromedp.EmulateViewport(1280, 900))
	orgID := signIn(t, e, ctx)
	path := filepath.Join(t.TempDir(), "dnc.csv")
	if err := os.WriteFile(path, []byte("number,reason\n+14155550101,moved\nnot a number,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, ctx,
		chromedp.Click(`//nav//a[text()="Do not call"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-number`)),
		chromedp.SendKeys(chromedp.CSS(`#f-number`), "+14155550100"),
		chromedp.SendKeys(chromedp.CSS(`#f-reason`), "asked not to be called"),
		chromedp.Click(`//button[text()="Add to the list"]`),
		chromedp.WaitVisible(`//p[@id="notice" and text()="Added to the list."]`),
		chromedp.Click(`//summary[text()="Import a CSV file"]`),
		chromedp.SetUploadFiles(chromedp.CSS(`#f-file`), []string{path}),
		chromedp.Click(`//button[text()="Import"]`),
		chromedp.WaitVisible(chromedp.CSS(`#csv-errors`)),
	)
	if line := read(t, ctx, chromedp.Text(`//tr[@data-line="3"]`)); !strings.Contains(line, "number") || !strings.Contains(line, "E.164") {
		t.Fatalf("the refused line reads %q", line)
	}
	list, n, err := e.svc.Suppressions.List(context.Background(), orgID, store.SuppressionFilter{Page: store.Page{Number: 1, Size: 10}})
	if err != nil || n != 1 || list[0].Number != "+14155550100" {
		t.Fatalf("the list after a refused import: %+v, %v", list, err)
	}
	screenshot(t, ctx, "do-not-call")
}

func campaigns(t *testing.T, e *env, orgID string) []model.Campaign {
	t.Helper()
	cs, _, err := e.svc.Campaigns.List(context.Background(), orgID, store.CampaignFilter{Page: store.Page{Number: 1, Size: 10}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func status(t *testing.T, e *env, c model.Campaign) string {
	t.Helper()
	got, err := e.svc.Campaigns.Get(context.Background(), c.OrgID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got.Status
}
