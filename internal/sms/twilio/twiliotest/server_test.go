package twiliotest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/sms/twilio"
)

// hook is a loopback webhook receiver that records what it got and checks
// the signature as the inbound handler will.
type hook struct {
	url   string
	token string
	mu    sync.Mutex
	got   []url.Values
	valid []bool
	ua    []string
}

func newHook(t *testing.T, token, path string) *hook {
	h := &hook{token: token}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.ParseForm() != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		// The URL Twilio was given: this server's, with the path and query.
		full := h.url[:strings.Index(h.url, "//")+2] + r.Host + r.URL.RequestURI()
		h.mu.Lock()
		h.got = append(h.got, r.PostForm)
		h.valid = append(h.valid, twilio.ValidSignature(h.token, full, r.PostForm, r.Header.Get(twilio.SignatureHeader)))
		h.ua = append(h.ua, r.UserAgent())
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + path
	return h
}

func post(t *testing.T, s *Server, f url.Values, user, pass string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/2010-04-01/Accounts/"+user+"/Messages.json", strings.NewReader(f.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if pass != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %q is not JSON", resp.Status, body)
	}
	return resp, v
}

var smSID = regexp.MustCompile(`^SM[0-9a-f]{32}$`)

func TestCreate(t *testing.T) {
	s := New(t, Options{})
	f := url.Values{"To": {"+14155550123"}, "From": {"+14155550100"}, "Body": {"hello"}}
	resp, v := post(t, s, f, DefaultAccountSID, DefaultAuthToken)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("%s %v", resp.Status, v)
	}
	sid, _ := v["sid"].(string)
	if !smSID.MatchString(sid) || v["status"] != "queued" || v["error_code"] != nil || v["to"] != "+14155550123" ||
		v["from"] != "+14155550100" || v["body"] != "hello" || v["account_sid"] != DefaultAccountSID ||
		v["uri"] != "/2010-04-01/Accounts/"+DefaultAccountSID+"/Messages/"+sid+".json" {
		t.Errorf("resource %v", v)
	}
	m := s.Messages()
	if len(m) != 1 || m[0].SID != sid || m[0].Form.Get("Body") != "hello" || !m[0].BasicAuth ||
		m[0].User != DefaultAccountSID || m[0].Password != DefaultAuthToken {
		t.Errorf("recorded %+v", m)
	}
}

func TestCreateRefused(t *testing.T) {
	s := New(t, Options{AccountSID: "AC1", AuthToken: "tok"})
	ok := url.Values{"To": {"+14155550123"}, "From": {"+14155550100"}, "Body": {"hello"}}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for kk, vv := range ok {
			f[kk] = vv
		}
		if v == "" {
			f.Del(k)
		} else {
			f.Set(k, v)
		}
		return f
	}
	for name, tc := range map[string]struct {
		f            url.Values
		user, pass   string
		status, code int
	}{
		"no auth":       {ok, "AC1", "", 401, 20003},
		"wrong token":   {ok, "AC1", "tok2", 401, 20003},
		"other account": {ok, "AC2", "tok", 401, 20003},
		"no To":         {with("To", ""), "AC1", "tok", 400, 21604},
		"bad To":        {with("To", "555-0123"), "AC1", "tok", 400, 21211},
		"no From":       {with("From", ""), "AC1", "tok", 400, 21603},
		"bad From":      {with("From", "+0123"), "AC1", "tok", 400, 21212},
		"bad service":   {with("MessagingServiceSid", "MG12"), "AC1", "tok", 400, 21701},
		"no Body":       {with("Body", ""), "AC1", "tok", 400, 21602},
		"long Body":     {with("Body", strings.Repeat("x", 1601)), "AC1", "tok", 400, 21617},
		"bad callback":  {with("StatusCallback", "/relative"), "AC1", "tok", 400, 21609},
	} {
		resp, v := post(t, s, tc.f, tc.user, tc.pass)
		if resp.StatusCode != tc.status || v["code"] != float64(tc.code) || v["status"] != float64(tc.status) ||
			v["message"] == "" || !strings.HasSuffix(v["more_info"].(string), "/errors/"+itoa(tc.code)) {
			t.Errorf("%s: %s %v", name, resp.Status, v)
		}
	}
	if resp, v := post(t, s, with("Body", strings.Repeat("é", 1600)), "AC1", "tok"); resp.StatusCode != 201 {
		t.Errorf("1600 characters: %s %v", resp.Status, v)
	}
	for _, m := range s.Messages()[:11] {
		if m.SID != "" {
			t.Errorf("a refused request got sid %s", m.SID)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestInjectedError(t *testing.T) {
	s := New(t, Options{Reply: func(m Message) Reply {
		return Reply{Status: 429, Code: 20429, Message: "Too Many Requests"}
	}})
	resp, v := post(t, s, url.Values{"To": {"+14155550123"}, "From": {"+14155550100"}, "Body": {"x"}}, DefaultAccountSID, DefaultAuthToken)
	if resp.StatusCode != 429 || v["code"] != float64(20429) || v["message"] != "Too Many Requests" {
		t.Errorf("%s %v", resp.Status, v)
	}
}

func TestStatusCallbackSigned(t *testing.T) {
	s := New(t, Options{AuthToken: "cb-token"})
	h := newHook(t, "cb-token", "/sms/status?c=mc_1&x=a+b")
	c, err := twilio.New(twilio.Config{BaseURL: s.URL, AccountSID: s.AccountSID, AuthToken: s.AuthToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	sent, err := c.Send(t.Context(), twilio.Send{To: "+14155550123", From: "+14155550100", Body: "hi", StatusCallback: h.url})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StatusCallback(t.Context(), h.url, sent.SID, "delivered", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.StatusCallback(t.Context(), h.url, sent.SID, "undelivered", 30003); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.got) != 2 || !h.valid[0] || !h.valid[1] {
		t.Fatalf("got %v, valid %v", h.got, h.valid)
	}
	d, u := h.got[0], h.got[1]
	if d.Get("MessageSid") != sent.SID || d.Get("MessageStatus") != "delivered" || d.Has("ErrorCode") ||
		d.Get("AccountSid") != s.AccountSID || d.Get("To") != "+14155550123" || d.Get("From") != "+14155550100" {
		t.Errorf("delivered callback %v", d)
	}
	if u.Get("MessageStatus") != "undelivered" || u.Get("ErrorCode") != "30003" {
		t.Errorf("undelivered callback %v", u)
	}
	if h.ua[0] != "TwilioProxy/1.1" {
		t.Errorf("User-Agent %q", h.ua[0])
	}
}

func TestInboundSigned(t *testing.T) {
	s := New(t, Options{})
	h := newHook(t, DefaultAuthToken, "/sms/inbound/mc_1")
	if err := s.Inbound(t.Context(), h.url, "+14155550123", "+14155550100", "Can I move my booking to 8? & ünïcode"); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.got) != 1 || !h.valid[0] {
		t.Fatalf("got %v, valid %v", h.got, h.valid)
	}
	f := h.got[0]
	if !smSID.MatchString(f.Get("MessageSid")) || f.Get("From") != "+14155550123" || f.Get("To") != "+14155550100" ||
		f.Get("Body") != "Can I move my booking to 8? & ünïcode" || f.Get("AccountSid") != DefaultAccountSID || f.Get("NumMedia") != "0" {
		t.Errorf("inbound %v", f)
	}
	// With another token, or a tampered body, the signature fails.
	if twilio.ValidSignature("other", h.url, f, twilio.Sign(DefaultAuthToken, h.url, f)) {
		t.Error("valid with another token")
	}
	tampered := url.Values{}
	for k, v := range f {
		tampered[k] = v
	}
	tampered.Set("Body", "STOP")
	if twilio.ValidSignature(DefaultAuthToken, h.url, tampered, twilio.Sign(DefaultAuthToken, h.url, f)) {
		t.Error("valid with a tampered body")
	}
}

func TestWebhookRefused(t *testing.T) {
	s := New(t, Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	t.Cleanup(srv.Close)
	if err := s.Inbound(t.Context(), srv.URL, "+14155550123", "+14155550100", "x"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("403: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.StatusCallback(ctx, srv.URL, "SM1", "sent", 0); err == nil {
		t.Error("canceled: no error")
	}
}
