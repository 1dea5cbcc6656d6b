package browsertest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// TestAdminPages is an administrator connecting the organization to the
// phone network: a SIP trunk that registers, a number on it for an agent,
// the concurrency limit and a webhook signing secret; then a knowledge
// base's "try a query".
func TestAdminPages(t *testing.T) {
	e := newEnv(t)
	ctx := tab(t)
	bg := context.Background()
	run(t, ctx, chromedp.EmulateViewport(1280, 900))
	orgID := signIn(t, e, ctx)
	a, err := e.svc.Agents.Create(bg, orgID, agent.Input{Name: opt.Value("Front desk"), PromptTemplate: opt.Value("You greet callers.")})
	if err != nil {
		t.Fatal(err)
	}
	byID := func(id string) string { return `//*[@id="` + id + `"]` }

	// A trunk that registers; a lifetime under the limit is refused beside its field.
	run(t, ctx,
		chromedp.Click(`//nav//a[text()="SIP trunks"]`),
		chromedp.WaitVisible(`//a[text()="New trunk"]`),
		chromedp.Click(`//a[text()="New trunk"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-friendlyName`)),
		chromedp.SendKeys(chromedp.CSS(`#f-friendlyName`), "Carrier"),
		chromedp.SendKeys(chromedp.CSS(`#f-host`), "sip.example.com"),
		chromedp.SendKeys(chromedp.CSS(`#f-username`), "acme"),
		chromedp.SendKeys(chromedp.CSS(`#f-password`), "hunter2"),
		chromedp.Click(chromedp.CSS(`#f-register`)),
		chromedp.SetValue(byID("f-registration.expiresSeconds"), "10"),
		chromedp.Submit(chromedp.CSS(`#f-friendlyName`)),
		chromedp.WaitVisible(byID("registration.expiresSeconds-error")),
	)
	msg := read(t, ctx, chromedp.Text(byID("registration.expiresSeconds-error")))
	if !strings.Contains(msg, "must be between 60 and 86400") {
		t.Fatalf("lifetime error = %q", msg)
	}
	run(t, ctx,
		chromedp.SetValue(byID("f-registration.expiresSeconds"), "600"),
		chromedp.SendKeys(chromedp.CSS(`#f-password`), "hunter2"),
		chromedp.Submit(chromedp.CSS(`#f-friendlyName`)),
		chromedp.WaitVisible(`//p[@role="status" and text()="Saved."]`),
		chromedp.WaitVisible(chromedp.CSS(`#registration-state`)),
	)
	if state := read(t, ctx, chromedp.Text(chromedp.CSS(`#registration-state`))); state != "unregistered" {
		t.Fatalf("a new registration's state = %q", state)
	}
	run(t, ctx, chromedp.ScrollIntoView(chromedp.CSS(`#registration-state`)))
	screenshot(t, ctx, "trunk-form")

	// A number on the trunk for the agent.
	trunks, _, err := e.svc.SIPTrunks.List(bg, orgID, store.Page{Number: 1, Size: 10})
	if err != nil || len(trunks) != 1 || trunks[0].Registration == nil || trunks[0].Registration.ExpiresSeconds != 600 || len(trunks[0].Password) == 0 {
		t.Fatalf("trunks after the form: %+v, %v", trunks, err)
	}
	run(t, ctx,
		chromedp.Click(`//nav//a[text()="Phone numbers"]`),
		chromedp.WaitVisible(`//a[text()="New number"]`),
		chromedp.Click(`//a[text()="New number"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-e164`)),
		chromedp.SendKeys(chromedp.CSS(`#f-e164`), "+14155550100"),
		chromedp.SetValue(chromedp.CSS(`#f-agentId`), a.ID),
		chromedp.SetValue(chromedp.CSS(`#f-sipTrunkId`), trunks[0].ID),
		chromedp.Submit(chromedp.CSS(`#f-e164`)),
		chromedp.WaitVisible(`//p[@role="status" and text()="Saved."]`),
		chromedp.Click(`//nav//a[text()="Phone numbers"]`),
		chromedp.WaitVisible(`//td[text()="Front desk"]`),
		chromedp.WaitVisible(`//td[text()="Carrier"]`),
	)
	screenshot(t, ctx, "numbers")

	// Settings: the concurrency limit, retention, and a signing secret
	// shown once.
	run(t, ctx,
		chromedp.Click(`//nav//a[text()="Settings"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-concurrencyLimit`)),
		chromedp.SetValue(chromedp.CSS(`#f-concurrencyLimit`), "20"),
		chromedp.SetValue(chromedp.CSS(`#f-recordingRetentionDays`), "90"),
		chromedp.Submit(chromedp.CSS(`#f-concurrencyLimit`)),
		chromedp.WaitVisible(`//p[@role="status" and text()="Saved."]`),
		chromedp.Click(`//button[text()="Make a signing secret"]`),
		chromedp.WaitVisible(chromedp.CSS(`#new-secret`)),
	)
	if o, err := e.svc.Orgs.Get(bg, orgID); err != nil || o.ConcurrencyLimit != 20 ||
		o.RecordingRetentionDays == nil || *o.RecordingRetentionDays != 90 || o.TranscriptRetentionDays != nil {
		t.Fatalf("organization after the settings: %+v, %v", o, err)
	}
	shown := read(t, ctx, chromedp.Value(chromedp.CSS(`#new-secret`)))
	if stored, err := e.svc.Orgs.WebhookSecret(bg, orgID); err != nil || stored != shown {
		t.Fatalf("shown secret %q is not the stored one (%v)", shown, err)
	}
	screenshot(t, ctx, "settings")

	// A colleague: added by email, their one-time password shown once.
	run(t, ctx,
		chromedp.Click(`//nav//a[text()="Users"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-email`)),
		chromedp.SendKeys(chromedp.CSS(`#f-email`), "bob@example.com"),
		chromedp.Submit(chromedp.CSS(`#f-email`)),
		chromedp.WaitVisible(chromedp.CSS(`#one-time-password`)),
	)
	if _, _, err := e.svc.Accounts.SignIn(bg, "bob@example.com", read(t, ctx, chromedp.Value(chromedp.CSS(`#one-time-password`)))); err != nil {
		t.Fatalf("the shown one-time password does not sign in: %v", err)
	}
	screenshot(t, ctx, "users")

	run(t, ctx, chromedp.Navigate(e.url+"/trunks"), chromedp.WaitVisible(`//a[text()="Carrier"]`))
	screenshot(t, ctx, "trunks")

	// A knowledge base: try a query, on a phone-sized screen.
	kb, err := e.svc.KnowledgeBases.Create(bg, orgID, knowledge.Input{Name: opt.Value("Opening hours")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.KnowledgeBases.AddSource(bg, orgID, kb.ID, knowledge.SourceInput{SourceType: opt.Value("text"), DisplayName: opt.Value("Hours"),
		Content: opt.Value("The shop opens at nine on weekdays and at ten on Saturdays. It is closed on Sundays.")}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx,
		chromedp.Emulate(device.IPhone13),
		chromedp.Navigate(e.url+"/knowledge/"+kb.ID),
		chromedp.WaitVisible(chromedp.CSS(`#f-query`)),
		chromedp.SendKeys(chromedp.CSS(`#f-query`), "When does the shop open on Saturdays?"),
		chromedp.Submit(chromedp.CSS(`#f-query`)),
		chromedp.WaitVisible(chromedp.CSS(`#hits`)),
		chromedp.ScrollIntoView(chromedp.CSS(`#hits`)),
	)
	if hits := read(t, ctx, chromedp.Text(chromedp.CSS(`#hits`))); !strings.Contains(hits, "at ten on Saturdays") {
		t.Fatalf("retrieved: %q", hits)
	}
	screenshot(t, ctx, "knowledge-query-phone")
	run(t, ctx, chromedp.EmulateReset())
}
