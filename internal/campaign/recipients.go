package campaign

import (
	"fmt"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// Limits of one recipients body.
const (
	MaxJSONRecipients = 10000
	MaxCSVRows        = 100000
	MaxCSVBytes       = 16 << 20
	// maxDetails is how many broken fields one answer names; past it one
	// more detail says how many are left out.
	maxDetails = 100
)

// Batch is a checked recipients body: unique numbers in body order, each
// with ID, ToNumber, Variables (never nil), Timezone and Status pending.
// Duplicates counts the numbers repeated inside the body (kept once, at
// their first place).
type Batch struct {
	Recipients []model.CampaignRecipient
	Duplicates int
}

// add appends a recipient unless its number is already in the batch.
func (b *Batch) add(seen map[string]struct{}, to string, vars map[string]any, tz *string) {
	if _, dup := seen[to]; dup {
		b.Duplicates++
		return
	}
	seen[to] = struct{}{}
	if vars == nil {
		vars = map[string]any{}
	}
	b.Recipients = append(b.Recipients, model.CampaignRecipient{
		ID: model.NewID(), ToNumber: to, Variables: vars, Timezone: tz, Status: model.RecipientPending,
	})
}

type recipientsBody struct {
	Recipients opt.Field[[]recipientInput] `json:"recipients"`
}

type recipientInput struct {
	ToNumber  opt.Field[string]         `json:"toNumber"`
	Variables opt.Field[map[string]any] `json:"variables"`
	Timezone  opt.Field[string]         `json:"timezone"`
}

// ParseJSON checks a body {"recipients": [{toNumber, variables, timezone}]}
// of 1–10,000 items. A body that is not JSON, or of the wrong shape or with
// an unknown key, is an *opt.DecodeError; a broken value an *invalid.Error
// naming each ("recipients[3].toNumber"), at most 100 and then one saying
// how many more there are.
func ParseJSON(body []byte) (Batch, error) {
	var in recipientsBody
	if err := opt.Decode(body, &in); err != nil {
		return Batch{}, capDetails(err)
	}
	var l invalid.List
	items := in.Recipients.V
	switch {
	case in.Recipients.Null:
		l.Add("recipients", msgNotNull)
	case !in.Recipients.Set:
		l.Add("recipients", msgRequired)
	case len(items) < 1 || len(items) > MaxJSONRecipients:
		l.Add("recipients", "must hold between 1 and %d recipients", MaxJSONRecipients)
	}
	if !l.Empty() {
		return Batch{}, l.Err()
	}
	b := Batch{Recipients: make([]model.CampaignRecipient, 0, len(items))}
	seen := make(map[string]struct{}, len(items))
	for i, r := range items {
		p := invalid.Index("recipients", i)
		switch {
		case r.ToNumber.Null:
			l.Add(p+".toNumber", msgNotNull)
		case !r.ToNumber.Set:
			l.Add(p+".toNumber", msgRequired)
		case !invalid.IsE164(r.ToNumber.V):
			l.Add(p+".toNumber", msgE164)
		}
		if r.Timezone.Present() && !isTimezone(r.Timezone.V) {
			l.Add(p+".timezone", msgTimezone)
		}
		if l.Empty() { // once anything is broken the batch is refused: only check the rest
			b.add(seen, r.ToNumber.V, r.Variables.V, r.Timezone.Ptr())
		}
	}
	if err := capDetails(l.Err()); err != nil {
		return Batch{}, err
	}
	return b, nil
}

// capDetails keeps the first maxDetails fields of an *invalid.Error or an
// *opt.DecodeError, and adds one saying how many it left out: a list of
// 10,000 bad items answers with a readable error, not a megabyte of them.
func capDetails(err error) error {
	switch e := err.(type) {
	case *invalid.Error:
		e.Fields = capFields(e.Fields, len(e.Fields)-maxDetails, "fields")
	case *opt.DecodeError:
		e.Fields = capFields(e.Fields, len(e.Fields)-maxDetails, "fields")
	}
	return err
}

// capFields cuts fields to maxDetails and appends, when more is left out,
// a "body" field saying how many more units (fields, lines) are broken.
func capFields(fields []invalid.Field, more int, unit string) []invalid.Field {
	if len(fields) > maxDetails {
		fields = fields[:maxDetails]
	}
	if more > 0 {
		fields = append(fields, invalid.Field{Name: "body",
			Message: fmt.Sprintf("and %d more %s are refused (only the first %d problems are listed)", more, unit, maxDetails)})
	}
	return fields
}
