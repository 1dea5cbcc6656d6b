package browsertest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
)

// TestDashboard is a person's first session: sign in with the one-time
// password and choose a password; create an agent through the form, meet
// a limit, correct it; find the agent by search; create an API key, see
// it work, revoke it and see the API refuse it.
func TestDashboard(t *testing.T) {
	e := newEnv(t)
	ctx := tab(t)
	oneTime, _, err := e.svc.Accounts.CreateUser(context.Background(), "acme", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	const password = "correct horse battery staple"

	// Sign in; the one-time password leads to choosing one's own.
	run(t, ctx,
		chromedp.Navigate(e.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), "ada@example.com"),
		chromedp.SendKeys(chromedp.CSS(`#password`), oneTime),
		chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`#newPassword`)),
		chromedp.SendKeys(chromedp.CSS(`#currentPassword`), oneTime),
		chromedp.SendKeys(chromedp.CSS(`#newPassword`), password),
		chromedp.SendKeys(chromedp.CSS(`#confirmPassword`), password),
		chromedp.Submit(chromedp.CSS(`#confirmPassword`)),
		chromedp.WaitVisible(`//h1[text()="Agents"]`),
	)

	// Create an agent; a name over the limit (set past the input's
	// maxlength, as a script could) comes back with the API's message
	// beside the field.
	run(t, ctx,
		chromedp.Click(`//a[text()="New agent"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-name`)),
		chromedp.SetValue(chromedp.CSS(`#f-name`), strings.Repeat("x", 129)),
		chromedp.SendKeys(chromedp.CSS(`#f-promptTemplate`), "You answer questions about Acme's opening hours."),
		chromedp.SendKeys(chromedp.CSS(`#f-firstMessage`), "Hello, Acme here. How can I help?"),
		chromedp.Submit(chromedp.CSS(`#f-name`)),
		chromedp.WaitVisible(chromedp.CSS(`#name-error`)),
	)
	nameError := read(t, ctx, chromedp.Text(chromedp.CSS(`#name-error`)))
	if !strings.Contains(nameError, "must be at most 128 characters") {
		t.Fatalf("name error = %q", nameError)
	}
	screenshot(t, ctx, "agent-form")
	run(t, ctx,
		chromedp.SetValue(chromedp.CSS(`#f-name`), "Opening hours"),
		chromedp.Submit(chromedp.CSS(`#f-name`)),
		chromedp.WaitVisible(`//p[@role="status" and text()="Saved."]`),
	)
	for _, name := range []string{"Billing", "Bookings", "Support line"} {
		run(t, ctx,
			chromedp.Navigate(e.url+"/agents/new"),
			chromedp.WaitVisible(chromedp.CSS(`#f-name`)),
			chromedp.SendKeys(chromedp.CSS(`#f-name`), name),
			chromedp.SendKeys(chromedp.CSS(`#f-promptTemplate`), "You help callers with "+strings.ToLower(name)+"."),
			chromedp.Submit(chromedp.CSS(`#f-name`)),
			chromedp.WaitVisible(`//p[@role="status" and text()="Saved."]`),
		)
	}

	// Find it by search: htmx replaces the results as one types.
	run(t, ctx,
		chromedp.Navigate(e.url+"/agents"),
		chromedp.WaitVisible(`//a[text()="Support line"]`),
	)
	screenshot(t, ctx, "agents")
	run(t, ctx,
		chromedp.SendKeys(chromedp.CSS(`#q`), "hours"),
		chromedp.WaitNotPresent(`//a[text()="Support line"]`),
		chromedp.WaitVisible(`//a[text()="Opening hours"]`),
	)
	rows := read(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#results tbody tr").length`))
	if rows != 1 {
		t.Fatalf("search for hours lists %d agents, want 1", rows)
	}
	location := read(t, ctx, chromedp.Location())
	if !strings.Contains(location, "q=hours") {
		t.Fatalf("the search is not in the address bar: %s", location)
	}

	// The list on a phone-sized screen.
	run(t, ctx,
		chromedp.Emulate(device.IPhone13),
		chromedp.Navigate(e.url+"/agents"),
		chromedp.WaitVisible(`//a[text()="Support line"]`),
	)
	screenshot(t, ctx, "agents-phone")
	run(t, ctx, chromedp.EmulateReset(), chromedp.EmulateViewport(1280, 900))

	// An API key: shown once, accepted by the API, then revoked and refused.
	run(t, ctx,
		chromedp.Navigate(e.url+"/keys"),
		chromedp.WaitVisible(chromedp.CSS(`#key-name`)),
		chromedp.SendKeys(chromedp.CSS(`#key-name`), "CI"),
		chromedp.Submit(chromedp.CSS(`#key-name`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-key`)),
	)
	key := read(t, ctx, chromedp.Value(chromedp.CSS(`#new-key`)))
	screenshot(t, ctx, "keys")
	if code := apiStatus(t, e, key); code != http.StatusOK {
		t.Fatalf("GET /v1/agents with the new key: %d", code)
	}
	run(t, ctx,
		chromedp.Click(`//a[starts-with(@aria-label, "Revoke key")]`),
		chromedp.WaitVisible(`//button[text()="Revoke key"]`),
		chromedp.Click(`//button[text()="Revoke key"]`),
		chromedp.WaitVisible(`//span[starts-with(text(), "revoked")]`),
	)
	if code := apiStatus(t, e, key); code != http.StatusUnauthorized {
		t.Fatalf("GET /v1/agents with the revoked key: %d, want 401", code)
	}

	// Signing out ends the session.
	run(t, ctx,
		chromedp.Click(`//button[text()="Sign out"]`),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.Navigate(e.url+"/keys"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
	)
}

func apiStatus(t *testing.T, e *env, key string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url+"/v1/agents", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
