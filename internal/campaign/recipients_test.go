package campaign

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// fieldNames is the names of the fields of an *invalid.Error or an
// *opt.DecodeError.
func brokenNames(t *testing.T, err error) []string {
	t.Helper()
	var fields []invalid.Field
	var ie *invalid.Error
	var de *opt.DecodeError
	switch {
	case errors.As(err, &ie):
		fields = ie.Fields
	case errors.As(err, &de):
		fields = de.Fields
	default:
		t.Fatalf("error %v (%T) is neither invalid nor a decode error", err, err)
	}
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	return names
}

func TestParseJSON(t *testing.T) {
	b, err := ParseJSON([]byte(`{"recipients":[
		{"toNumber":"+14155550100","variables":{"name":"Ann","n":1},"timezone":"America/Chicago"},
		{"toNumber":"+442071234567"},
		{"toNumber":"+14155550100","variables":{"name":"again"}},
		{"toNumber":"+819012345678","variables":null,"timezone":null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if b.Duplicates != 1 || len(b.Recipients) != 3 {
		t.Fatalf("batch = %+v", b)
	}
	r := b.Recipients
	if r[0].ToNumber != "+14155550100" || r[0].Variables["name"] != "Ann" || *r[0].Timezone != "America/Chicago" ||
		r[1].ToNumber != "+442071234567" || r[2].ToNumber != "+819012345678" || r[2].Timezone != nil {
		t.Errorf("recipients = %+v", r)
	}
	for _, x := range r {
		if !model.IsUUID(x.ID) || x.Variables == nil || x.Status != model.RecipientPending {
			t.Errorf("recipient = %+v", x)
		}
	}
}

func TestParseJSONRefuses(t *testing.T) {
	for body, want := range map[string][]string{
		``:                          {"body"},
		`[]`:                        {"body"},
		`{"recipients":"x"}`:        {"recipients"},
		`{}`:                        {"recipients"},
		`{"recipients":null}`:       {"recipients"},
		`{"recipients":[]}`:         {"recipients"},
		`{"recipients":[1]}`:        {"recipients[0]"},
		`{"recipient":[]}`:          {"recipient"},
		`{"recipients":[{"to":1}]}`: {"recipients[0].to"},
		`{"recipients":[{"toNumber":"+14155550100"},{"toNumber":"4155550100"},{},{"toNumber":null},{"toNumber":"+1","timezone":"Mars/Base"}]}`: {
			"recipients[1].toNumber", "recipients[2].toNumber", "recipients[3].toNumber", "recipients[4].toNumber", "recipients[4].timezone"},
		`{"recipients":[{"toNumber":"+14155550100","timezone":""}]}`:             {"recipients[0].timezone"},
		`{"recipients":[{"toNumber":"+14155550100","variables":[]}]}`:            {"recipients[0].variables"},
		`{"recipients":[{"toNumber":"+14155550100","variables":{"a":1,"a":2}}]}`: {"recipients[0].variables.a"},
		"{\"recipients\":[{\"toNumber\":\"+1415555\\u00000100\"}]}":              {"recipients[0].toNumber"},
		"{\"recipients\":[{\"toNumber\":\"+1415555\xff0100\"}]}":                 {"recipients[0].toNumber"},
	} {
		_, err := ParseJSON([]byte(body))
		if err == nil {
			t.Errorf("%s: accepted", body)
			continue
		}
		if got := brokenNames(t, err); !cmp.Equal(got, want) {
			t.Errorf("%s: broken %v, want %v", body, got, want)
		}
	}
}

func TestParseJSONLimits(t *testing.T) {
	items := func(n int, number func(int) string) []byte {
		var sb strings.Builder
		sb.WriteString(`{"recipients":[`)
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"toNumber":%q}`, number(i))
		}
		sb.WriteString(`]}`)
		return []byte(sb.String())
	}
	good := func(i int) string { return fmt.Sprintf("+1415%07d", i) }
	b, err := ParseJSON(items(MaxJSONRecipients, good))
	if err != nil || len(b.Recipients) != MaxJSONRecipients {
		t.Fatalf("10,000 recipients: %v", err)
	}
	if _, err := ParseJSON(items(MaxJSONRecipients+1, good)); !cmp.Equal(brokenNames(t, err), []string{"recipients"}) {
		t.Errorf("10,001 recipients: %v", err)
	}
	// Every item broken: 100 named, then one saying how many more.
	_, err = ParseJSON(items(250, func(i int) string { return "x" }))
	names := brokenNames(t, err)
	if len(names) != 101 || names[99] != "recipients[99].toNumber" || names[100] != "body" {
		t.Fatalf("broken = %d fields, last %v", len(names), names[len(names)-1])
	}
	if msg := err.(*invalid.Error).Fields[100].Message; !strings.Contains(msg, "150 more") {
		t.Errorf("summary = %q", msg)
	}
}

// Untrusted bytes must never panic; a batch that is accepted holds only
// unique E.164 numbers.
func FuzzParseJSON(f *testing.F) {
	f.Add([]byte(`{"recipients":[{"toNumber":"+14155550100","variables":{"a":"b"},"timezone":"Europe/Paris"},{"toNumber":"+14155550100"}]}`))
	f.Add([]byte(`{"recipients":[{"toNumber":null},{"timezone":"x"},1,[]]}`))
	f.Add([]byte(`{"recipients":[{"toNumber":"+1\u0000"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseJSON(data)
		if err != nil {
			return
		}
		checkAcceptedBatch(t, b)
	})
}

// checkBatch fails unless every recipient of b is a unique E.164 number
// with variables and a valid time zone, pending.
func checkAcceptedBatch(t *testing.T, b Batch) {
	t.Helper()
	if len(b.Recipients) == 0 {
		t.Fatal("accepted an empty batch")
	}
	seen := map[string]bool{}
	for _, r := range b.Recipients {
		if !invalid.IsE164(r.ToNumber) || seen[r.ToNumber] || r.Variables == nil || r.Status != model.RecipientPending ||
			(r.Timezone != nil && !invalid.IsTimezone(*r.Timezone)) {
			t.Fatalf("accepted recipient %+v", r)
		}
		seen[r.ToNumber] = true
	}
}
