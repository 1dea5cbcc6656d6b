package twilio

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

const fuzzToken = "0123456789abcdef0123456789abcdef"

func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		sent   Sent
		kind   error
		code   int
	}{
		{201, `{"sid":"SM1","status":"queued","error_code":null,"error_message":null}`, Sent{SID: "SM1", Status: "queued"}, nil, 0},
		{200, `{"sid":"SM1","status":"failed","error_code":30007,"error_message":"Carrier violation"}`, Sent{SID: "SM1", Status: "failed", ErrorCode: 30007, ErrorMessage: "Carrier violation"}, nil, 0},
		{201, `{"sid":"SM1","status":"failed","error_code":"30008"}`, Sent{SID: "SM1", Status: "failed", ErrorCode: 30008}, nil, 0},
		{201, `{"sid":"","status":"queued"}`, Sent{}, ErrUnavailable, 0},
		{201, `[]`, Sent{}, ErrUnavailable, 0},
		{201, ``, Sent{}, ErrUnavailable, 0},
		{400, `{"code": 21211, "message": "Invalid 'To' Phone Number: +1", "more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}`, Sent{}, ErrRejected, 21211},
		{400, `{"code": "21617", "message": "too long"}`, Sent{}, ErrRejected, 21617},
		{400, `not json`, Sent{}, ErrRejected, 0},
		{401, `{"code":20003,"message":"Authenticate","more_info":"https://www.twilio.com/docs/errors/20003","status":401}`, Sent{}, ErrUnavailable, 20003},
		{429, `{"code":20429,"message":"Too Many Requests"}`, Sent{}, ErrUnavailable, 20429},
		{500, ``, Sent{}, ErrUnavailable, 0},
		{302, `{"sid":"SM1"}`, Sent{}, ErrUnavailable, 0},
	} {
		sent, err := parseReply(tc.status, []byte(tc.body), fuzzToken)
		if sent != tc.sent || (tc.kind == nil) != (err == nil) || (tc.kind != nil && !errors.Is(err, tc.kind)) {
			t.Errorf("%d %s: %+v, %v", tc.status, tc.body, sent, err)
			continue
		}
		if e, ok := errors.AsType[*APIError](err); ok && e.Code != tc.code {
			t.Errorf("%d %s: code %d, want %d", tc.status, tc.body, e.Code, tc.code)
		}
	}
}

func TestParseErrorMessage(t *testing.T) {
	err := parseError(400, []byte(`{"code":21211,"message":"The 'To' number\n  4155550123 is not valid `+fuzzToken+`","more_info":"https://x/?t=`+fuzzToken+`"}`), fuzzToken)
	if err.Message != "The 'To' number 4155550123 is not valid [redacted]" || strings.Contains(err.MoreInfo, fuzzToken) {
		t.Errorf("%+v", err)
	}
	long := parseError(503, []byte(strings.Repeat("x", 5000)), fuzzToken)
	if len(long.Message) > 203 {
		t.Errorf("%d bytes of message", len(long.Message))
	}
	// The token at the 200-byte cut: replaced before the cut, not half left.
	cut := parseError(400, []byte(`{"code":21211,"message":"`+strings.Repeat("x", 190)+" "+fuzzToken+`"}`), fuzzToken)
	if strings.Contains(cut.Message, fuzzToken[:8]) {
		t.Errorf("part of the token at the cut: %q", cut.Message)
	}
}

// An auth token too short to be told from the carrier's words ("t" is in
// "Authenticate"): the carrier's text is not kept at all, and the error
// names the status and the code.
func TestParseErrorShortToken(t *testing.T) {
	e := parseError(401, []byte(`{"code":20003,"message":"Authenticate with token t","more_info":"https://www.twilio.com/docs/errors/20003"}`), "t")
	if e.Message != "" || e.MoreInfo != "" || e.Error() != "twilio: unavailable: 401 Unauthorized: credentials refused: error 20003" {
		t.Errorf("%+v: %v", e, e)
	}
	e = parseError(502, []byte("<html>Bad Gateway</html>"), "t")
	if e.Error() != "twilio: unavailable: 502 Bad Gateway" {
		t.Errorf("%v", e)
	}
	sent, err := parseReply(201, []byte(`{"sid":"SM1","status":"failed","error_code":30007,"error_message":"Carrier violation"}`), "t")
	if err != nil || sent.ErrorMessage != "" || sent.ErrorCode != 30007 {
		t.Errorf("%+v, %v", sent, err)
	}
	if _, err := parseReply(201, []byte(`<html>ok t</html>`), "t"); err == nil || err.Error() != "twilio: unavailable: the answer is not JSON" {
		t.Errorf("%v", err)
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		`{"sid":"SM1","status":"queued","error_code":null,"error_message":null}`,
		`{"sid":"SM1","status":"failed","error_code":"30007","error_message":"x"}`,
		`{"code":21211,"message":"Invalid 'To' Phone Number","more_info":"https://www.twilio.com/docs/errors/21211","status":400}`,
		`{"code":"20003","message":"` + fuzzToken + `"}`,
		`{"sid":1}`, `{"error_code":1e99,"sid":"x"}`, `null`, ``, "\xff" + fuzzToken,
	} {
		for _, status := range []int{200, 201, 400, 401, 404, 429, 500} {
			f.Add(status, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		sent, err := parseReply(status, body, fuzzToken)
		ok := status >= 200 && status <= 299
		if err == nil {
			if !ok || sent.SID == "" {
				t.Fatalf("%d %q: no error, %+v", status, body, sent)
			}
			if strings.Contains(sent.ErrorMessage, fuzzToken) {
				t.Fatalf("token in ErrorMessage %q", sent.ErrorMessage)
			}
			return
		}
		if sent != (Sent{}) {
			t.Fatalf("%+v with error %v", sent, err)
		}
		if errors.Is(err, ErrRejected) == errors.Is(err, ErrUnavailable) {
			t.Fatalf("%d %q: not exactly one kind: %v", status, body, err)
		}
		if errors.Is(err, ErrRejected) && status != 400 && status != 422 {
			t.Fatalf("%d rejected: %v", status, err)
		}
		text := err.Error()
		if strings.Contains(text, fuzzToken) || !utf8.ValidString(text) || strings.ContainsAny(text, "\n\r\t") || len(text) > 400 {
			t.Fatalf("error text %q", text)
		}
		// With a short token nothing of the body is kept.
		if _, err := parseReply(status, body, "t"); err != nil {
			if e, isAPI := errors.AsType[*APIError](err); isAPI && (e.Message != "" || e.MoreInfo != "") {
				t.Fatalf("short token: %+v", e)
			}
		}
		if e, isAPI := errors.AsType[*APIError](err); isAPI && (ok || strings.Contains(e.MoreInfo, fuzzToken)) {
			t.Fatalf("%d: %+v", status, e)
		}
	})
}
