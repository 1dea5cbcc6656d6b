package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// TestCampaignPages is a user calling a list: a new campaign with two
// calling windows and a CSV file, previewed in the page, refused for its
// one bad line, which the page names; the corrected file creates it. Then
// the campaign is started and its progress followed as recipients finish,
// paused and resumed.
func TestCampaignPages(t *testing.T) {
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
	rows := []string{"+14155550101,Ada", "+14155550102,Bob", "+12125550103,Cy", "+12125550104,Di", "+13125550105,Ed", "+13125550106,Flo"}
	good := "toNumber,first_name\n" + strings.Join(rows, "\n") + "\n"
	bad := "toNumber,first_name\n" + rows[0] + "\n555-0102,Bob\n" + strings.Join(rows[2:], "\n") + "\n"
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
	)
	cs := campaigns(t, e, orgID)
	if len(cs) != 1 || len(cs[0].Config.CallingWindows) != 2 || cs[0].Config.CallingWindows[1].Days[0] != "sat" || cs[0].Config.Retry.MaxAttempts != 3 {
		t.Fatalf("campaigns after the form: %+v", cs)
	}
	c := cs[0]

	// Start, and follow the progress as recipients are called.
	run(t, ctx,
		chromedp.Click(`//button[text()="Start calling"]`),
		chromedp.WaitVisible(`//span[@id="campaign-status" and text()="running"]`),
	)
	callID := finish(t, e, c, "+14155550101", model.RecipientCompleted)
	finish(t, e, c, "+14155550102", model.RecipientCompleted)
	finish(t, e, c, "+12125550103", model.RecipientFailed)
	finish(t, e, c, "+12125550104", model.RecipientInProgress)
	run(t, ctx,
		chromedp.WaitVisible(`//strong[@id="count-completed" and text()="2"]`),
		chromedp.WaitVisible(`//strong[@id="count-in_progress" and text()="1"]`),
		chromedp.WaitVisible(`//span[@id="done-count" and text()="3"]`),
	)
	if n := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#progress svg rect.seg-completed, #progress svg rect.seg-failed, #progress svg rect.seg-in_progress, #progress svg rect.seg-pending").length`)); n != 4 {
		t.Fatalf("the bar has %d segments, want 4", n)
	}
	run(t, ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(`//a[@href="/calls/`+callID+`"]`),
		chromedp.ScrollIntoView(`//h1`),
	)
	screenshot(t, ctx, "campaign")

	// Pause and resume.
	run(t, ctx,
		chromedp.Click(`//button[text()="Pause"]`),
		chromedp.WaitVisible(`//span[@id="campaign-status" and text()="paused"]`),
		chromedp.WaitVisible(`//button[text()="Resume"]`),
	)
	if s := status(t, e, c); s != model.CampaignPaused {
		t.Fatalf("after pause: %s", s)
	}
	run(t, ctx,
		chromedp.Click(`//button[text()="Resume"]`),
		chromedp.WaitVisible(`//span[@id="campaign-status" and text()="running"]`),
		chromedp.WaitVisible(`//button[text()="Pause"]`),
	)
	if s := status(t, e, c); s != model.CampaignRunning {
		t.Fatalf("after resume: %s", s)
	}
	// The last live call ends: the polled progress follows.
	finish(t, e, c, "+12125550104", model.RecipientCompleted)
	run(t, ctx, chromedp.WaitVisible(`//strong[@id="count-completed" and text()="3"]`))

	run(t, ctx,
		chromedp.Click(`//nav//a[text()="Campaigns"]`),
		chromedp.WaitVisible(`//table//a[text()="Spring renewals"]`),
		chromedp.WaitVisible(`//span[contains(text(), "4 of 6 done")]`),
	)
	screenshot(t, ctx, "campaigns")
}

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

// finish moves the recipient with number to status, with a call of its
// attempt, as the dispatcher does when a call is placed or ends (the
// dispatcher is not run here: the test is the call plane). It returns the
// attempt's call id.
func finish(t *testing.T, e *env, c model.Campaign, number, status string) string {
	t.Helper()
	ctx := context.Background()
	callID := model.NewID()
	err := e.st.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetCampaignForUpdate(ctx, c.OrgID, c.ID); err != nil {
			return err
		}
		rs, _, err := tx.ListCampaignRecipients(ctx, c.OrgID, c.ID, store.RecipientFilter{Page: store.Page{Number: 1, Size: 100, SortDir: store.Asc}})
		if err != nil {
			return err
		}
		for _, r := range rs {
			if r.ToNumber != number {
				continue
			}
			after := r
			after.Status, after.UpdatedAt = status, model.Now()
			if r.Status == model.RecipientPending {
				after.Attempts = r.Attempts + 1
				after.CallIDs = append(append([]string{}, r.CallIDs...), callID)
			}
			if ok, err := tx.ChangeRecipient(ctx, &r, &after); err != nil || !ok {
				t.Errorf("recipient %s: changed %v, %v", number, ok, err)
			}
			return nil
		}
		t.Errorf("no recipient %s", number)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return callID
}
