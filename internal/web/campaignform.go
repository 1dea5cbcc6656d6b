package web

import (
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// The new-campaign form. Its inputs become POST /v1/campaigns' JSON body,
// decoded by the API's own decoder and checked by the same service, so the
// form refuses exactly what the API refuses; its CSV file goes through the
// API's parser before anything is created.

// weekdays are a calling window's days, as the API names them.
var weekdays = []option{{"mon", "Mon"}, {"tue", "Tue"}, {"wed", "Wed"}, {"thu", "Thu"}, {"fri", "Fri"}, {"sat", "Sat"}, {"sun", "Sun"}}

// retryOutcomes are the outcomes a campaign may retry on.
var retryOutcomes = []string{model.RetryNoAnswer, model.RetryBusy, model.RetryVoicemail, model.RetryFailed}

var campaignFields = func() []agentField {
	intRange := func(f agentField, lo, hi float64) agentField {
		f.Min, f.Max, f.HasMin, f.HasMax = between(lo, hi)
		f.Step = 1
		return f
	}
	return []agentField{
		{Name: "name", Label: "Name", Kind: kindText, Required: true, MaxLen: campaign.MaxNameLen, Help: "At most " + strconv.Itoa(campaign.MaxNameLen) + " characters."},
		{Name: "agentId", Label: "Agent", Kind: kindAgent, Required: true, Help: "The agent that talks to every recipient."},
		{Name: "description", Label: "Description (optional)", Kind: kindTextarea, MaxLen: campaign.MaxDescriptionLen, Help: "At most " + strconv.Itoa(campaign.MaxDescriptionLen) + " characters."},
		{Name: "fromNumbers", Label: "Caller IDs", Kind: kindTextarea, Required: true, Placeholder: "+14155550100",
			Help: "One E.164 number a line, 1 to 100. A call shows the one with the recipient's country and area code, else they take turns."},
		{Name: "timezone", Label: "Time zone", Kind: kindText, Placeholder: "America/Chicago",
			Help: "An IANA time zone: the start and end below are in it, and it is the time zone of a recipient whose own cannot be told."},
		{Name: "startAt", Label: "Start calling at (optional)", Kind: kindDateTime, Help: "In the campaign's time zone. Blank: as soon as it is started."},
		{Name: "endAt", Label: "Stop calling at (optional)", Kind: kindDateTime, Help: "In the campaign's time zone; after the start. Recipients not reached by then expire."},
		intRange(agentField{Name: "maxConcurrency", Label: "Calls at once (optional)", Kind: kindInt, Help: "1 to 1000; never more than the organization's limit. Blank: the organization's limit."}, 1, 1000),
		intRange(agentField{Name: "callsPerMinute", Label: "Calls a minute", Kind: kindInt, Help: "1 to 6000."}, 1, 6000),
		intRange(agentField{Name: "retry.maxAttempts", Label: "Attempts per recipient", Kind: kindInt, Help: "1 to 10."}, 1, 10),
		intRange(agentField{Name: "retry.delaySeconds", Label: "Wait before trying again (seconds)", Kind: kindInt, Help: "0 to 604800 (a week)."}, 0, 604800),
		{Name: "webhookUrl", Label: "Webhook URL (optional)", Kind: kindURL, Help: "An absolute http or https URL; it receives campaign_completed, signed."},
		{Name: "variables", Label: "Variables (optional)", Kind: kindJSON, Help: "A JSON object: defaults for every recipient's variables; a CSV column of the same name wins."},
	}
}()

// windowRow is one calling window of the form: N is its index in the
// inputs' names and in the API's body (callingWindows[N]).
type windowRow struct {
	N          int
	Days       map[string]bool
	Start, End string
	Errors     []string
	// posted are the days as the form sent them, in order: the body
	// carries them as they are, for the API's rules to judge.
	posted []string
}

// Key is the row's index in its inputs' names; the blank row the page's
// script copies has a placeholder instead.
func (w windowRow) Key() string {
	if w.N < 0 {
		return "__N__"
	}
	return strconv.Itoa(w.N)
}

// Number is the row's number as shown, from 1.
func (w windowRow) Number() int { return w.N + 1 }

// Weekdays are the days' checkboxes.
func (w windowRow) Weekdays() []option { return weekdays }

// campaignFormData is the new-campaign form as drawn: its inputs, the
// calling windows' rows and the retry outcomes ticked, what the service
// refused, and the CSV file's refused lines.
type campaignFormData struct {
	formState
	// ID is the campaign edited; Creating says the form makes a new one.
	ID       string
	Creating bool
	Agents   []option
	Windows  []windowRow
	RetryOn  map[string]bool
	// CSVLines are the recipients file's refused lines (with their line
	// numbers); CSVRefused says the file was refused.
	CSVLines   []lineError
	CSVRefused bool
}

// Fields are the form's inputs, by name.
func (d campaignFormData) Fields() map[string]fieldView {
	return fieldsOf(d.formState, campaignFields, d.Agents...)
}

// HasFieldErrors says some input or window was refused.
func (d campaignFormData) HasFieldErrors() bool {
	if len(d.Errors) > 0 {
		return true
	}
	for _, w := range d.Windows {
		if len(w.Errors) > 0 {
			return true
		}
	}
	return false
}

// Outcomes are the retry outcomes' checkboxes.
func (d campaignFormData) Outcomes() []string { return retryOutcomes }

// WindowsError is what is refused of the calling windows as a whole.
func (d campaignFormData) WindowsError() string {
	return strings.Join(d.Errors["callingWindows"], "; ")
}

// BlankWindow is the row the page's script copies to add a window.
func (d campaignFormData) BlankWindow() windowRow { return windowRow{N: -1, Days: map[string]bool{}} }

// CSV is the recipients' file input: optional, recipients can come later.
func (d campaignFormData) CSV() csvUpload { return csvUpload{Lines: d.CSVLines, Optional: true} }

// newCampaignForm is a blank form showing the API's defaults.
func newCampaignForm(orgID string, now time.Time) campaignFormData {
	c := campaign.New(orgID, now)
	d := campaignFormData{RetryOn: map[string]bool{}, Creating: true}
	d.Values = map[string]string{
		"timezone":           c.Config.Timezone,
		"callsPerMinute":     strconv.Itoa(c.Config.CallsPerMinute),
		"retry.maxAttempts":  strconv.Itoa(c.Config.Retry.MaxAttempts),
		"retry.delaySeconds": strconv.Itoa(c.Config.Retry.DelaySeconds),
	}
	for _, o := range c.Config.Retry.RetryOn {
		d.RetryOn[o] = true
	}
	d.Windows = []windowRow{{N: 0, Days: map[string]bool{}}}
	return d
}

// retryShown marks a form that drew the retry outcomes' checkboxes: with
// none ticked it asks for no retries, while a form without them (a
// script's) leaves the default.
const retryShown = "retry.retryOnShown"

// windowInput is a calling window's input name: callingWindows.2.start.
var windowInput = regexp.MustCompile(`^callingWindows\.([0-9]{1,4})\.(days|start|end)$`)

// campaignInput reads the form into the API's request: creating, blank
// inputs are left out (the defaults apply); editing, a blank input clears
// its field (or, where the API refuses null, keeps or empties it). The
// error holds every broken field: what the form alone can tell, the
// body's shape, and then, for the rest, the API's rules (precheck), so one
// submission shows all there is to correct.
func campaignInput(form url.Values, creating bool, precheck func(campaign.Input) error) (campaign.Input, campaignFormData, error) {
	d := campaignFormData{RetryOn: map[string]bool{}, Creating: creating}
	fr := newFormReader(form, creating)
	body := map[string]json.RawMessage{}
	put := func(name string, v json.RawMessage, set bool) {
		if set {
			body[name] = v
		}
	}
	for _, name := range []string{"name", "agentId", "timezone"} {
		if !creating && !form.Has(name) {
			continue // not in the form: kept as stored
		}
		f := fr.required(name)
		put(name, mustJSON(f), f.Set)
	}
	for _, name := range []string{"description", "webhookUrl"} {
		f := fr.text(name)
		put(name, mustJSON(f), f.Set)
	}
	numbers := fr.lines("fromNumbers")
	put("fromNumbers", mustJSON(numbers), numbers.Set)
	maxConc := fr.number("maxConcurrency", false)
	put("maxConcurrency", mustJSON(maxConc), maxConc.Set)
	perMinute := fr.number("callsPerMinute", true)
	put("callsPerMinute", mustJSON(perMinute), perMinute.Set)
	vars := fr.jsonObject("variables", "must be a JSON object")
	if vars.Null {
		vars = opt.Value(map[string]any{}) // variables are never null: blank is none
	}
	put("variables", mustJSON(vars), vars.Set)

	// Start and end are a datetime-local input's minutes in the campaign's
	// time zone (an RFC 3339 date-time is taken as it is).
	loc := time.UTC
	if tz, err := time.LoadLocation(strings.TrimSpace(form.Get("timezone"))); err == nil {
		loc = tz
	}
	for _, name := range []string{"startAt", "endAt"} {
		v, ok := fr.raw(name)
		switch {
		case !ok:
			continue
		case v == "":
			if !creating {
				body[name] = json.RawMessage("null")
			}
			continue
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			t, err = time.ParseInLocation(dateTimeLocal, v, loc)
		}
		if err != nil {
			fr.problems.Add(name, "must be a date and time such as 2026-11-23T09:00")
			continue
		}
		body[name] = mustJSON(t.Format(time.RFC3339))
	}

	retry := map[string]json.RawMessage{}
	for _, name := range []string{"maxAttempts", "delaySeconds"} {
		if f := fr.number("retry."+name, true); f.Set {
			retry[name] = mustJSON(f)
		}
	}
	if form.Get(retryShown) != "" {
		on := nonNilStrings(form["retry.retryOn"])
		for _, o := range on {
			d.RetryOn[o] = true
		}
		retry["retryOn"] = mustJSON(on)
	}
	if len(retry) > 0 {
		body["retry"] = mustJSON(retry)
	}

	d.Windows = windowRows(form)
	windows := []map[string]any{}
	for _, w := range d.Windows {
		windows = append(windows, map[string]any{"days": nonNilStrings(w.posted), "start": w.Start, "end": w.End})
	}
	if len(windows) > 0 || !creating {
		body["callingWindows"] = mustJSON(windows)
	}
	d.Windows = append(d.Windows, windowRow{N: len(d.Windows), Days: map[string]bool{}})
	d.Values = fr.values

	var in campaign.Input
	err := opt.Decode(mustJSON(body), &in)
	var decode *opt.DecodeError
	if errors.As(err, &decode) {
		// Leave out what has the wrong shape and decode the rest, so its
		// rules are reported too.
		for _, f := range decode.Fields {
			fr.problems.Add(f.Name, "%s", f.Message)
			delete(body, topField(f.Name))
		}
		in = campaign.Input{}
		err = opt.Decode(mustJSON(body), &in)
	}
	if err != nil {
		return campaign.Input{}, d, joinInvalid(&fr.problems, err)
	}
	if !fr.problems.Empty() {
		return campaign.Input{}, d, joinInvalid(&fr.problems, precheck(in))
	}
	return in, d, nil
}

// dateTimeLocal is a datetime-local input's value.
const dateTimeLocal = "2006-01-02T15:04"

// precheckNew is every rule a new campaign's in breaks but the agent's
// existence (the service looks it up): what the form shows when it does
// not get as far as the service.
func precheckNew(orgID string, now time.Time) func(campaign.Input) error {
	return func(in campaign.Input) error {
		c := campaign.New(orgID, now)
		var l invalid.List
		in.Apply(&c, true, now, &l)
		return l.Err()
	}
}

// precheckEdit is precheckNew for an edit of c.
func precheckEdit(c model.Campaign, now time.Time) func(campaign.Input) error {
	return func(in campaign.Input) error {
		var l invalid.List
		in.Apply(&c, false, now, &l)
		return l.Err()
	}
}

// campaignValues are a stored campaign's settings as the edit form shows them.
func campaignValues(c model.Campaign) campaignFormData {
	d := campaignFormData{ID: c.ID, RetryOn: map[string]bool{}}
	cfg := c.Config
	d.Values = map[string]string{
		"name": c.Name, "agentId": c.AgentID, "fromNumbers": strings.Join(cfg.FromNumbers, "\n"), "timezone": cfg.Timezone,
		"callsPerMinute":     strconv.Itoa(cfg.CallsPerMinute),
		"retry.maxAttempts":  strconv.Itoa(cfg.Retry.MaxAttempts),
		"retry.delaySeconds": strconv.Itoa(cfg.Retry.DelaySeconds),
	}
	if c.Description != nil {
		d.Values["description"] = *c.Description
	}
	if cfg.WebhookURL != nil {
		d.Values["webhookUrl"] = *cfg.WebhookURL
	}
	if cfg.MaxConcurrency != nil {
		d.Values["maxConcurrency"] = strconv.Itoa(*cfg.MaxConcurrency)
	}
	if len(cfg.Variables) > 0 {
		if b, err := json.MarshalIndent(cfg.Variables, "", "  "); err == nil {
			d.Values["variables"] = string(b)
		}
	}
	loc, err := time.LoadLocation(cfg.Timezone)
	if err != nil {
		loc = time.UTC
	}
	for name, t := range map[string]*time.Time{"startAt": c.StartAt, "endAt": c.EndAt} {
		if t != nil {
			d.Values[name] = t.In(loc).Format(dateTimeLocal)
		}
	}
	for _, o := range cfg.Retry.RetryOn {
		d.RetryOn[o] = true
	}
	for i, w := range cfg.CallingWindows {
		row := windowRow{N: i, Days: map[string]bool{}, Start: w.Start, End: w.End}
		for _, day := range w.Days {
			row.Days[day] = true
		}
		d.Windows = append(d.Windows, row)
	}
	d.Windows = append(d.Windows, windowRow{N: len(d.Windows), Days: map[string]bool{}})
	return d
}

// windowRows are the calling windows filled in, in the order of their
// inputs (blank rows left out), renumbered from 0 as the body sends them.
func windowRows(form url.Values) []windowRow {
	byN := map[int]*windowRow{}
	for name, vals := range form {
		m := windowInput.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		w := byN[n]
		if w == nil {
			w = &windowRow{Days: map[string]bool{}}
			byN[n] = w
		}
		switch m[2] {
		case "days":
			for _, v := range vals {
				w.Days[v] = true
			}
			w.posted = vals
		case "start":
			w.Start = strings.TrimSpace(vals[0])
		case "end":
			w.End = strings.TrimSpace(vals[0])
		}
	}
	ns := make([]int, 0, len(byN))
	for n := range byN {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	var rows []windowRow
	for _, n := range ns {
		w := byN[n]
		if len(w.posted) == 0 && w.Start == "" && w.End == "" {
			continue
		}
		w.N = len(rows)
		rows = append(rows, *w)
	}
	return rows
}

// windowError is a broken field inside a calling window: its row and the
// rest of its path ("callingWindows[1].days[0]": 1, "days[0]").
var windowError = regexp.MustCompile(`^callingWindows\[([0-9]+)\]\.?(.*)$`)

// refuseCampaign files what the service (or the form) refused: a calling
// window's rules beside its row, the rest beside their inputs; false when
// err is no refusal.
func (d *campaignFormData) refuse(err error) bool {
	errs, msg, ok := refusal(err)
	if !ok {
		return false
	}
	d.Errors, d.Message = fieldErrors{}, msg
	var fields []invalid.Field
	var bad *invalid.Error
	var decode *opt.DecodeError
	switch {
	case errors.As(err, &bad):
		fields = bad.Fields
	case errors.As(err, &decode):
		fields = decode.Fields
	}
	for _, f := range fields {
		if m := windowError.FindStringSubmatch(f.Name); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n < len(d.Windows) {
				msg := f.Message
				if m[2] != "" {
					msg = m[2] + ": " + msg
				}
				d.Windows[n].Errors = append(d.Windows[n].Errors, msg)
				continue
			}
		}
		for name, msgs := range errorsByPath([]invalid.Field{f}) {
			d.Errors[name] = append(d.Errors[name], msgs...)
		}
	}
	if len(fields) == 0 {
		d.Errors = errs
	}
	if d.Message == "" && d.Creating {
		d.Message = "The campaign was not created: correct the fields marked below."
	} else if d.Message == "" {
		d.Message = "The campaign was not saved: correct the fields marked below."
	}
	return true
}
