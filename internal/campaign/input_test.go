package campaign

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

const rulesAgentID = "0193a000-0000-7000-8000-000000000001"

var rulesT0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// decodeApply decodes body as a request and applies it onto c, returning
// the names of the broken fields (nil when it applied).
func decodeApply(t *testing.T, c *model.Campaign, creating bool, body string) []string {
	t.Helper()
	var in Input
	if err := opt.Decode([]byte(body), &in); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	var l invalid.List
	in.Apply(c, creating, rulesT0.Add(time.Hour), &l)
	if l.Empty() {
		return nil
	}
	var names []string
	for _, f := range l.Err().(*invalid.Error).Fields {
		names = append(names, f.Name)
	}
	return names
}

func TestNewHasEveryDefault(t *testing.T) {
	c := New("org", rulesT0)
	want := model.CampaignConfig{
		FromNumbers: []string{}, Timezone: "UTC", CallingWindows: []model.CallingWindow{}, CallsPerMinute: 60,
		Retry:     model.CampaignRetry{MaxAttempts: 1, DelaySeconds: 3600, RetryOn: []string{"NO_ANSWER", "BUSY"}},
		Variables: map[string]any{},
	}
	if diff := cmp.Diff(want, c.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if !model.IsUUID(c.ID) || c.OrgID != "org" || c.Status != model.CampaignDraft || !c.CreatedAt.Equal(rulesT0) || !c.UpdatedAt.Equal(rulesT0) {
		t.Errorf("campaign = %+v", c)
	}
}

func TestApplyCreateFull(t *testing.T) {
	c := New("org", rulesT0)
	body := `{"name":"Spring","agentId":"` + rulesAgentID + `","fromNumbers":["+14155550100","+442071234567"],
		"description":"d","timezone":"America/Chicago",
		"callingWindows":[{"days":["mon","tue"],"start":"09:00","end":"17:30"},{"days":["sat"],"start":"10:00","end":"24:00"}],
		"startAt":"2026-03-08T09:00:00-05:00","endAt":"2026-03-20T00:00:00.5Z","maxConcurrency":5,"callsPerMinute":120,
		"retry":{"maxAttempts":3},"variables":{"company":"Acme","n":2},"webhookUrl":"https://example.com/hook"}`
	if broken := decodeApply(t, &c, true, body); broken != nil {
		t.Fatalf("broken: %v", broken)
	}
	start := time.Date(2026, 3, 8, 14, 0, 0, 0, time.UTC)
	end := time.Date(2026, 3, 20, 0, 0, 0, 500e6, time.UTC)
	if c.Name != "Spring" || c.AgentID != rulesAgentID || *c.Description != "d" || !c.StartAt.Equal(start) ||
		c.StartAt.Location() != time.UTC || !c.EndAt.Equal(end) || !c.UpdatedAt.Equal(rulesT0.Add(time.Hour)) {
		t.Errorf("campaign = %+v", c)
	}
	want := model.CampaignConfig{
		FromNumbers: []string{"+14155550100", "+442071234567"}, Timezone: "America/Chicago",
		CallingWindows: []model.CallingWindow{{Days: []string{"mon", "tue"}, Start: "09:00", End: "17:30"},
			{Days: []string{"sat"}, Start: "10:00", End: "24:00"}},
		MaxConcurrency: new(5), CallsPerMinute: 120,
		// A partial retry object keeps the defaults of the keys it leaves out.
		Retry:      model.CampaignRetry{MaxAttempts: 3, DelaySeconds: 3600, RetryOn: []string{"NO_ANSWER", "BUSY"}},
		Variables:  map[string]any{"company": "Acme", "n": float64(2)},
		WebhookURL: new("https://example.com/hook"),
	}
	if diff := cmp.Diff(want, c.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

func TestApplyRequiredOnCreate(t *testing.T) {
	c := New("org", rulesT0)
	orig := c
	got := decodeApply(t, &c, true, `{"description":"x"}`)
	if !cmp.Equal(got, []string{"name", "agentId", "fromNumbers"}) {
		t.Errorf("broken = %v", got)
	}
	if c.Description != nil || !cmp.Equal(c, orig) {
		t.Error("a refused input changed the campaign")
	}
	// On PATCH nothing is required.
	if got := decodeApply(t, &c, false, `{"description":"x"}`); got != nil || *c.Description != "x" {
		t.Errorf("patch: broken %v, description %v", got, c.Description)
	}
}

func TestApplyRefusesEachBrokenField(t *testing.T) {
	// Each case's keys replace the required ones of a good body.
	base := map[string]string{"name": `"n"`, "agentId": `"` + rulesAgentID + `"`, "fromNumbers": `["+14155550100"]`}
	body := func(keys string) string {
		parts := []string{keys}
		for _, k := range []string{"name", "agentId", "fromNumbers"} {
			if !strings.HasPrefix(keys, `"`+k+`"`) {
				parts = append(parts, `"`+k+`":`+base[k])
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	for _, c := range []struct{ body, field string }{
		{`"name":""`, "name"},
		{`"name":"   "`, "name"},
		{`"name":"` + strings.Repeat("é", 129) + `"`, "name"},
		{`"name":null`, "name"},
		{`"agentId":"nope"`, "agentId"},
		{`"agentId":null`, "agentId"},
		{`"fromNumbers":[]`, "fromNumbers"},
		{`"fromNumbers":null`, "fromNumbers"},
		{`"fromNumbers":["+14155550100","4155550101"]`, "fromNumbers[1]"},
		{`"fromNumbers":["+14155550100","+14155550101","+14155550100"]`, "fromNumbers[2]"},
		{`"fromNumbers":[` + strings.Repeat(`"+14155550100",`, 100) + `"+14155550100"]`, "fromNumbers"},
		{`"description":"` + strings.Repeat("a", 2001) + `"`, "description"},
		{`"timezone":"Mars/Olympus"`, "timezone"},
		{`"timezone":"Local"`, "timezone"},
		{`"timezone":null`, "timezone"},
		{`"callingWindows":null`, "callingWindows"},
		{`"callingWindows":[{"days":[],"start":"09:00","end":"17:00"}]`, "callingWindows[0].days"},
		{`"callingWindows":[{"days":["mon","Tue"],"start":"09:00","end":"17:00"}]`, "callingWindows[0].days[1]"},
		{`"callingWindows":[{"days":["mon","mon"],"start":"09:00","end":"17:00"}]`, "callingWindows[0].days[1]"},
		{`"callingWindows":[{"start":"09:00","end":"17:00"}]`, "callingWindows[0].days"},
		{`"callingWindows":[{"days":["mon"],"end":"17:00"}]`, "callingWindows[0].start"},
		{`"callingWindows":[{"days":["mon"],"start":"9:00","end":"17:00"}]`, "callingWindows[0].start"},
		{`"callingWindows":[{"days":["mon"],"start":"24:00","end":"24:00"}]`, "callingWindows[0].start"},
		{`"callingWindows":[{"days":["mon"],"start":"09:00","end":"24:01"}]`, "callingWindows[0].end"},
		{`"callingWindows":[{"days":["mon"],"start":"09:00","end":"12:60"}]`, "callingWindows[0].end"},
		{`"callingWindows":[{"days":["mon"],"start":"09:00","end":"09:00"}]`, "callingWindows[0].end"},
		{`"callingWindows":[{"days":["mon"],"start":"10:00","end":"09:00"}]`, "callingWindows[0].end"},
		{`"callingWindows":[{"days":["mon"],"start":"09:00","end":null}]`, "callingWindows[0].end"},
		{`"callingWindows":[` + strings.Repeat(`{"days":["mon"],"start":"09:00","end":"10:00"},`, 28) + `{"days":["mon"],"start":"09:00","end":"10:00"}]`, "callingWindows"},
		{`"startAt":"2026-03-08 09:00"`, "startAt"},
		{`"startAt":"2026-03-08"`, "startAt"},
		{`"endAt":"tomorrow"`, "endAt"},
		{`"startAt":"2026-03-08T10:00:00Z","endAt":"2026-03-08T10:00:00Z"`, "endAt"},
		{`"startAt":"2026-03-08T10:00:00Z","endAt":"2026-03-08T09:00:00Z"`, "endAt"},
		{`"maxConcurrency":0`, "maxConcurrency"},
		{`"maxConcurrency":1001`, "maxConcurrency"},
		{`"callsPerMinute":0`, "callsPerMinute"},
		{`"callsPerMinute":6001`, "callsPerMinute"},
		{`"callsPerMinute":null`, "callsPerMinute"},
		{`"retry":null`, "retry"},
		{`"retry":{"maxAttempts":0}`, "retry.maxAttempts"},
		{`"retry":{"maxAttempts":11}`, "retry.maxAttempts"},
		{`"retry":{"maxAttempts":null}`, "retry.maxAttempts"},
		{`"retry":{"delaySeconds":-1}`, "retry.delaySeconds"},
		{`"retry":{"delaySeconds":604801}`, "retry.delaySeconds"},
		{`"retry":{"retryOn":["NO_ANSWER","no_answer"]}`, "retry.retryOn[1]"},
		{`"retry":{"retryOn":["BUSY","BUSY"]}`, "retry.retryOn[1]"},
		{`"retry":{"retryOn":null}`, "retry.retryOn"},
		{`"variables":null`, "variables"},
		{`"webhookUrl":"ftp://example.com"`, "webhookUrl"},
		{`"webhookUrl":"/hook"`, "webhookUrl"},
	} {
		t.Run(c.body, func(t *testing.T) {
			camp := New("org", rulesT0)
			orig := camp
			if got := decodeApply(t, &camp, true, body(c.body)); !slices.Contains(got, c.field) {
				t.Errorf("broken = %v, want %s among them", got, c.field)
			}
			if !cmp.Equal(camp, orig) {
				t.Error("a refused input changed the campaign")
			}
		})
	}
}

// Boundaries of every range are accepted.
func TestApplyAcceptsLimits(t *testing.T) {
	c := New("org", rulesT0)
	body := `{"name":"` + strings.Repeat("é", 128) + `","agentId":"` + rulesAgentID + `",
		"fromNumbers":["+14155550100"],
		"description":"` + strings.Repeat("é", 2000) + `","maxConcurrency":1000,"callsPerMinute":6000,
		"callingWindows":[{"days":["mon","tue","wed","thu","fri","sat","sun"],"start":"00:00","end":"24:00"}],
		"retry":{"maxAttempts":10,"delaySeconds":604800,"retryOn":["NO_ANSWER","BUSY","VOICEMAIL","FAILED"]}}`
	if broken := decodeApply(t, &c, true, body); broken != nil {
		t.Fatalf("broken: %v", broken)
	}
	c = New("org", rulesT0)
	body = `{"name":"n","agentId":"` + rulesAgentID + `","fromNumbers":[` + hundredNumbers() + `],
		"maxConcurrency":1,"callsPerMinute":1,"retry":{"maxAttempts":1,"delaySeconds":0,"retryOn":[]}}`
	if broken := decodeApply(t, &c, true, body); broken != nil {
		t.Fatalf("broken: %v", broken)
	}
	if len(c.Config.FromNumbers) != 100 || c.Config.Retry.RetryOn == nil || len(c.Config.Retry.RetryOn) != 0 {
		t.Errorf("config = %+v", c.Config)
	}
}

func hundredNumbers() string {
	var s []string
	for i := range 100 {
		s = append(s, `"+1415555`+string(rune('0'+i/10))+string(rune('0'+i%10))+`00"`)
	}
	return strings.Join(s, ",")
}

func TestApplyPatch(t *testing.T) {
	c := New("org", rulesT0)
	if broken := decodeApply(t, &c, true, `{"name":"n","agentId":"`+rulesAgentID+`","fromNumbers":["+14155550100"],
		"description":"d","startAt":"2026-03-08T09:00:00Z","endAt":"2026-03-09T09:00:00Z","maxConcurrency":3,
		"webhookUrl":"http://h.example/x","retry":{"maxAttempts":4,"delaySeconds":60,"retryOn":["FAILED"]}}`); broken != nil {
		t.Fatal(broken)
	}
	// A partial retry keeps the stored values of the keys it leaves out.
	if broken := decodeApply(t, &c, false, `{"retry":{"delaySeconds":120}}`); broken != nil {
		t.Fatal(broken)
	}
	if want := (model.CampaignRetry{MaxAttempts: 4, DelaySeconds: 120, RetryOn: []string{"FAILED"}}); !cmp.Equal(c.Config.Retry, want) {
		t.Errorf("retry = %+v", c.Config.Retry)
	}
	// endAt alone is compared with the stored startAt.
	if got := decodeApply(t, &c, false, `{"endAt":"2026-03-08T08:00:00Z"}`); !cmp.Equal(got, []string{"endAt"}) {
		t.Errorf("broken = %v", got)
	}
	if got := decodeApply(t, &c, false, `{"startAt":"2026-03-10T08:00:00Z"}`); !cmp.Equal(got, []string{"startAt"}) {
		t.Errorf("broken = %v", got)
	}
	// Clearing startAt lifts the rule.
	if got := decodeApply(t, &c, false, `{"startAt":null,"endAt":"2026-03-01T00:00:00Z"}`); got != nil || c.StartAt != nil {
		t.Errorf("broken = %v, startAt %v", got, c.StartAt)
	}
	// null clears the nullable fields.
	if got := decodeApply(t, &c, false, `{"description":null,"endAt":null,"maxConcurrency":null,"webhookUrl":null}`); got != nil {
		t.Fatal(got)
	}
	if c.Description != nil || c.EndAt != nil || c.Config.MaxConcurrency != nil || c.Config.WebhookURL != nil {
		t.Errorf("null did not clear: %+v", c)
	}
	if c.Name != "n" || c.Config.FromNumbers[0] != "+14155550100" {
		t.Error("an absent key changed")
	}
}

// The typed objects refuse unknown keys, as opt.Decode does for them.
func TestInputRefusesUnknownKeys(t *testing.T) {
	for body, field := range map[string]string{
		`{"retry":{"maxAttempt":2}}`: "retry.maxAttempt",
		`{"callingWindows":[{"days":["mon"],"start":"09:00","end":"10:00","tz":"x"}]}`: "callingWindows[0].tz",
		`{"nme":"x"}`:               "nme",
		`{"callingWindows":[null]}`: "callingWindows[0]",
	} {
		var in Input
		err := opt.Decode([]byte(body), &in)
		de, ok := err.(*opt.DecodeError)
		if !ok || de.Fields[0].Name != field {
			t.Errorf("%s: %v, want a decode error naming %s", body, err, field)
		}
	}
}

// Applying keeps no reference to the input's slices and maps.
func TestApplyCopies(t *testing.T) {
	c := New("org", rulesT0)
	in := Input{Name: opt.Value("n"), AgentID: opt.Value(rulesAgentID), FromNumbers: opt.Value([]string{"+14155550100"}),
		Variables: opt.Value(map[string]any{"a": "b"}), Retry: opt.Value(RetryInput{RetryOn: opt.Value([]string{"BUSY"})})}
	var l invalid.List
	in.Apply(&c, true, rulesT0, &l)
	if !l.Empty() {
		t.Fatal(l.Err())
	}
	in.FromNumbers.V[0] = "+1999"
	in.Variables.V["a"] = "changed"
	in.Retry.V.RetryOn.V[0] = "FAILED"
	if c.Config.FromNumbers[0] != "+14155550100" || c.Config.Variables["a"] != "b" || c.Config.Retry.RetryOn[0] != "BUSY" {
		t.Errorf("config shares the input: %+v", c.Config)
	}
}

// Untrusted bytes through decoding and every rule must never panic, and a
// campaign that Apply accepts keeps every rule.
func FuzzInput(f *testing.F) {
	f.Add([]byte(`{"name":"n","agentId":"` + rulesAgentID + `","fromNumbers":["+14155550100"],"callingWindows":[{"days":["mon"],"start":"09:00","end":"17:00"}]}`))
	f.Add([]byte(`{"retry":{"maxAttempts":2,"retryOn":["BUSY",null]},"startAt":"2026-01-01T00:00:00Z","endAt":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, creating := range []bool{true, false} {
			var in Input
			if opt.Decode(data, &in) != nil {
				return
			}
			c := New("org", rulesT0)
			var l invalid.List
			in.Apply(&c, creating, rulesT0, &l)
			if !l.Empty() {
				continue
			}
			for _, w := range c.Config.CallingWindows {
				s, ok1 := parseClock(w.Start)
				e, ok2 := parseClock(w.End)
				if !ok1 || !ok2 || s >= e || len(w.Days) == 0 {
					t.Fatalf("accepted window %+v", w)
				}
			}
			if c.StartAt != nil && c.EndAt != nil && !c.EndAt.After(*c.StartAt) {
				t.Fatal("accepted endAt before startAt")
			}
		}
	})
}
