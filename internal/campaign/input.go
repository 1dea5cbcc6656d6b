package campaign

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// Limits of a campaign's settings (conventions.md, "Campaigns").
const (
	MaxNameLen           = 128
	MaxDescriptionLen    = 2000
	MaxFromNumbers       = 100
	MaxCallingWindows    = 28
	MaxConcurrencyLimit  = 1000
	MaxCallsPerMinute    = 6000
	MaxRetryAttempts     = 10
	MaxRetryDelaySeconds = 7 * 24 * 3600
)

// Defaults of a new campaign.
const (
	DefaultTimezone       = "UTC"
	DefaultCallsPerMinute = 60
	DefaultMaxAttempts    = 1
	DefaultDelaySeconds   = 3600
)

// DefaultRetryOn is the outcomes retried unless the campaign says otherwise.
func DefaultRetryOn() []string { return []string{model.RetryNoAnswer, model.RetryBusy} }

// retryOutcomes are the values of retry.retryOn.
var retryOutcomes = []string{model.RetryNoAnswer, model.RetryBusy, model.RetryVoicemail, model.RetryFailed}

// Messages shared by several checks.
const (
	msgE164     = "must be an E.164 number such as +14155550100"
	msgTimezone = "must be an IANA time zone name such as America/Chicago"
	msgRequired = "is required"
	msgNotNull  = "must not be null"
)

// Input is a POST /campaigns or PATCH /campaigns/{id} body (opt.Decode'd;
// typed objects refuse unknown keys). On PATCH absent keys keep their value
// and null clears a nullable field (description, startAt, endAt,
// maxConcurrency, webhookUrl); the others refuse null.
type Input struct {
	Name           opt.Field[string]         `json:"name"`
	AgentID        opt.Field[string]         `json:"agentId"`
	FromNumbers    opt.Field[[]string]       `json:"fromNumbers"`
	Description    opt.Field[string]         `json:"description"`
	Timezone       opt.Field[string]         `json:"timezone"`
	CallingWindows opt.Field[[]WindowInput]  `json:"callingWindows"`
	StartAt        opt.Field[string]         `json:"startAt"` // RFC 3339 date-time
	EndAt          opt.Field[string]         `json:"endAt"`
	MaxConcurrency opt.Field[int]            `json:"maxConcurrency"`
	CallsPerMinute opt.Field[int]            `json:"callsPerMinute"`
	Retry          opt.Field[RetryInput]     `json:"retry"`
	Variables      opt.Field[map[string]any] `json:"variables"`
	WebhookURL     opt.Field[string]         `json:"webhookUrl"`
}

// WindowInput is one item of callingWindows: all three keys are required.
type WindowInput struct {
	Days  opt.Field[[]string] `json:"days"`
	Start opt.Field[string]   `json:"start"`
	End   opt.Field[string]   `json:"end"`
}

// RetryInput is the retry object. A key left out keeps the campaign's value:
// the default on create, the stored one on PATCH.
type RetryInput struct {
	MaxAttempts  opt.Field[int]      `json:"maxAttempts"`
	DelaySeconds opt.Field[int]      `json:"delaySeconds"`
	RetryOn      opt.Field[[]string] `json:"retryOn"`
}

// New is a draft campaign with every default (timezone UTC, callsPerMinute
// 60, retry {1, 3600, [NO_ANSWER, BUSY]}, variables {}, callingWindows []),
// a new id, created and updated at now.
func New(orgID string, now time.Time) model.Campaign {
	return model.Campaign{
		ID:     model.NewID(),
		OrgID:  orgID,
		Status: model.CampaignDraft,
		Config: model.CampaignConfig{
			FromNumbers:    []string{},
			Timezone:       DefaultTimezone,
			CallingWindows: []model.CallingWindow{},
			CallsPerMinute: DefaultCallsPerMinute,
			Retry: model.CampaignRetry{
				MaxAttempts:  DefaultMaxAttempts,
				DelaySeconds: DefaultDelaySeconds,
				RetryOn:      DefaultRetryOn(),
			},
			Variables: map[string]any{},
		},
		CreatedAt: now,
		UpdatedAt: now,
	}
}

// Apply checks in (creating: name, agentId, fromNumbers required) and, when
// nothing in it is broken, writes it onto c and sets c.UpdatedAt = now.
// Every broken field goes to l under its dotted, indexed name
// ("retry.maxAttempts", "callingWindows[1].days[0]", "fromNumbers[2]").
// Rules across fields (endAt after startAt) are checked on the result, so a
// PATCH of endAt alone is compared with the stored startAt. It does not look
// agentId up: the service does.
func (in *Input) Apply(c *model.Campaign, creating bool, now time.Time, l *invalid.List) {
	before := l.Len()
	next := *c
	cfg := &next.Config

	if v, ok := setString(l, "name", in.Name, creating); ok {
		switch {
		case invalid.IsBlank(v):
			l.Add("name", "must not be empty")
		case invalid.Len(v) > MaxNameLen:
			l.Add("name", "must be at most %d characters", MaxNameLen)
		default:
			next.Name = v
		}
	}
	if v, ok := setString(l, "agentId", in.AgentID, creating); ok {
		if model.IsUUID(v) {
			next.AgentID = v
		} else {
			l.Add("agentId", "must be a UUID")
		}
	}
	if in.FromNumbers.Null {
		l.Add("fromNumbers", msgNotNull)
	} else if creating && !in.FromNumbers.Set {
		l.Add("fromNumbers", msgRequired)
	} else if in.FromNumbers.Set && checkFromNumbers(in.FromNumbers.V, l) {
		cfg.FromNumbers = slices.Clone(in.FromNumbers.V)
	}
	if in.Description.Null {
		next.Description = nil
	} else if in.Description.Set {
		if invalid.Len(in.Description.V) > MaxDescriptionLen {
			l.Add("description", "must be at most %d characters", MaxDescriptionLen)
		} else {
			next.Description = in.Description.Ptr()
		}
	}
	if v, ok := setString(l, "timezone", in.Timezone, false); ok {
		if invalid.IsTimezone(v) {
			cfg.Timezone = v
		} else {
			l.Add("timezone", msgTimezone)
		}
	}
	if in.CallingWindows.Null {
		l.Add("callingWindows", msgNotNull)
	} else if in.CallingWindows.Set {
		if ws, ok := checkWindows(in.CallingWindows.V, l); ok {
			cfg.CallingWindows = ws
		}
	}
	startOK := applyTime(l, "startAt", in.StartAt, &next.StartAt)
	endOK := applyTime(l, "endAt", in.EndAt, &next.EndAt)
	if in.MaxConcurrency.Null {
		cfg.MaxConcurrency = nil
	} else if in.MaxConcurrency.Set {
		if intIn(l, "maxConcurrency", in.MaxConcurrency.V, 1, MaxConcurrencyLimit) {
			cfg.MaxConcurrency = in.MaxConcurrency.Ptr()
		}
	}
	if in.CallsPerMinute.Null {
		l.Add("callsPerMinute", msgNotNull)
	} else if in.CallsPerMinute.Set && intIn(l, "callsPerMinute", in.CallsPerMinute.V, 1, MaxCallsPerMinute) {
		cfg.CallsPerMinute = in.CallsPerMinute.V
	}
	if in.Retry.Null {
		l.Add("retry", msgNotNull)
	} else if in.Retry.Set {
		cfg.Retry = in.Retry.V.apply(cfg.Retry, l)
	}
	if in.Variables.Null {
		l.Add("variables", msgNotNull)
	} else if in.Variables.Set {
		cfg.Variables = maps.Clone(in.Variables.V)
		if cfg.Variables == nil {
			cfg.Variables = map[string]any{}
		}
	}
	if in.WebhookURL.Null {
		cfg.WebhookURL = nil
	} else if in.WebhookURL.Set {
		if invalid.IsHTTPURL(in.WebhookURL.V) {
			cfg.WebhookURL = in.WebhookURL.Ptr()
		} else {
			l.Add("webhookUrl", "must be an absolute http or https URL")
		}
	}

	if startOK && endOK && next.StartAt != nil && next.EndAt != nil && !next.EndAt.After(*next.StartAt) {
		name := "endAt"
		if !in.EndAt.Set {
			name = "startAt" // only startAt changed: it is the one to fix
		}
		l.Add(name, "must make endAt later than startAt")
	}
	if l.Len() > before {
		return
	}
	next.UpdatedAt = now
	*c = next
}

// setString is the value of a string field that refuses null; required
// says an absent key is broken too. ok is false when there is nothing to
// set (absent) or the field is broken.
func setString(l *invalid.List, name string, f opt.Field[string], required bool) (string, bool) {
	switch {
	case f.Null:
		l.Add(name, msgNotNull)
	case !f.Set:
		if required {
			l.Add(name, msgRequired)
		}
	default:
		return f.V, true
	}
	return "", false
}

func intIn(l *invalid.List, name string, v, lo, hi int) bool {
	if v < lo || v > hi {
		l.Add(name, "must be between %d and %d", lo, hi)
		return false
	}
	return true
}

// checkFromNumbers reports whether numbers are 1–100 distinct E.164 numbers,
// naming each that is not.
func checkFromNumbers(numbers []string, l *invalid.List) bool {
	before := l.Len()
	if len(numbers) < 1 || len(numbers) > MaxFromNumbers {
		l.Add("fromNumbers", "must hold between 1 and %d numbers", MaxFromNumbers)
	}
	first := make(map[string]int, len(numbers))
	for i, n := range numbers {
		name := invalid.Index("fromNumbers", i)
		if !invalid.IsE164(n) {
			l.Add(name, msgE164)
			continue
		}
		if j, seen := first[n]; seen {
			l.Add(name, "repeats fromNumbers[%d]", j)
			continue
		}
		first[n] = i
	}
	return l.Len() == before
}

// applyTime writes a nullable RFC 3339 date-time onto dst (UTC, to the
// millisecond, as the store keeps it) and reports whether the field is
// well-formed or absent.
func applyTime(l *invalid.List, name string, f opt.Field[string], dst **time.Time) bool {
	switch {
	case f.Null:
		*dst = nil
	case f.Set:
		t, err := time.Parse(time.RFC3339Nano, f.V)
		if err != nil {
			l.Add(name, "must be an RFC 3339 date-time such as 2026-11-23T09:00:00Z")
			return false
		}
		t = t.UTC().Truncate(time.Millisecond)
		*dst = &t
	}
	return true
}

// apply checks the retry object and returns base with its present keys set.
func (r RetryInput) apply(base model.CampaignRetry, l *invalid.List) model.CampaignRetry {
	if r.MaxAttempts.Null {
		l.Add("retry.maxAttempts", msgNotNull)
	} else if r.MaxAttempts.Set && intIn(l, "retry.maxAttempts", r.MaxAttempts.V, 1, MaxRetryAttempts) {
		base.MaxAttempts = r.MaxAttempts.V
	}
	if r.DelaySeconds.Null {
		l.Add("retry.delaySeconds", msgNotNull)
	} else if r.DelaySeconds.Set && intIn(l, "retry.delaySeconds", r.DelaySeconds.V, 0, MaxRetryDelaySeconds) {
		base.DelaySeconds = r.DelaySeconds.V
	}
	if r.RetryOn.Null {
		l.Add("retry.retryOn", msgNotNull)
	} else if r.RetryOn.Set {
		ok := true
		for i, o := range r.RetryOn.V {
			name := invalid.Index("retry.retryOn", i)
			if !slices.Contains(retryOutcomes, o) {
				l.Add(name, "must be one of %s", strings.Join(retryOutcomes, ", "))
				ok = false
			} else if j := slices.Index(r.RetryOn.V, o); j < i {
				l.Add(name, "repeats retry.retryOn[%d]", j)
				ok = false
			}
		}
		if ok {
			base.RetryOn = slices.Clone(r.RetryOn.V)
			if base.RetryOn == nil {
				base.RetryOn = []string{}
			}
		}
	}
	return base
}

// windowDays are the names of callingWindows' days, in time.Weekday order.
var windowDays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// dayNames lists them as the API documents them, Monday first.
const dayNames = "mon, tue, wed, thu, fri, sat, sun"

// checkWindows checks callingWindows and returns them as the model keeps
// them.
func checkWindows(in []WindowInput, l *invalid.List) ([]model.CallingWindow, bool) {
	before := l.Len()
	if len(in) > MaxCallingWindows {
		l.Add("callingWindows", "must hold at most %d windows", MaxCallingWindows)
	}
	out := make([]model.CallingWindow, 0, len(in))
	for i, w := range in {
		p := invalid.Index("callingWindows", i)
		cw := model.CallingWindow{}
		switch {
		case w.Days.Null:
			l.Add(p+".days", msgNotNull)
		case !w.Days.Set:
			l.Add(p+".days", msgRequired)
		default:
			cw.Days = checkDays(w.Days.V, p+".days", l)
		}
		start, startOK := clockField(l, p+".start", w.Start, false)
		end, endOK := clockField(l, p+".end", w.End, true)
		if startOK && endOK && start >= end {
			l.Add(p+".end", "must be later than start")
		}
		cw.Start, cw.End = w.Start.V, w.End.V
		out = append(out, cw)
	}
	return out, l.Len() == before
}

func checkDays(days []string, name string, l *invalid.List) []string {
	if len(days) < 1 || len(days) > 7 {
		l.Add(name, "must hold between 1 and 7 days")
	}
	for i, d := range days {
		if !slices.Contains(windowDays, d) {
			l.Add(invalid.Index(name, i), "must be one of %s", dayNames)
		} else if j := slices.Index(days, d); j < i {
			l.Add(invalid.Index(name, i), "repeats %s", invalid.Index(name, j))
		}
	}
	return slices.Clone(days)
}

// clockField checks a required "HH:MM" time of day and returns it in
// minutes after midnight; end allows "24:00", the end of the day.
func clockField(l *invalid.List, name string, f opt.Field[string], end bool) (int, bool) {
	v, ok := setString(l, name, f, true)
	if !ok {
		return 0, false
	}
	m, ok := parseClock(v)
	if !ok || (m == 24*60 && !end) {
		if end {
			l.Add(name, `must be a time of day "HH:MM" from 00:00 to 24:00`)
		} else {
			l.Add(name, `must be a time of day "HH:MM" from 00:00 to 23:59`)
		}
		return 0, false
	}
	return m, true
}

// parseClock reads "HH:MM" (00:00–23:59, or 24:00) as minutes after
// midnight.
func parseClock(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	if m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, false
	}
	return h*60 + m, true
}
