package web

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// FuzzAgentInput: any submitted form becomes either a request or field
// errors (never a panic, never another error), and always leaves the
// values to show the form again with.
func FuzzAgentInput(f *testing.F) {
	f.Add("name=Support&promptTemplate=Help&status=active&mode=single_prompt", true)
	f.Add("name=&interruptionThresholdMs=x&defaultVariables=%7B&llmTemperature=NaN", false)
	f.Add("transferRoutes=%5B%7B%22to_number%22%3A1%7D%5D&knowledgeBaseIds=nope&endCallEnabled=maybe", true)
	f.Add("runtimeConfig=%5B1%5D&name=%00&timezone=%FF", false)
	f.Fuzz(func(t *testing.T, query string, creating bool) {
		form, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		in, vals, err := agentInput(form, creating)
		if vals.Text == nil || vals.Lists == nil {
			t.Fatal("no values to show the form again with")
		}
		var (
			bad    *invalid.Error
			decode *opt.DecodeError
		)
		if err != nil {
			if !errors.As(err, &bad) && !errors.As(err, &decode) {
				t.Fatalf("not a field error: %v", err)
			}
			return
		}
		if creating && in.Mode.Set && in.Mode.Null {
			t.Fatal("a create form sent mode as null")
		}
	})
}

// FuzzCampaignInput: any submitted campaign form, new or edited, becomes
// either a request or field errors, and always leaves the values and the
// window rows to show the form again with.
func FuzzCampaignInput(f *testing.F) {
	f.Add("name=Renewals&agentId=01a24a71-641c-73ea-9f90-9f8527e614ac&fromNumbers=%2B14155550100&callingWindows.0.days=mon&callingWindows.0.start=09:00&callingWindows.0.end=17:00", true)
	f.Add("startAt=2030-01-07T09:00&timezone=Mars&retry.maxAttempts=x&retry.retryOnShown=1&retry.retryOn=NEVER", false)
	f.Add("callingWindows.9999.days=%FF&callingWindows.1.start=25:00&variables=%5B1%5D&maxConcurrency=", false)
	f.Add("variables=%7B%22a%22%3A1%2C%22a%22%3A2%7D&endAt=yesterday&name=%00", true)
	f.Fuzz(func(t *testing.T, query string, creating bool) {
		form, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		precheck := precheckNew(model.NewID(), now)
		if !creating {
			precheck = precheckEdit(campaign.New(model.NewID(), now), now)
		}
		_, d, err := campaignInput(form, creating, precheck)
		if d.Values == nil || len(d.Windows) == 0 || d.Windows[len(d.Windows)-1].Start != "" {
			t.Fatal("no values or blank window row to show the form again with")
		}
		var (
			bad    *invalid.Error
			decode *opt.DecodeError
		)
		if err != nil && !errors.As(err, &bad) && !errors.As(err, &decode) {
			t.Fatalf("not a field error: %v", err)
		}
		if err != nil && !d.refuse(err) {
			t.Fatalf("a refusal the form cannot show: %v", err)
		}
	})
}

// FuzzSuppressionCSV: any file is either numbers, each valid and on a line
// after the header, or refused line by line; never another error.
func FuzzSuppressionCSV(f *testing.F) {
	f.Add("number,reason\n+14155550100,moved\n")
	f.Add("\ufeffname,phone_number\r\nAda,\"+1415\r\n5550100\"\r\n\r\n")
	f.Add("toNumber\n\"unterminated\n")
	f.Add("number\n+14155550100\x00\n\xff\n")
	f.Fuzz(func(t *testing.T, data string) {
		rows, err := parseSuppressionCSV(strings.NewReader(data), checkSuppression)
		if err != nil {
			var bad *invalid.Error
			if !errors.As(err, &bad) || len(bad.Fields) == 0 {
				t.Fatalf("not a refusal by line: %v", err)
			}
			return
		}
		for _, r := range rows {
			if r.Line < 2 || !invalid.IsE164(r.Number) || len(checkSuppression(r.Number, r.Reason)) > 0 {
				t.Fatalf("a bad row taken: %+v", r)
			}
		}
	})
}
