package web

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// postFile sends a multipart form, as a form with a file input does: the
// fields (with the browser's CSRF token unless they set one) and, unless
// name is empty, content as the file input name's file.
func (b *browser) postFile(path string, fields url.Values, name, filename, content string) page {
	b.e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if fields == nil {
		fields = url.Values{}
	}
	if _, ok := fields["csrf"]; !ok && b.csrf != "" {
		fields.Set("csrf", b.csrf)
	}
	for k, vs := range fields {
		for _, v := range vs {
			if err := mw.WriteField(k, v); err != nil {
				b.e.t.Fatal(err)
			}
		}
	}
	if name != "" {
		fw, err := mw.CreateFormFile(name, filename)
		if err != nil {
			b.e.t.Fatal(err)
		}
		fw.Write([]byte(content))
	}
	if err := mw.Close(); err != nil {
		b.e.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, b.e.srv.URL+path, &body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.e.srv.URL)
	return b.do(req)
}

// campaignForm is a valid new-campaign form for agentID, as the page
// sends it.
func campaignForm(agentID string) url.Values {
	return url.Values{
		"name": {"Renewals"}, "agentId": {agentID}, "fromNumbers": {"+14155550100\r\n\r\n+12125550100\r\n"},
		"timezone": {"America/Chicago"}, "startAt": {"2030-01-07T09:00"}, "endAt": {""},
		"maxConcurrency": {""}, "callsPerMinute": {"30"},
		"retry.maxAttempts": {"3"}, "retry.delaySeconds": {"600"}, "retry.retryOnShown": {"1"}, "retry.retryOn": {"NO_ANSWER", "VOICEMAIL"},
		"callingWindows.0.days": {"mon", "tue", "wed"}, "callingWindows.0.start": {"09:00"}, "callingWindows.0.end": {"17:00"},
		"callingWindows.1.start": {""}, "callingWindows.1.end": {""}, // a blank row
		"callingWindows.4.days": {"sat"}, "callingWindows.4.start": {"10:00"}, "callingWindows.4.end": {"12:00"},
		"webhookUrl": {""}, "variables": {`{"company": "Acme"}`}, "description": {""},
	}
}

// recipientsCSV has a BOM, CRLF, a quoted comma, a duplicate and an empty line.
const recipientsCSV = "\ufefftoNumber,first_name,timezone\r\n+14155550101,\"Ada, Countess\",America/Los_Angeles\r\n\r\n+14155550102,Bob,\r\n+14155550101,Ada again,\r\n"

func (e *env) campaigns(orgID string) []model.Campaign {
	e.t.Helper()
	cs, _, err := e.svc.Campaigns.List(context.Background(), orgID, store.CampaignFilter{Page: store.Page{Number: 1, Size: 100}})
	if err != nil {
		e.t.Fatal(err)
	}
	return cs
}

func (e *env) recipients(orgID, campaignID string) []model.CampaignRecipient {
	e.t.Helper()
	rs, _, err := e.svc.Campaigns.ListRecipients(context.Background(), orgID, campaignID, store.RecipientFilter{Page: store.Page{Number: 1, Size: 100, SortDir: store.Asc}})
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

var campaignPath = regexp.MustCompile(`^/campaigns/([0-9a-f-]{36})`)

// TestCampaignCreateFromCSV: the form shows the API's defaults; a CSV with
// bad lines names each of them and creates nothing, nor does a form the
// API refuses; a good form and file create the campaign with its
// recipients, duplicates counted.
func TestCampaignCreateFromCSV(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Renewals desk")

	p := b.get("/campaigns/new")
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, `id="f-name"`, "Renewals desk", `name="callingWindows.0.days" value="mon"`, `id="window-row-template"`,
		`id="f-callsPerMinute" name="callsPerMinute" type="number" value="60"`, `value="NO_ANSWER" checked`, `value="BUSY" checked`,
		`enctype="multipart/form-data"`, `src="/static/campaign.js"`)

	// One bad line and a line with an unknown time zone: each named, nothing created.
	bad := "toNumber,timezone\n+14155550101,\n555-0102,\n+14155550103,Mars/Olympus\n"
	p = b.postFile("/campaigns", campaignForm(a.ID), "recipients", "list.csv", bad)
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "the recipients&#39; file was refused", `id="csv-errors"`,
		`data-line="3"><th scope="row">3</th><td><code>toNumber</code>`, `data-line="4"><th scope="row">4</th><td><code>timezone</code>`,
		`value="Renewals"`)
	if cs := e.campaigns(u.OrgID); len(cs) != 0 {
		t.Fatalf("a refused file created %d campaigns", len(cs))
	}
	// A file without a toNumber column is refused as a whole.
	p = b.postFile("/campaigns", campaignForm(a.ID), "recipients", "list.csv", "name\nAda\n")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `<td>the file</td>`)

	// Fields the API refuses, beside their inputs and rows; the CSV is fine.
	form := campaignForm(a.ID)
	form.Set("callsPerMinute", "0")
	form.Set("callingWindows.4.end", "09:00") // before its start
	form.Set("fromNumbers", "+14155550100\nnot-a-number")
	form.Set("timezone", "Mars/Olympus")
	p = b.postFile("/campaigns", form, "recipients", "list.csv", recipientsCSV)
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "The campaign was not created", `<a href="#window-2">Window 2</a>: end: must be later than start`, `id="callsPerMinute-error"`, `id="fromNumbers-error"`, "fromNumbers[1]",
		`id="timezone-error"`, "not-a-number</textarea>")
	second := p.body[strings.Index(p.body, `Window <span class="window-number">2</span>`):]
	second = second[:strings.Index(second, "</li>")]
	if !contains(second, `class="field-errors"`) || !contains(second, `value="sat" checked`) || !contains(second, "end: ") {
		t.Fatalf("the second window's error is not beside it:\n%s", second)
	}
	// An agent of no one: the service's own check.
	form = campaignForm(model.NewID())
	p = b.postFile("/campaigns", form, "", "", "")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="agentId-error"`)
	if cs := e.campaigns(u.OrgID); len(cs) != 0 {
		t.Fatalf("refused forms created %d campaigns", len(cs))
	}

	p = b.postFile("/campaigns", campaignForm(a.ID), "recipients", "list.csv", recipientsCSV)
	wantStatus(t, p, http.StatusSeeOther)
	m := campaignPath.FindStringSubmatch(p.location())
	if m == nil || !strings.HasSuffix(p.location(), "?added=2&duplicates=1&suppressed=0") {
		t.Fatalf("created: to %q", p.location())
	}
	c, err := e.svc.Campaigns.Get(context.Background(), u.OrgID, m[1])
	if err != nil {
		t.Fatal(err)
	}
	chicago, _ := time.LoadLocation("America/Chicago")
	wantStart := time.Date(2030, 1, 7, 9, 0, 0, 0, chicago)
	if c.Name != "Renewals" || c.AgentID != a.ID || c.Status != model.CampaignDraft || len(c.Config.FromNumbers) != 2 ||
		c.Config.Timezone != "America/Chicago" || c.StartAt == nil || !c.StartAt.Equal(wantStart) || c.EndAt != nil ||
		c.Config.MaxConcurrency != nil || c.Config.CallsPerMinute != 30 || c.Config.Variables["company"] != "Acme" ||
		c.Config.Retry.MaxAttempts != 3 || c.Config.Retry.DelaySeconds != 600 || strings.Join(c.Config.Retry.RetryOn, ",") != "NO_ANSWER,VOICEMAIL" {
		t.Fatalf("created %+v (start %v)", c, c.StartAt)
	}
	if w := c.Config.CallingWindows; len(w) != 2 || strings.Join(w[0].Days, ",") != "mon,tue,wed" || w[0].Start != "09:00" ||
		strings.Join(w[1].Days, ",") != "sat" || w[1].End != "12:00" {
		t.Fatalf("windows %+v", w)
	}
	rs := e.recipients(u.OrgID, c.ID)
	if len(rs) != 2 || rs[0].ToNumber != "+14155550101" || rs[0].Variables["first_name"] != "Ada, Countess" ||
		rs[0].Timezone == nil || *rs[0].Timezone != "America/Los_Angeles" || rs[1].ToNumber != "+14155550102" {
		t.Fatalf("recipients %+v", rs)
	}

	p = b.get(p.location())
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "<h1>Renewals</h1>", `id="added">2 recipients added; 1 duplicate left out.`, "Renewals desk",
		"mon, tue, wed 09:00–17:00", "up to 3 attempts, at least 600 s apart, on NO_ANSWER, VOICEMAIL",
		`id="count-pending">2<`, `id="total-count">2<`, "&#43;14155550101", "Ada, Countess", "Start calling")
	if contains(p.body, `hx-get="/campaigns/`+c.ID+`/progress`) {
		t.Fatal("a draft's progress polls")
	}
	// Without a file: a draft with no recipient yet.
	form = campaignForm(a.ID)
	form.Set("name", "Later")
	p = b.postFile("/campaigns", form, "", "", "")
	wantStatus(t, p, http.StatusSeeOther)
	if m := campaignPath.FindStringSubmatch(p.location()); m == nil || contains(p.location(), "added") {
		t.Fatalf("created without a file: to %q", p.location())
	}

	// The list: both, with their progress and filters.
	p = b.get("/campaigns")
	wantContains(t, p, `href="/campaigns/`+c.ID+`">Renewals</a>`, "Later", "0 of 2 done", "2 campaigns")
	p = b.get("/campaigns?status=running")
	wantContains(t, p, "0 campaigns", "No campaign matches.")
	p = b.get("/campaigns?status=flying")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "status: must be one of draft, running, paused, completed, canceled")
}

// newCampaign stores a campaign of agentID with the recipients' numbers.
func (e *env) newCampaign(orgID, agentID, name string, numbers ...string) model.Campaign {
	e.t.Helper()
	ctx := context.Background()
	c, err := e.svc.Campaigns.Create(ctx, orgID, campaign.Input{Name: opt.Value(name), AgentID: opt.Value(agentID),
		FromNumbers: opt.Value([]string{"+14155550100"})})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(numbers) > 0 {
		b, err := campaign.ParseCSV(strings.NewReader("toNumber\n" + strings.Join(numbers, "\n") + "\n"))
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.svc.Campaigns.AddRecipients(ctx, orgID, c.ID, b); err != nil {
			e.t.Fatal(err)
		}
	}
	return c
}

// finish moves the campaign's recipient with number to status, as the
// dispatcher would once its call ended.
func (e *env) finish(orgID, campaignID, number, status string, callID string) {
	e.t.Helper()
	ctx := context.Background()
	err := e.st.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetCampaignForUpdate(ctx, orgID, campaignID); err != nil {
			return err
		}
		rs, _, err := tx.ListCampaignRecipients(ctx, orgID, campaignID, store.RecipientFilter{Page: store.Page{Number: 1, Size: 100, SortDir: store.Asc}})
		if err != nil {
			return err
		}
		for _, r := range rs {
			if r.ToNumber != number {
				continue
			}
			after := r
			after.Status, after.Attempts, after.UpdatedAt = status, r.Attempts+1, model.Now()
			if callID != "" {
				after.CallIDs = append(append([]string{}, r.CallIDs...), callID)
			}
			ok, err := tx.ChangeRecipient(ctx, &r, &after)
			if err == nil && !ok {
				e.t.Errorf("recipient %s moved on", number)
			}
			return err
		}
		e.t.Errorf("no recipient %s", number)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestCampaignActions: start (refused with no recipient, shown on the
// page), pause, resume and cancel through the page's buttons, each as the
// API's transition; the progress polls while running and counts what the
// recipients became; more recipients upload while allowed; delete only
// when allowed.
func TestCampaignActions(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Renewals desk")
	c := e.newCampaign(u.OrgID, a.ID, "Renewals")
	base := "/campaigns/" + c.ID
	status := func() string {
		t.Helper()
		got, err := e.svc.Campaigns.Get(context.Background(), u.OrgID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}

	p := b.post(base+"/start", nil)
	wantStatus(t, p, http.StatusConflict)
	wantContains(t, p, `id="action-error"`, "The campaign was not started:", "Start calling")

	// Upload: a refused file names its line; a good one adds.
	p = b.postFile(base+"/recipients", nil, "recipients", "more.csv", "phone_number,plan\n+14155550101,gold\n+1415\n")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "so nothing was added", `data-line="3"`)
	p = b.postFile(base+"/recipients", nil, "", "", "")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "Choose a CSV file of recipients.")
	p = b.postFile(base+"/recipients", nil, "recipients", "more.csv", "phone_number,plan\n+14155550101,gold\n+14155550102,silver\n+14155550103,\n")
	if p.location() != base+"?added=3&duplicates=0&suppressed=0" {
		t.Fatalf("upload: %d to %q\n%s", p.status, p.location(), p.body)
	}

	if p := b.post(base+"/start", nil); p.location() != base {
		t.Fatalf("start: %d to %q\n%s", p.status, p.location(), p.body)
	}
	if s := status(); s != model.CampaignRunning {
		t.Fatalf("after start: %s", s)
	}
	p = b.get(base)
	wantContains(t, p, `hx-get="`+base+`/progress?shown=running"`, `id="campaign-status">running`, ">Pause<", "Cancel campaign…")
	if contains(p.body, "Start calling") || contains(p.body, base+"/delete") {
		t.Fatal("a running campaign offers start or delete")
	}
	p = b.get(base + "/delete")
	wantContains(t, p, "Delete the campaign “Renewals”")
	p = b.post(base+"/delete", nil)
	wantStatus(t, p, http.StatusConflict)
	wantContains(t, p, "The campaign was not deleted:")

	// The progress partial follows the recipients.
	callID := model.NewID()
	e.finish(u.OrgID, c.ID, "+14155550101", model.RecipientCompleted, callID)
	e.finish(u.OrgID, c.ID, "+14155550102", model.RecipientInProgress, "")
	p = b.get(base + "/progress?shown=running")
	wantStatus(t, p, http.StatusOK)
	if p.header.Get("HX-Refresh") != "" || contains(p.body, "<html") {
		t.Fatalf("partial: refresh %q\n%s", p.header.Get("HX-Refresh"), p.body)
	}
	wantContains(t, p, `id="count-completed">1<`, `id="count-in_progress">1<`, `id="count-pending">1<`, `id="done-count">1<`,
		`class="seg-completed" x="0.00" y="0" width="333.33"`, "3 recipients: 1 completed, 1 in progress, 1 pending")
	p = b.get(base + "?status=completed")
	wantContains(t, p, "1 recipient completed", `href="/calls/`+callID+`">call 1</a>`)
	if contains(p.body, "&#43;14155550103") {
		t.Fatal("the status filter shows a pending recipient")
	}
	wantStatus(t, b.get(base+"?status=bogus"), http.StatusBadRequest)

	if p := b.post(base+"/pause", nil); p.location() != base {
		t.Fatalf("pause: %d to %q", p.status, p.location())
	}
	if s := status(); s != model.CampaignPaused {
		t.Fatalf("after pause: %s", s)
	}
	// The page still polls: a call is live; a page showing "running" reloads.
	wantContains(t, b.get(base), ">Resume<", `hx-get="`+base+`/progress?shown=paused"`)
	if p := b.get(base + "/progress?shown=running"); p.header.Get("HX-Refresh") != "true" {
		t.Fatalf("a page showing another status is not reloaded: %q", p.header.Get("HX-Refresh"))
	}
	wantStatus(t, b.post(base+"/pause", nil), http.StatusConflict)
	if p := b.post(base+"/resume", nil); p.location() != base {
		t.Fatalf("resume: %d to %q", p.status, p.location())
	}
	if s := status(); s != model.CampaignRunning {
		t.Fatalf("after resume: %s", s)
	}

	wantContains(t, b.get(base+"/cancel"), "Cancel the campaign “Renewals”?")
	if p := b.post(base+"/cancel", nil); p.location() != base {
		t.Fatalf("cancel: %d to %q", p.status, p.location())
	}
	if s := status(); s != model.CampaignCanceled {
		t.Fatalf("after cancel: %s", s)
	}
	p = b.get(base)
	wantContains(t, p, `id="campaign-status">canceled`, "Delete…")
	for _, gone := range []string{"Upload recipients", "Cancel campaign…", ">Resume<", ">Pause<"} {
		if contains(p.body, gone) {
			t.Fatalf("a canceled campaign offers %q", gone)
		}
	}
	p = b.postFile(base+"/recipients", nil, "recipients", "more.csv", "toNumber\n+14155550109\n")
	wantStatus(t, p, http.StatusConflict)
	wantContains(t, p, "No recipient was added:")

	if p := b.post(base+"/delete", nil); p.location() != "/campaigns" {
		t.Fatalf("delete: %d to %q\n%s", p.status, p.location(), p.body)
	}
	if cs := e.campaigns(u.OrgID); len(cs) != 0 {
		t.Fatalf("%d campaigns after the delete", len(cs))
	}
	wantStatus(t, b.get(base), http.StatusNotFound)
}

// TestCampaignFormsNeedTheirToken: without the session's CSRF token no
// campaign or suppression form acts, multipart uploads included.
func TestCampaignFormsNeedTheirToken(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Renewals desk")
	c := e.newCampaign(u.OrgID, a.ID, "Renewals", "+14155550101")
	base := "/campaigns/" + c.ID
	for _, path := range []string{base + "/start", base + "/cancel", base + "/delete", "/suppressions"} {
		p := b.post(path, url.Values{"csrf": {"forged"}, "number": {"+14155550199"}})
		wantStatus(t, p, http.StatusForbidden)
	}
	form := campaignForm(a.ID)
	form.Set("csrf", "forged")
	wantStatus(t, b.postFile("/campaigns", form, "recipients", "list.csv", recipientsCSV), http.StatusForbidden)
	wantStatus(t, b.postFile(base+"/recipients", url.Values{"csrf": {"forged"}}, "recipients", "l.csv", "toNumber\n+14155550102\n"), http.StatusForbidden)
	wantStatus(t, b.postFile("/suppressions/import", url.Values{"csrf": {"forged"}}, "file", "l.csv", "number\n+14155550102\n"), http.StatusForbidden)
	if cs := e.campaigns(u.OrgID); len(cs) != 1 || cs[0].Status != model.CampaignDraft || cs[0].Counts.Total != 1 {
		t.Fatalf("campaigns after forged forms: %+v", cs)
	}
	if _, n, _ := e.svc.Suppressions.List(context.Background(), u.OrgID, store.SuppressionFilter{Page: store.Page{Number: 1, Size: 10}}); n != 0 {
		t.Fatalf("%d suppressions after forged forms", n)
	}
}

// TestCampaignUploadLimits: a file over the API's 16 MiB is refused beside
// its input; a body over what the route takes is 413, not a token error.
func TestCampaignUploadLimits(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Renewals desk")
	c := e.newCampaign(u.OrgID, a.ID, "Renewals")
	big := "toNumber\n" + strings.Repeat("+14155550101\n", campaign.MaxCSVBytes/13+1)
	p := b.postFile("/campaigns/"+c.ID+"/recipients", nil, "recipients", "big.csv", big)
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "at most 16 MiB")
	p = b.postFile("/campaigns/"+c.ID+"/recipients", nil, "recipients", "huge.csv", big+strings.Repeat("x", maxForm))
	wantStatus(t, p, http.StatusRequestEntityTooLarge)
	if got := e.recipients(u.OrgID, c.ID); len(got) != 0 {
		t.Fatalf("%d recipients after refused uploads", len(got))
	}
}

// TestCampaignEdit: a draft's settings in the edit form, saved as PATCH
// saves them (blank clears what may be cleared), refused beside their
// inputs, and only while the campaign is a draft or paused.
func TestCampaignEdit(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Renewals desk")
	p := b.postFile("/campaigns", campaignForm(a.ID), "recipients", "list.csv", recipientsCSV)
	m := campaignPath.FindStringSubmatch(p.location())
	if m == nil {
		t.Fatalf("create: %d to %q", p.status, p.location())
	}
	base := "/campaigns/" + m[1]
	wantContains(t, b.get(base), `href="`+base+`/edit">Edit settings</a>`)

	p = b.get(base + "/edit")
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "<h1>Edit Renewals</h1>", `action="`+base+`"`, `value="Renewals"`, "&#43;14155550100\n&#43;12125550100</textarea>",
		`value="America/Chicago"`, `id="f-startAt" name="startAt" type="datetime-local" value="2030-01-07T09:00"`,
		`name="callingWindows.1.days" value="sat" checked`, `name="callingWindows.1.start" value="10:00"`, `name="callingWindows.2.start" value=""`,
		`value="VOICEMAIL" checked`, `&#34;company&#34;: &#34;Acme&#34;`)
	if contains(p.body, `name="recipients"`) {
		t.Fatal("the edit form takes a file")
	}

	form := campaignForm(a.ID)
	form.Set("name", "Renewals, round 2")
	form.Set("startAt", "")
	form.Set("maxConcurrency", "4")
	form.Set("webhookUrl", "https://hooks.example.com/campaigns")
	form.Set("variables", "")
	for _, k := range []string{"callingWindows.4.days", "callingWindows.4.start", "callingWindows.4.end"} {
		form.Del(k)
	}
	if p := b.post(base, form); p.location() != base+"?saved=1" {
		t.Fatalf("save: %d to %q\n%s", p.status, p.location(), p.body)
	}
	c, err := e.svc.Campaigns.Get(context.Background(), u.OrgID, m[1])
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "Renewals, round 2" || c.StartAt != nil || c.Config.MaxConcurrency == nil || *c.Config.MaxConcurrency != 4 ||
		c.Config.WebhookURL == nil || len(c.Config.Variables) != 0 || len(c.Config.CallingWindows) != 1 || c.Counts.Total != 2 {
		t.Fatalf("saved %+v", c)
	}
	wantContains(t, b.get(base+"?saved=1"), "Saved.", "<h1>Renewals, round 2</h1>")

	form.Set("callsPerMinute", "0")
	form.Set("maxConcurrency", "")
	form.Set("callingWindows.0.days", "someday")
	p = b.post(base, form)
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "The campaign was not saved", `id="callsPerMinute-error"`, `<a href="#window-1">Window 1</a>: days[0]: must be`)
	if got, _ := e.svc.Campaigns.Get(context.Background(), u.OrgID, m[1]); got.Config.CallsPerMinute != 30 || got.Config.MaxConcurrency == nil {
		t.Fatalf("a refused edit changed the campaign: %+v", got.Config)
	}

	// Running: neither page nor form.
	if p := b.post(base+"/start", nil); p.location() != base {
		t.Fatalf("start: %d", p.status)
	}
	p = b.get(base + "/edit")
	wantStatus(t, p, http.StatusConflict)
	wantContains(t, p, "only a draft or paused campaign can be")
	if contains(b.get(base).body, "Edit settings") {
		t.Fatal("a running campaign offers its settings' form")
	}
	form = campaignForm(a.ID)
	form.Set("name", "Renamed while running")
	p = b.post(base, form)
	wantStatus(t, p, http.StatusConflict)
	wantContains(t, p, "The campaign was not saved:")
	if p := b.post(base+"/pause", nil); p.location() != base {
		t.Fatalf("pause: %d", p.status)
	}
	wantStatus(t, b.get(base+"/edit"), http.StatusOK)
}

// TestCampaignRecipientPages: recipients are listed as uploaded, a page at
// a time, the pages' links keeping the status filter and dropping the
// upload's notice.
func TestCampaignRecipientPages(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Renewals desk")
	var numbers []string
	for i := range 30 {
		numbers = append(numbers, "+141555502"+fmt.Sprintf("%02d", i))
	}
	c := e.newCampaign(u.OrgID, a.ID, "Renewals", numbers...)
	base := "/campaigns/" + c.ID
	p := b.get(base + "?added=30&duplicates=0&suppressed=0&status=pending")
	wantContains(t, p, "30 recipients pending", "&#43;14155550200", "&#43;14155550224", "Page 1 of 2",
		`href="`+base+`?page=2&amp;status=pending" rel="next"`)
	if contains(p.body, "&#43;14155550225") {
		t.Fatal("page 1 shows the 26th recipient")
	}
	p = b.get(base + "?page=2&status=pending")
	wantContains(t, p, "&#43;14155550225", "&#43;14155550229", "Page 2 of 2")
	if contains(p.body, `id="added"`) || contains(p.body, "&#43;14155550224") {
		t.Fatal("page 2 shows the notice or page 1's recipients")
	}
	p = b.get(base + "?sortDir=desc")
	if i, j := strings.Index(p.body, "&#43;14155550229"), strings.Index(p.body, "&#43;14155550205"); i < 0 || j < 0 || i > j {
		t.Fatal("sortDir=desc does not list the last uploaded first")
	}
	wantStatus(t, b.get(base+"?page=0"), http.StatusBadRequest)
}

// TestCampaignEditAgentGone: a campaign whose agent was deleted shows it
// as such, and its settings can still be saved, keeping it.
func TestCampaignEditAgentGone(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Renewals desk")
	e.newAgentIn(u.OrgID, "Another desk")
	c := e.newCampaign(u.OrgID, a.ID, "Renewals")
	if err := e.svc.Agents.Delete(context.Background(), u.OrgID, a.ID); err != nil {
		t.Fatal(err)
	}
	base := "/campaigns/" + c.ID
	wantContains(t, b.get(base), `<span class="hint">deleted</span>`)
	p := b.get(base + "/edit")
	wantContains(t, p, `<option value="`+a.ID+`" selected>(deleted agent)</option>`)
	form := campaignForm(a.ID)
	form.Set("name", "Renamed")
	if p := b.post(base, form); p.location() != base+"?saved=1" {
		t.Fatalf("save: %d to %q\n%s", p.status, p.location(), p.body)
	}
	got, err := e.svc.Campaigns.Get(context.Background(), u.OrgID, c.ID)
	if err != nil || got.Name != "Renamed" || got.AgentID != a.ID {
		t.Fatalf("after the save: %+v, %v", got, err)
	}
}
