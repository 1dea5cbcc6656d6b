package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// The campaign tests drive the API only: no dispatcher dials here (and
// a campaign that is started has a startAt far ahead, so none would).

// farStart keeps a started campaign from dialing whoever runs the dispatcher.
const farStart = "2099-01-01T00:00:00Z"

// campaignBody is a valid create body for agent plus extra keys.
func campaignBody(agent string, extra map[string]any) map[string]any {
	body := map[string]any{"name": "Renewals", "agentId": agent, "fromNumbers": []any{"+14155550100"}, "startAt": farStart}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

func (e *env) newCampaign(agent string, extra map[string]any) map[string]any {
	e.t.Helper()
	return e.create("/v1/campaigns", campaignBody(agent, extra))
}

// postCSV posts body as text/csv to path as acme.
func (e *env) postCSV(path, body string) response {
	e.t.Helper()
	return e.requestWith("POST", path, body, e.key, http.Header{"Content-Type": {"text/csv"}})
}

// counts is a campaign's counts as the API answers them.
func (e *env) counts(id string) map[string]any {
	e.t.Helper()
	return e.must(http.StatusOK, "GET", "/v1/campaigns/"+id, nil).Data(e.t)["counts"].(map[string]any)
}

func (e *env) total(id string) int {
	e.t.Helper()
	return int(e.counts(id)["total"].(float64))
}

// added checks a recipients answer.
func added(t *testing.T, r response, want [3]int) {
	t.Helper()
	if r.Status != http.StatusCreated {
		t.Fatalf("add recipients = %d %s", r.Status, r.Body)
	}
	d := r.Data(t)
	got := [3]int{int(d["added"].(float64)), int(d["duplicates"].(float64)), int(d["suppressed"].(float64))}
	if got != want {
		t.Errorf("added, duplicates, suppressed = %v, want %v", got, want)
	}
}

// onEngines runs test on every store, each in an env of its own.
func onEngines(t *testing.T, test func(t *testing.T, e *env)) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newEnv(t, engine))
		})
	}
}

func TestCampaignCreateReadUpdateDelete(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		agent := e.createAgent(nil)["id"].(string)
		c := e.create("/v1/campaigns", map[string]any{"name": "Renewals", "agentId": agent, "fromNumbers": []any{"+14155550100"}})
		want := map[string]any{
			"name": "Renewals", "agentId": agent, "fromNumbers": []any{"+14155550100"}, "description": nil,
			"timezone": "UTC", "callingWindows": []any{}, "startAt": nil, "endAt": nil, "maxConcurrency": nil,
			"callsPerMinute": float64(60), "webhookUrl": nil, "variables": map[string]any{}, "status": "draft",
			"retry":       map[string]any{"maxAttempts": float64(1), "delaySeconds": float64(3600), "retryOn": []any{"NO_ANSWER", "BUSY"}},
			"counts":      map[string]any{"total": 0.0, "pending": 0.0, "inProgress": 0.0, "completed": 0.0, "failed": 0.0, "suppressed": 0.0, "expired": 0.0, "canceled": 0.0},
			"startedAt":   nil,
			"completedAt": nil,
		}
		for k, v := range want {
			if !jsonEqual(c[k], v) {
				t.Errorf("%s = %v, want %v", k, c[k], v)
			}
		}
		if len(c) != len(want)+3 || c["createdAt"] != c["updatedAt"] { // id, createdAt, updatedAt
			t.Errorf("campaign has %d keys: %v", len(c), c)
		}
		id := c["id"].(string)
		path := "/v1/campaigns/" + id
		if got := e.must(http.StatusOK, "GET", path, nil).Data(t); !jsonEqual(got, c) {
			t.Errorf("GET = %v, want %v", got, c)
		}

		full := map[string]any{
			"name": "Q4", "description": "Renewal calls", "timezone": "America/Chicago",
			"fromNumbers":    []any{"+14155550100", "+13125550100"},
			"callingWindows": []any{map[string]any{"days": []any{"mon", "tue", "wed", "thu", "fri"}, "start": "09:00", "end": "17:30"}},
			"startAt":        "2026-12-01T09:00:00Z", "endAt": "2026-12-20T17:00:00Z", "maxConcurrency": 5, "callsPerMinute": 30,
			"retry":     map[string]any{"maxAttempts": 3, "delaySeconds": 600, "retryOn": []any{"NO_ANSWER", "BUSY", "VOICEMAIL", "FAILED"}},
			"variables": map[string]any{"company": "Acme"}, "webhookUrl": "https://example.com/campaigns",
		}
		p := e.must(http.StatusOK, "PATCH", path, full).Data(t)
		for k, v := range full {
			if k == "startAt" || k == "endAt" {
				v = strings.Replace(v.(string), "Z", ".000Z", 1)
			}
			if !jsonEqual(p[k], v) {
				t.Errorf("patched %s = %v, want %v", k, p[k], v)
			}
		}
		// null clears the nullable fields; a partial retry keeps the rest.
		p = e.must(http.StatusOK, "PATCH", path, map[string]any{
			"description": nil, "startAt": nil, "endAt": nil, "maxConcurrency": nil, "webhookUrl": nil, "retry": map[string]any{"maxAttempts": 2},
		}).Data(t)
		for _, k := range []string{"description", "startAt", "endAt", "maxConcurrency", "webhookUrl"} {
			if p[k] != nil {
				t.Errorf("%s = %v after null", k, p[k])
			}
		}
		if r := p["retry"].(map[string]any); r["maxAttempts"] != 2.0 || r["delaySeconds"] != 600.0 {
			t.Errorf("retry = %v", r)
		}

		// Lists: newest first, filtered by status and agent.
		other := e.createAgent(map[string]any{"name": "Other"})["id"].(string)
		second := e.newCampaign(other, nil)
		l := e.must(http.StatusOK, "GET", "/v1/campaigns", nil)
		if list := l.List(t); len(list) != 2 || list[0]["id"] != second["id"] || l.JSON(t)["total"] != 2.0 {
			t.Errorf("list = %s", l.Body)
		}
		if list := e.must(http.StatusOK, "GET", "/v1/campaigns?agentId="+other+"&status=draft&sortDir=asc&pageSize=1", nil).List(t); len(list) != 1 || list[0]["id"] != second["id"] {
			t.Errorf("agent filter = %v", list)
		}
		if list := e.must(http.StatusOK, "GET", "/v1/campaigns?status=running", nil).List(t); len(list) != 0 {
			t.Errorf("status filter = %v", list)
		}
		e.invalid("validation_failed", "GET", "/v1/campaigns?status=active&agentId=x&sortDir=up&page=0&foo=1",
			nil, "status", "agentId", "sortDir", "page", "foo")

		e.must(http.StatusNoContent, "DELETE", path, nil)
		e.must(http.StatusNotFound, "GET", path, nil)
		e.must(http.StatusNotFound, "DELETE", path, nil)
		e.must(http.StatusNotFound, "PATCH", path, map[string]any{"name": "x"})
		e.must(http.StatusNotFound, "GET", "/v1/campaigns/not-a-uuid", nil)
	})
}

// Every broken field is named, all at once, and nothing is stored.
func TestCampaignValidation(t *testing.T) {
	e := newEnv(t)
	agent := e.createAgent(nil)["id"].(string)
	e.invalid("validation_failed", "POST", "/v1/campaigns", map[string]any{}, "name", "agentId", "fromNumbers")
	e.invalid("validation_failed", "POST", "/v1/campaigns", map[string]any{
		"name": str(129), "agentId": "0190d4c3-0000-7000-8000-000000000000", "fromNumbers": []any{"+14155550100", "555"},
		"description": str(2001), "timezone": "Mars/Olympus", "startAt": "tomorrow", "maxConcurrency": 1001,
		"callsPerMinute": 0, "webhookUrl": "ftp://example.com", "variables": nil,
		"callingWindows": []any{
			map[string]any{"days": []any{"mon"}, "start": "09:00", "end": "17:00"},
			map[string]any{"days": []any{"mon", "funday", "mon"}, "start": "18:00", "end": "08:00"},
		},
		"retry": map[string]any{"maxAttempts": 11, "delaySeconds": -1, "retryOn": []any{"BUSY", "HUNG_UP"}},
	}, "name", "agentId", "fromNumbers[1]", "description", "timezone", "startAt", "maxConcurrency", "callsPerMinute",
		"webhookUrl", "variables", "callingWindows[1].days[1]", "callingWindows[1].days[2]", "callingWindows[1].end",
		"retry.maxAttempts", "retry.delaySeconds", "retry.retryOn[1]")
	e.invalid("validation_failed", "POST", "/v1/campaigns", campaignBody(agent, map[string]any{"fromNumbers": []any{}, "callsPerMinute": 6001, "maxConcurrency": 0}),
		"fromNumbers", "callsPerMinute", "maxConcurrency")
	e.invalid("validation_failed", "POST", "/v1/campaigns", campaignBody(agent, map[string]any{"startAt": "2026-12-02T00:00:00Z", "endAt": "2026-12-01T00:00:00Z"}), "endAt")
	e.invalid("validation_failed", "POST", "/v1/campaigns", campaignBody("nope", nil), "agentId")
	// Typed objects refuse unknown keys; free-form variables do not.
	e.invalid("invalid_json", "POST", "/v1/campaigns", campaignBody(agent, map[string]any{"retry": map[string]any{"tries": 2}}), "retry.tries")
	e.invalid("invalid_json", "POST", "/v1/campaigns", campaignBody(agent, map[string]any{"priority": 1}), "priority")
	e.invalid("invalid_json", "POST", "/v1/campaigns", campaignBody(agent, map[string]any{"callsPerMinute": "60"}), "callsPerMinute")
	e.invalid("invalid_json", "POST", "/v1/campaigns", `{"name":"A","name":"B"}`, "name")
	if r := e.must(http.StatusOK, "GET", "/v1/campaigns", nil); r.JSON(t)["total"] != 0.0 {
		t.Fatalf("refused creates stored campaigns: %s", r.Body)
	}
	// Another organization's agent is no agent.
	foreign := e.request("POST", "/v1/agents", map[string]any{"name": "G", "promptTemplate": "P"}, e.otherKey).Data(t)["id"].(string)
	e.invalid("validation_failed", "POST", "/v1/campaigns", campaignBody(foreign, nil), "agentId")

	c := e.newCampaign(agent, map[string]any{"variables": map[string]any{"nested": map[string]any{"a": []any{1, "x"}}}})
	path := "/v1/campaigns/" + c["id"].(string)
	before := e.must(http.StatusOK, "GET", path, nil).Body
	for _, patch := range []map[string]any{
		{"name": nil}, {"agentId": nil}, {"fromNumbers": nil}, {"timezone": nil}, {"callingWindows": nil},
		{"callsPerMinute": nil}, {"retry": nil}, {"retry": map[string]any{"retryOn": nil}},
		{"agentId": "0190d4c3-0000-7000-8000-000000000000"}, {"agentId": foreign}, {"endAt": "2098-01-01T00:00:00Z"},
	} {
		r := e.do("PATCH", path, patch)
		if r.Status != http.StatusBadRequest || r.ErrorCode(t) != "validation_failed" {
			t.Errorf("PATCH %v = %d %s", patch, r.Status, r.Body)
		}
	}
	if after := e.must(http.StatusOK, "GET", path, nil).Body; string(after) != string(before) {
		t.Errorf("refused patches changed the campaign:\n%s\n%s", before, after)
	}
}

func TestCampaignRecipientsJSON(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		agent := e.createAgent(nil)["id"].(string)
		id := e.newCampaign(agent, nil)["id"].(string)
		path := "/v1/campaigns/" + id + "/recipients"
		e.create("/v1/suppressions", map[string]any{"number": "+14155550103", "reason": "asked"})

		r := e.do("POST", path, map[string]any{"recipients": []any{
			map[string]any{"toNumber": "+14155550101", "variables": map[string]any{"name": "Ada", "tier": 2}, "timezone": "America/Los_Angeles"},
			map[string]any{"toNumber": "+14155550102"},
			map[string]any{"toNumber": "+14155550101", "variables": map[string]any{"name": "again"}},
			map[string]any{"toNumber": "+14155550103", "timezone": nil},
		}})
		added(t, r, [3]int{3, 1, 1})
		// A number the campaign holds is a duplicate too.
		added(t, e.do("POST", path, map[string]any{"recipients": []any{
			map[string]any{"toNumber": "+14155550102"}, map[string]any{"toNumber": "+14155550104"},
		}}), [3]int{1, 1, 0})
		want := map[string]any{"total": 4.0, "pending": 3.0, "inProgress": 0.0, "completed": 0.0, "failed": 0.0, "suppressed": 1.0, "expired": 0.0, "canceled": 0.0}
		if got := e.counts(id); !jsonEqual(got, want) {
			t.Errorf("counts = %v, want %v", got, want)
		}

		// Listed in upload order, each with every key.
		list := e.must(http.StatusOK, "GET", path, nil).List(t)
		numbers := make([]string, len(list))
		for i, rc := range list {
			numbers[i] = rc["toNumber"].(string)
		}
		if strings.Join(numbers, ",") != "+14155550101,+14155550102,+14155550103,+14155550104" {
			t.Errorf("order = %v", numbers)
		}
		first := list[0]
		if !jsonEqual(first["variables"], map[string]any{"name": "Ada", "tier": 2}) || first["timezone"] != "America/Los_Angeles" ||
			first["status"] != "pending" || first["attempts"] != 0.0 || first["lastHangupCause"] != nil ||
			first["nextAttemptAt"] != nil || !jsonEqual(first["callIds"], []any{}) || len(first) != 10 {
			t.Errorf("recipient = %v", first)
		}
		if list[2]["status"] != "suppressed" || list[2]["timezone"] != nil {
			t.Errorf("suppressed recipient = %v", list[2])
		}
		if l := e.must(http.StatusOK, "GET", path+"?sortDir=desc&pageSize=1&page=2", nil); l.List(t)[0]["toNumber"] != "+14155550103" ||
			l.JSON(t)["total"] != 4.0 || l.JSON(t)["hasNextPage"] != true {
			t.Errorf("desc page 2 = %s", l.Body)
		}
		if l := e.must(http.StatusOK, "GET", path+"?status=suppressed", nil).List(t); len(l) != 1 || l[0]["toNumber"] != "+14155550103" {
			t.Errorf("status filter = %v", l)
		}
		e.invalid("validation_failed", "GET", path+"?status=done&sortDir=x&q=1", nil, "status", "sortDir", "q")

		// All or nothing: any broken item refuses the whole body.
		refused := []struct {
			code   string
			body   any
			fields []string
		}{
			{"validation_failed", map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550105"}, map[string]any{"toNumber": "4155550106"}}}, []string{"recipients[1].toNumber"}},
			{"validation_failed", map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550105", "timezone": "America/Springfield"}}}, []string{"recipients[0].timezone"}},
			{"validation_failed", map[string]any{"recipients": []any{map[string]any{"variables": map[string]any{}}}}, []string{"recipients[0].toNumber"}},
			{"validation_failed", map[string]any{"recipients": []any{}}, []string{"recipients"}},
			{"validation_failed", map[string]any{}, []string{"recipients"}},
			{"validation_failed", `{"recipients":[{"toNumber":"+14155550105","variables":{"k":"a\u0000b"}}]}`, []string{"recipients[0].variables.k"}},
			{"validation_failed", "{\"recipients\":[{\"toNumber\":\"+14155550105\",\"variables\":{\"k\":\"\xff\"}}]}", []string{"recipients[0].variables.k"}},
			{"invalid_json", map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550105", "phone": "x"}}}, []string{"recipients[0].phone"}},
			{"invalid_json", map[string]any{"recipients": []any{map[string]any{"toNumber": 14155550105}}}, []string{"recipients[0].toNumber"}},
			{"invalid_json", `{"recipients":[`, nil},
			{"invalid_json", "toNumber\n+14155550105\n", nil}, // CSV without its Content-Type is not JSON
		}
		for _, c := range refused {
			e.invalid(c.code, "POST", path, c.body, c.fields...)
		}
		many := make([]any, 10001)
		for i := range many {
			many[i] = map[string]any{"toNumber": fmt.Sprintf("+1415%07d", i)}
		}
		e.invalid("validation_failed", "POST", path, map[string]any{"recipients": many}, "recipients")
		// A long list of bad items names the first 100, then how many more.
		bad := make([]any, 300)
		for i := range bad {
			bad[i] = map[string]any{"toNumber": "x"}
		}
		if fields := e.invalid("validation_failed", "POST", path, map[string]any{"recipients": bad}).ErrorFields(t); len(fields) != 101 || fields[100] != "body" {
			t.Errorf("300 bad items named %d fields, last %q", len(fields), fields[len(fields)-1])
		}
		added(t, e.do("POST", path, map[string]any{"recipients": many[:10000]}), [3]int{10000, 0, 0})
		if n := e.total(id); n != 10004 {
			t.Errorf("total = %d after the refused bodies and 10,000 more", n)
		}
		e.must(http.StatusNotFound, "POST", "/v1/campaigns/0190d4c3-0000-7000-8000-000000000000/recipients", map[string]any{"recipients": many[:1]})
		e.must(http.StatusNotFound, "GET", "/v1/campaigns/0190d4c3-0000-7000-8000-000000000000/recipients", nil)
	})
}

func TestCampaignRecipientsCSV(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		agent := e.createAgent(nil)["id"].(string)
		id := e.newCampaign(agent, nil)["id"].(string)
		path := "/v1/campaigns/" + id + "/recipients"
		e.create("/v1/suppressions", map[string]any{"number": "+14155550104"})

		// A BOM, CRLF, quoted commas and line breaks (a quoted CRLF reads as
		// LF, as encoding/csv reads it), an empty line, a
		// repeated number, a suppressed one, phone_number for toNumber.
		csv := "\uFEFFphone_number,timezone,first_name,note\r\n" +
			"+14155550101,America/Chicago,Ada,\"likes \"\"calls\"\", mornings\"\r\n" +
			"\r\n" +
			"+14155550102,,Grace,\"two\r\nlines\"\r\n" +
			"+14155550101,,Dup,\r\n" +
			"+14155550104,,Sup,\r\n"
		added(t, e.postCSV(path, csv), [3]int{3, 1, 1})
		list := e.must(http.StatusOK, "GET", path, nil).List(t)
		if len(list) != 3 {
			t.Fatalf("recipients = %v", list)
		}
		if !jsonEqual(list[0]["variables"], map[string]any{"first_name": "Ada", "note": `likes "calls", mornings`}) || list[0]["timezone"] != "America/Chicago" {
			t.Errorf("first = %v", list[0])
		}
		if !jsonEqual(list[1]["variables"], map[string]any{"first_name": "Grace", "note": "two\nlines"}) || list[1]["timezone"] != nil {
			t.Errorf("second = %v", list[1])
		}
		if list[2]["status"] != "suppressed" {
			t.Errorf("third = %v", list[2])
		}
		added(t, e.requestWith("POST", path, "toNumber\n+14155550101\n+14155550105\n", e.key, http.Header{"Content-Type": {"text/csv; charset=utf-8"}}), [3]int{1, 1, 0})

		// Each refused naming the line and the field, nothing stored.
		refused := []struct {
			csv   string
			field string
			line  int
		}{
			{"number,name\n+14155550106,A\n", "body", 1},
			{"toNumber,name\n+14155550106,A\n4155550107,B\n", "toNumber", 3},
			{"toNumber,timezone\n+14155550106,\n\n+14155550107,Mars/Base\n", "timezone", 4},
			{"toNumber,name\r\n+14155550106,\"A\r\nB\"\r\n415-555,C\r\n", "toNumber", 4},
			{"toNumber,name\n+14155550106,A\n+14155550107,\xffB\n", "body", 3},
			{"toNumber,name\n+14155550106,A\x00\n", "body", 2},
			{"toNumber,name\n+14155550106,\"A\n", "body", 2},
		}
		for _, c := range refused {
			r := e.postCSV(path, c.csv)
			if r.Status != http.StatusBadRequest || r.ErrorCode(t) != "validation_failed" {
				t.Errorf("%q = %d %s", c.csv, r.Status, r.Body)
				continue
			}
			details := r.JSON(t)["error"].(map[string]any)["details"].([]any)
			d := details[0].(map[string]any)
			if d["field"] != c.field || d["line"] != float64(c.line) {
				t.Errorf("%q: detail %v, want field %s line %d", c.csv, d, c.field, c.line)
			}
		}
		e.invalid("invalid_json", "POST", path, nil) // no body at all, read as JSON
		for _, empty := range []string{"", "toNumber\n", "\uFEFF\r\n\r\n"} {
			if r := e.postCSV(path, empty); r.Status != http.StatusBadRequest || r.ErrorCode(t) != "validation_failed" {
				t.Errorf("%q = %d %s", empty, r.Status, r.Body)
			}
		}
		if n := e.total(id); n != 4 {
			t.Errorf("total = %d after refused files, want 4", n)
		}
	})
}

// The limits of one upload: 100,000 rows and 16 MiB.
func TestCampaignRecipientsLimits(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		agent := e.createAgent(nil)["id"].(string)
		id := e.newCampaign(agent, nil)["id"].(string)
		path := "/v1/campaigns/" + id + "/recipients"

		var b strings.Builder
		b.WriteString("toNumber\n")
		for i := range 100001 {
			fmt.Fprintf(&b, "+1415%07d\n", i)
		}
		r := e.postCSV(path, b.String())
		if r.Status != http.StatusBadRequest || r.ErrorCode(t) != "validation_failed" || !strings.Contains(string(r.Body), `"line":100002`) {
			t.Errorf("100,001 rows = %d %.300s", r.Status, r.Body)
		}

		// 16 MiB and one byte: 413, whatever the body holds.
		big := []byte("toNumber,note\n+14155550101,")
		big = append(big, strings.Repeat("x", 16<<20+1-len(big))...)
		if r := e.postCSV(path, string(big)); r.Status != http.StatusRequestEntityTooLarge || r.ErrorCode(t) != "payload_too_large" {
			t.Errorf("16 MiB + 1 CSV = %d %.300s", r.Status, r.Body)
		}
		bigJSON := `{"recipients":[{"toNumber":"+14155550101","variables":{"note":"` + strings.Repeat("x", 16<<20) + `"}}]}`
		if r := e.do("POST", path, bigJSON); r.Status != http.StatusRequestEntityTooLarge || r.ErrorCode(t) != "payload_too_large" {
			t.Errorf("16 MiB + JSON = %d %.300s", r.Status, r.Body)
		}
		// Other routes keep their 1 MiB.
		if r := e.do("PATCH", "/v1/campaigns/"+id, `{"description":"`+strings.Repeat("x", 1<<20)+`"}`); r.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("1 MiB PATCH = %d", r.Status)
		}
		if n := e.total(id); n != 0 {
			t.Fatalf("total = %d after refused uploads", n)
		}
	})
}

// Exactly 100,000 rows are taken, in one upload. On SQLite only: the
// limit is the API's, the same whatever the engine, and the store's
// chunked insert is checked on both engines by storetest
// (CampaignRecipients/AddMany); 100,000 rows into PostgreSQL under
// -race cost a minute of make test. make bench's CampaignUpload uploads
// 100,000 on both.
func TestCampaignRecipientsExactLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	agent := e.createAgent(nil)["id"].(string)
	path := "/v1/campaigns/" + e.newCampaign(agent, nil)["id"].(string) + "/recipients"
	var b strings.Builder
	b.WriteString("toNumber,name\n")
	for i := range 100000 {
		fmt.Fprintf(&b, "+1415%07d,n%d\n", i, i)
	}
	added(t, e.postCSV(path, b.String()), [3]int{100000, 0, 0})
	if l := e.must(http.StatusOK, "GET", path+"?page=4000&pageSize=25", nil); l.List(t)[24]["toNumber"] != "+14150099999" {
		t.Errorf("last page = %.300s", l.Body)
	}
}

func TestCampaignTransitions(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		agent := e.createAgent(nil)["id"].(string)
		id := e.newCampaign(agent, nil)["id"].(string)
		path := "/v1/campaigns/" + id
		conflict := func(method, p string, body any) {
			t.Helper()
			if r := e.do(method, p, body); r.Status != http.StatusConflict || r.ErrorCode(t) != "conflict" {
				t.Errorf("%s %s = %d %s, want 409", method, p, r.Status, r.Body)
			}
		}
		status := func(want string) map[string]any {
			t.Helper()
			c := e.must(http.StatusOK, "GET", path, nil).Data(t)
			if c["status"] != want {
				t.Errorf("status = %v, want %s", c["status"], want)
			}
			return c
		}

		// draft: no recipient, no start; nothing to pause or resume.
		conflict("POST", path+"/start", nil)
		conflict("POST", path+"/pause", nil)
		conflict("POST", path+"/resume", nil)
		status("draft")
		added(t, e.do("POST", path+"/recipients", map[string]any{"recipients": []any{
			map[string]any{"toNumber": "+14155550101"}, map[string]any{"toNumber": "+14155550102"},
		}}), [3]int{2, 0, 0})

		before := time.Now().Add(-time.Second)
		c := e.must(http.StatusOK, "POST", path+"/start", nil).Data(t)
		if at, err := time.Parse(time.RFC3339, fmt.Sprint(c["startedAt"])); c["status"] != "running" || err != nil || at.Before(before) {
			t.Errorf("started = %v %v", c["status"], c["startedAt"])
		}
		conflict("POST", path+"/start", nil)
		conflict("POST", path+"/resume", nil)
		conflict("PATCH", path, map[string]any{"name": "Changed"})
		conflict("DELETE", path, nil)
		// A running campaign takes more recipients.
		added(t, e.do("POST", path+"/recipients", map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550103"}}}), [3]int{1, 0, 0})

		if c := e.must(http.StatusOK, "POST", path+"/pause", nil).Data(t); c["status"] != "paused" {
			t.Errorf("paused = %v", c)
		}
		conflict("POST", path+"/pause", nil)
		conflict("POST", path+"/start", nil)
		conflict("DELETE", path, nil)
		if c := e.must(http.StatusOK, "PATCH", path, map[string]any{"callsPerMinute": 10}).Data(t); c["callsPerMinute"] != 10.0 || c["status"] != "paused" {
			t.Errorf("patched while paused = %v", c)
		}
		e.must(http.StatusOK, "POST", path+"/resume", nil)
		status("running")

		c = e.must(http.StatusOK, "POST", path+"/cancel", nil).Data(t)
		want := map[string]any{"total": 3.0, "pending": 0.0, "inProgress": 0.0, "completed": 0.0, "failed": 0.0, "suppressed": 0.0, "expired": 0.0, "canceled": 3.0}
		if c["status"] != "canceled" || c["completedAt"] == nil || !jsonEqual(c["counts"], want) {
			t.Errorf("canceled = %v", c)
		}
		for _, rc := range e.must(http.StatusOK, "GET", path+"/recipients", nil).List(t) {
			if rc["status"] != "canceled" {
				t.Errorf("recipient after cancel = %v", rc)
			}
		}
		for _, verb := range []string{"start", "pause", "resume", "cancel"} {
			conflict("POST", path+"/"+verb, nil)
		}
		conflict("PATCH", path, map[string]any{"name": "Changed"})
		conflict("POST", path+"/recipients", map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550104"}}})
		if r := e.postCSV(path+"/recipients", "toNumber\n+14155550104\n"); r.Status != http.StatusConflict {
			t.Errorf("CSV to a canceled campaign = %d", r.Status)
		}
		status("canceled")
		e.must(http.StatusNoContent, "DELETE", path, nil)

		// A draft cancels too, and its recipients with it.
		d := e.newCampaign(agent, nil)["id"].(string)
		added(t, e.do("POST", "/v1/campaigns/"+d+"/recipients", map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550101"}}}), [3]int{1, 0, 0})
		if c := e.must(http.StatusOK, "POST", "/v1/campaigns/"+d+"/cancel", nil).Data(t); c["status"] != "canceled" || c["startedAt"] != nil || c["counts"].(map[string]any)["canceled"] != 1.0 {
			t.Errorf("canceled draft = %v", c)
		}
		for _, verb := range []string{"start", "pause", "resume", "cancel"} {
			e.must(http.StatusNotFound, "POST", "/v1/campaigns/0190d4c3-0000-7000-8000-000000000000/"+verb, nil)
		}
		e.invalid("validation_failed", "POST", "/v1/campaigns/"+d+"/start?now=1", nil, "now")
	})
}

func TestSuppressions(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		s := e.create("/v1/suppressions", map[string]any{"number": "+14155550101", "reason": "asked not to be called"})
		if s["number"] != "+14155550101" || s["reason"] != "asked not to be called" || len(s) != 4 {
			t.Errorf("suppression = %v", s)
		}
		again := e.must(http.StatusOK, "POST", "/v1/suppressions", map[string]any{"number": "+14155550101", "reason": "other"}).Data(t)
		if !jsonEqual(again, s) {
			t.Errorf("the same number again = %v, want %v", again, s)
		}
		bare := e.create("/v1/suppressions", map[string]any{"number": "+13125550199"})
		if bare["reason"] != nil {
			t.Errorf("reason = %v", bare["reason"])
		}
		e.invalid("validation_failed", "POST", "/v1/suppressions", map[string]any{}, "number")
		e.invalid("validation_failed", "POST", "/v1/suppressions", map[string]any{"number": "4155550101", "reason": str(257)}, "number", "reason")
		e.invalid("invalid_json", "POST", "/v1/suppressions", map[string]any{"number": "+14155550102", "why": "x"}, "why")
		e.create("/v1/suppressions", map[string]any{"number": "+14155550102", "reason": str(256)})

		l := e.must(http.StatusOK, "GET", "/v1/suppressions", nil)
		if list := l.List(t); len(list) != 3 || list[0]["number"] != "+14155550102" || l.JSON(t)["total"] != 3.0 {
			t.Errorf("list = %s", l.Body)
		}
		for q, want := range map[string]int{"4155": 2, "%2B1312": 1, "+1415555010": 2, "5550199": 1, "9999": 0, "%25": 0, "_": 0} {
			if list := e.must(http.StatusOK, "GET", "/v1/suppressions?q="+q, nil).List(t); len(list) != want {
				t.Errorf("q=%s: %d entries, want %d", q, len(list), want)
			}
		}
		e.invalid("validation_failed", "GET", "/v1/suppressions?q="+str(65)+"&number=1", nil, "q", "number")

		// A suppressed number cannot be called; nothing is stored.
		agent := e.createAgent(nil)["id"].(string)
		call := map[string]any{"agentId": agent, "toNumber": "+14155550101", "fromNumber": "+14155550100"}
		if r := e.do("POST", "/v1/calls", call); r.Status != http.StatusConflict || r.ErrorCode(t) != "conflict" {
			t.Errorf("call to a suppressed number = %d %s", r.Status, r.Body)
		}
		if r := e.must(http.StatusOK, "GET", "/v1/calls", nil); r.JSON(t)["total"] != 0.0 {
			t.Errorf("refused call stored: %s", r.Body)
		}
		// Validation comes first: a broken body is 400 whatever the number.
		e.invalid("validation_failed", "POST", "/v1/calls", map[string]any{"toNumber": "+14155550101", "fromNumber": "+14155550100"}, "agentId")
		// Another organization's list is not acme's.
		if r := e.request("POST", "/v1/calls", call, e.otherKey); r.Status != http.StatusBadRequest {
			t.Errorf("globex call = %d %s", r.Status, r.Body) // acme's agent: 400, never 409
		}

		e.must(http.StatusNoContent, "DELETE", "/v1/suppressions/"+s["id"].(string), nil)
		e.must(http.StatusNotFound, "DELETE", "/v1/suppressions/"+s["id"].(string), nil)
		e.must(http.StatusNotFound, "DELETE", "/v1/suppressions/nope", nil)
		placed := e.create("/v1/calls", call)
		e.must(http.StatusOK, "POST", "/v1/calls/"+placed["id"].(string)+"/cancel", nil)
		if list := e.must(http.StatusOK, "GET", "/v1/suppressions", nil).List(t); len(list) != 2 {
			t.Errorf("after delete: %v", list)
		}
	})
}

func TestCallsByCampaign(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		agent := e.createAgent(nil)["id"].(string)
		campaign := e.newCampaign(agent, nil)["id"].(string)
		placed := e.create("/v1/calls", map[string]any{"agentId": agent, "toNumber": "+14155550101", "fromNumber": "+14155550100"})
		if _, ok := placed["campaignId"]; !ok || placed["campaignId"] != nil {
			t.Errorf("campaignId of an API call = %v (present %v)", placed["campaignId"], ok)
		}
		e.must(http.StatusOK, "POST", "/v1/calls/"+placed["id"].(string)+"/cancel", nil)
		dialed := e.storeCall(agent, &campaign)
		list := e.must(http.StatusOK, "GET", "/v1/calls?campaignId="+campaign, nil).List(t)
		if len(list) != 1 || list[0]["id"] != dialed || list[0]["campaignId"] != campaign {
			t.Errorf("calls of the campaign = %v", list)
		}
		if got := e.must(http.StatusOK, "GET", "/v1/calls/"+dialed, nil).Data(t)["campaignId"]; got != campaign {
			t.Errorf("GET call campaignId = %v", got)
		}
		if list := e.must(http.StatusOK, "GET", "/v1/calls", nil).List(t); len(list) != 2 {
			t.Errorf("all calls = %d", len(list))
		}
		if list := e.request("GET", "/v1/calls?campaignId="+campaign, nil, e.otherKey).List(t); len(list) != 0 {
			t.Errorf("globex sees acme's campaign calls: %v", list)
		}
		e.invalid("validation_failed", "GET", "/v1/calls?campaignId=not-a-uuid", nil, "campaignId")
		// Deleting the campaign leaves its calls, and their campaignId.
		e.must(http.StatusNoContent, "DELETE", "/v1/campaigns/"+campaign, nil)
		if list := e.must(http.StatusOK, "GET", "/v1/calls?campaignId="+campaign, nil).List(t); len(list) != 1 || list[0]["campaignId"] != campaign {
			t.Errorf("calls after the campaign's deletion = %v", list)
		}
	})
}

// storeCall stores an ended outbound call of agent as a campaign's
// dispatcher would, and returns its id.
func (e *env) storeCall(agent string, campaign *string) string {
	e.t.Helper()
	now := model.Now()
	c := model.Call{
		ID: model.NewID(), OrgID: orgOf(e.t.(*testing.T), e, e.key), AgentID: agent, AgentName: "Agent", Direction: model.Outbound,
		Status: model.CallCompleted, FromNumber: "+14155550100", ToNumber: "+14155550177", CampaignID: campaign,
		Variables: map[string]any{}, Transcript: []map[string]any{}, Metrics: map[string]any{},
		InitiatedAt: &now, StartedAt: &now, EndedAt: &now, CreatedAt: now, UpdatedAt: now,
	}
	if err := e.store.Update(context.Background(), func(tx store.Tx) error { return tx.CreateCall(context.Background(), &c) }); err != nil {
		e.t.Fatal(err)
	}
	return c.ID
}

func TestOrganizationInboundReserve(t *testing.T) {
	e := newEnv(t)
	if o := e.must(http.StatusOK, "GET", "/v1/organization", nil).Data(t); o["inboundReservePercent"] != 20.0 {
		t.Errorf("default inboundReservePercent = %v", o["inboundReservePercent"])
	}
	for _, v := range []int{0, 90, 35} {
		if o := e.must(http.StatusOK, "PATCH", "/v1/organization", map[string]any{"inboundReservePercent": v}).Data(t); o["inboundReservePercent"] != float64(v) {
			t.Errorf("PATCH %d = %v", v, o["inboundReservePercent"])
		}
	}
	for _, v := range []any{-1, 91, nil} {
		e.invalid("validation_failed", "PATCH", "/v1/organization", map[string]any{"inboundReservePercent": v}, "inboundReservePercent")
	}
	e.invalid("invalid_json", "PATCH", "/v1/organization", map[string]any{"inboundReservePercent": 2.5}, "inboundReservePercent")
	if o := e.must(http.StatusOK, "GET", "/v1/organization", nil).Data(t); o["inboundReservePercent"] != 35.0 {
		t.Errorf("inboundReservePercent = %v after refused patches", o["inboundReservePercent"])
	}
	if o := e.request("GET", "/v1/organization", nil, e.otherKey).Data(t); o["inboundReservePercent"] != 20.0 {
		t.Errorf("globex's inboundReservePercent = %v", o["inboundReservePercent"])
	}
}

// The shapes the campaign package presents, every optional field set and
// none, match the document; so does the campaign_completed body.
func TestContractCampaignShapes(t *testing.T) {
	c := loadContract(t)
	visit := func(schema string, v any) error {
		t.Helper()
		ref := c.doc.Components.Schemas[schema]
		if ref == nil || ref.Value == nil {
			t.Fatalf("openapi.yaml has no components/schemas/%s", schema)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var generic any
		if err := json.Unmarshal(b, &generic); err != nil {
			t.Fatal(err)
		}
		return ref.Value.VisitJSON(generic, append(formatOptions(), openapi3.EnableJSONSchema2020(), openapi3.MultiErrors())...)
	}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	s := func(v string) *string { return &v }
	n := 5
	bare := campaign.New(model.NewID(), t0)
	bare.AgentID, bare.Name, bare.Config.FromNumbers = model.NewID(), "Bare", []string{"+14155550100"}
	full := bare
	full.Name, full.Description, full.Status = "Full", s("d"), model.CampaignCompleted
	full.StartAt, full.EndAt, full.StartedAt, full.CompletedAt = &t0, &t1, &t0, &t1
	full.Config.MaxConcurrency, full.Config.WebhookURL = &n, s("https://example.com/done")
	full.Config.CallingWindows = []model.CallingWindow{{Days: []string{"mon", "sun"}, Start: "09:00", End: "24:00"}}
	full.Config.Retry = model.CampaignRetry{MaxAttempts: 10, DelaySeconds: 604800, RetryOn: []string{"NO_ANSWER", "BUSY", "VOICEMAIL", "FAILED"}}
	full.Config.Variables = map[string]any{"k": []any{1.5, map[string]any{"x": nil}}}
	full.Counts = model.CampaignCounts{Total: 7, Pending: 0, InProgress: 0, Completed: 1, Failed: 2, Suppressed: 1, Expired: 2, Canceled: 1}
	for name, m := range map[string]model.Campaign{"bare": bare, "full": full} {
		if err := visit("Campaign", campaign.NewRecord(m)); err != nil {
			t.Errorf("%s campaign does not match Campaign: %v", name, err)
		}
		body, err := campaign.CompletedBody(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := visit("CampaignCompletedPayload", json.RawMessage(body)); err != nil {
			t.Errorf("%s campaign_completed body does not match CampaignCompletedPayload: %v\n%s", name, err, body)
		}
	}
	if item := c.doc.Webhooks["campaignCompleted"]; item == nil || item.Post == nil {
		t.Error("openapi.yaml has no webhooks/campaignCompleted post operation")
	}
	cause := "NO_ANSWER"
	for name, r := range map[string]model.CampaignRecipient{
		"new":   {ID: model.NewID(), ToNumber: "+14155550101", Status: model.RecipientPending, UpdatedAt: t0},
		"tried": {ID: model.NewID(), ToNumber: "+14155550101", Status: model.RecipientPending, Timezone: s("America/Chicago"), Attempts: 2, LastHangupCause: &cause, NextAttemptAt: &t1, CallIDs: []string{model.NewID(), model.NewID()}, Variables: map[string]any{"a": "b"}, UpdatedAt: t0},
	} {
		if err := visit("CampaignRecipient", campaign.NewRecipientRecord(r)); err != nil {
			t.Errorf("%s recipient does not match CampaignRecipient: %v", name, err)
		}
	}
	// The document is no looser than the shapes: a count missing, or a
	// status of calls, is caught.
	drifted := asMap(t, campaign.NewRecord(full))
	delete(drifted["counts"].(map[string]any), "expired")
	if visit("Campaign", drifted) == nil {
		t.Error("Campaign accepts counts without expired")
	}
	drifted = asMap(t, campaign.NewRecord(full))
	drifted["status"] = "COMPLETED"
	if visit("Campaign", drifted) == nil {
		t.Error("Campaign accepts status COMPLETED")
	}
}

// Concurrent writers to one campaign or one number are decided one after
// the other: one cancel wins, overlapping uploads store each number once,
// and racing suppressions of a number make one entry.
func TestCampaignConcurrentWriters(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		const n = 8
		agent := e.createAgent(nil)["id"].(string)
		id := e.newCampaign(agent, nil)["id"].(string)
		path := "/v1/campaigns/" + id
		var wg sync.WaitGroup
		results := make([]response, n)
		for i := range n {
			wg.Go(func() {
				recipients := make([]any, 50)
				for j := range recipients {
					recipients[j] = map[string]any{"toNumber": fmt.Sprintf("+1415555%04d", i*10+j)}
				}
				results[i] = e.do("POST", path+"/recipients", map[string]any{"recipients": recipients})
			})
		}
		wg.Wait()
		var sumAdded, sumDup int
		for _, r := range results {
			if r.Status != http.StatusCreated {
				t.Fatalf("upload = %d %s", r.Status, r.Body)
			}
			d := r.Data(t)
			sumAdded += int(d["added"].(float64))
			sumDup += int(d["duplicates"].(float64))
		}
		distinct := (n-1)*10 + 50
		if sumAdded != distinct || sumDup != n*50-distinct || e.total(id) != distinct {
			t.Errorf("added %d, duplicates %d, total %d; want %d, %d, %d", sumAdded, sumDup, e.total(id), distinct, n*50-distinct, distinct)
		}

		e.must(http.StatusOK, "POST", path+"/start", nil)
		for i := range n {
			wg.Go(func() { results[i] = e.do("POST", path+"/cancel", nil) })
		}
		wg.Wait()
		won := 0
		for _, r := range results {
			switch r.Status {
			case http.StatusOK:
				won++
			case http.StatusConflict:
			default:
				t.Errorf("cancel = %d %s", r.Status, r.Body)
			}
		}
		if c := e.counts(id); won != 1 || c["canceled"] != float64(distinct) || c["pending"] != 0.0 {
			t.Errorf("%d cancels won; counts %v", won, c)
		}

		for i := range n {
			wg.Go(func() { results[i] = e.do("POST", "/v1/suppressions", map[string]any{"number": "+14155550199"}) })
		}
		wg.Wait()
		created, ids := 0, map[any]bool{}
		for _, r := range results {
			if r.Status == http.StatusCreated {
				created++
			} else if r.Status != http.StatusOK {
				t.Errorf("suppression = %d %s", r.Status, r.Body)
				continue
			}
			ids[r.Data(t)["id"]] = true
		}
		if created != 1 || len(ids) != 1 {
			t.Errorf("%d created, %d ids", created, len(ids))
		}
	})
}

// The dispatcher is woken when there may be work: a start, a resume,
// recipients added to a campaign; not by reads, edits or a pause.
func TestCampaignWakesTheDispatcher(t *testing.T) {
	e := newEnv(t)
	var wakes atomic.Int32
	e.server.Campaigns.Wake = func() { wakes.Add(1) }
	expect := func(want int32, what string) {
		t.Helper()
		if got := wakes.Swap(0); got != want {
			t.Errorf("%s woke the dispatcher %d times, want %d", what, got, want)
		}
	}
	agent := e.createAgent(nil)["id"].(string)
	id := e.newCampaign(agent, nil)["id"].(string)
	path := "/v1/campaigns/" + id
	e.must(http.StatusOK, "PATCH", path, map[string]any{"name": "x"})
	expect(0, "create and patch")
	e.must(http.StatusCreated, "POST", path+"/recipients", map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550101"}}})
	expect(1, "an upload")
	e.must(http.StatusCreated, "POST", path+"/recipients", map[string]any{"recipients": []any{map[string]any{"toNumber": "+14155550101"}}})
	expect(0, "an upload of duplicates only")
	e.must(http.StatusOK, "POST", path+"/start", nil)
	expect(1, "start")
	e.must(http.StatusOK, "POST", path+"/pause", nil)
	e.must(http.StatusOK, "GET", path, nil)
	expect(0, "pause and get")
	e.must(http.StatusOK, "POST", path+"/resume", nil)
	expect(1, "resume")
	e.must(http.StatusConflict, "POST", path+"/resume", nil)
	expect(0, "a refused resume")
}
