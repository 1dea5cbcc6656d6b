package twilio_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/sms/twilio"
	"github.com/parley-voice/parley/internal/sms/twilio/twiliotest"
)

// backstop bounds every Send in these tests: a call that hangs ends with
// context.DeadlineExceeded, which no test accepts.
const backstop = 10 * time.Second

const (
	sid   = "AC0123456789abcdef0123456789abcdef"
	token = "f00dfacef00dfacef00dfacef00dface"
	from  = "+14155550100"
	to    = "+14155550123"
)

// setup starts a fake answering with reply and a Client for it with a
// short timeout; change applies to the config before New.
func setup(t *testing.T, reply func(twiliotest.Message) twiliotest.Reply, change ...func(*twilio.Config)) (*twilio.Client, *twiliotest.Server) {
	t.Helper()
	server := twiliotest.New(t, twiliotest.Options{AccountSID: sid, AuthToken: token, Reply: reply})
	cfg := twilio.Config{
		BaseURL:    server.URL,
		AccountSID: sid,
		AuthToken:  token,
		Timeout:    300 * time.Millisecond,
		HTTPClient: testHTTPClient(t),
	}
	for _, f := range change {
		f(&cfg)
	}
	c, err := twilio.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, server
}

func testHTTPClient(t *testing.T) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func answer(r twiliotest.Reply) func(twiliotest.Message) twiliotest.Reply {
	return func(twiliotest.Message) twiliotest.Reply { return r }
}

func send(t *testing.T, c *twilio.Client, s twilio.Send) (twilio.Sent, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	sent, err := c.Send(ctx, s)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send still running after %s", backstop)
	}
	if err != nil && strings.Contains(err.Error(), token) {
		t.Errorf("the token is in the error: %v", err)
	}
	return sent, err
}

func TestSendRequest(t *testing.T) {
	c, server := setup(t, nil)
	body := "Your table for 2 is booked: 7 pm. Reply STOP to opt out. ✓ & = + %"
	sent, err := send(t, c, twilio.Send{To: to, From: from, Body: body, StatusCallback: "https://parley.example/sms/status?c=mc1"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := server.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d requests", len(msgs))
	}
	m := msgs[0]
	if m.Method != http.MethodPost || m.Path != "/2010-04-01/Accounts/"+sid+"/Messages.json" {
		t.Errorf("request %s %s", m.Method, m.Path)
	}
	if !m.BasicAuth || m.User != sid || m.Password != token {
		t.Errorf("basic auth %v %q %q", m.BasicAuth, m.User, m.Password)
	}
	if ct := m.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type %q", ct)
	}
	want := map[string]string{"To": to, "From": from, "Body": body, "StatusCallback": "https://parley.example/sms/status?c=mc1"}
	if len(m.Form) != len(want) {
		t.Errorf("form %v", m.Form)
	}
	for k, v := range want {
		if got := m.Form[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if sent.SID != m.SID || !strings.HasPrefix(sent.SID, "SM") || len(sent.SID) != 34 {
		t.Errorf("sid %q, server %q", sent.SID, m.SID)
	}
	if sent.Status != "queued" || sent.ErrorCode != 0 || sent.ErrorMessage != "" {
		t.Errorf("sent %+v", sent)
	}
}

func TestSendMessagingService(t *testing.T) {
	c, server := setup(t, answer(twiliotest.Reply{MessageStatus: "accepted"}))
	mg := twiliotest.NewSID("MG")
	sent, err := send(t, c, twilio.Send{To: to, MessagingServiceSID: mg, Body: "hi"})
	if err != nil || sent.Status != "accepted" {
		t.Fatalf("%+v, %v", sent, err)
	}
	f := server.Messages()[0].Form
	if f.Get("MessagingServiceSid") != mg || f.Has("From") || f.Has("StatusCallback") {
		t.Errorf("form %v", f)
	}
}

func TestSentErrorFields(t *testing.T) {
	c, _ := setup(t, answer(twiliotest.Reply{MessageStatus: "failed", ErrorCode: 30007, ErrorMessage: "Carrier violation " + token}))
	sent, err := send(t, c, twilio.Send{To: to, From: from, Body: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if sent.Status != "failed" || sent.ErrorCode != 30007 || sent.ErrorMessage != "Carrier violation [redacted]" {
		t.Errorf("sent %+v", sent)
	}
}

func TestSendInvalidWithoutRequest(t *testing.T) {
	c, server := setup(t, nil)
	for _, s := range []twilio.Send{
		{From: from, Body: "hi"},
		{To: to, From: from},
		{To: to, Body: "hi"},
		{To: to, From: from, MessagingServiceSID: "MG0123456789abcdef0123456789abcdef", Body: "hi"},
	} {
		if _, err := send(t, c, s); !errors.Is(err, twilio.ErrRejected) {
			t.Errorf("%+v: %v", s, err)
		}
	}
	if n := len(server.Messages()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

func TestSendRejectedByServer(t *testing.T) {
	c, _ := setup(t, nil)
	for _, tc := range []struct {
		send twilio.Send
		code int
	}{
		{twilio.Send{To: "4155550123", From: from, Body: "hi"}, 21211},
		{twilio.Send{To: to, From: "nobody", Body: "hi"}, 21212},
		{twilio.Send{To: to, From: from, Body: strings.Repeat("é", 1601)}, 21617},
		{twilio.Send{To: to, MessagingServiceSID: "MGnope", Body: "hi"}, 21701},
		{twilio.Send{To: to, From: from, Body: "hi", StatusCallback: "ftp://x"}, 21609},
	} {
		_, err := send(t, c, tc.send)
		apiErr, ok := errors.AsType[*twilio.APIError](err)
		if !errors.Is(err, twilio.ErrRejected) || !ok || apiErr.Code != tc.code || apiErr.Status != 400 || apiErr.Message == "" {
			t.Errorf("%+v: %v", tc.send, err)
			continue
		}
		if !strings.Contains(err.Error(), apiErr.Message) || apiErr.MoreInfo == "" {
			t.Errorf("%v (more info %q)", err, apiErr.MoreInfo)
		}
	}
	// The text of the 21211 error, as Twilio's message has it.
	_, err := send(t, c, twilio.Send{To: "4155550123", From: from, Body: "hi"})
	if want := "twilio: message rejected: 400 Bad Request: error 21211: Invalid 'To' Phone Number: 4155550123"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestSendCredentialsRefused(t *testing.T) {
	for name, change := range map[string]func(*twilio.Config){
		"token": func(c *twilio.Config) { c.AuthToken = token[:31] + "0" },
		"sid":   func(c *twilio.Config) { c.AccountSID = "AC0123456789abcdef0123456789abcde0" },
	} {
		c, _ := setup(t, nil, change)
		_, err := send(t, c, twilio.Send{To: to, From: from, Body: "hi"})
		apiErr, ok := errors.AsType[*twilio.APIError](err)
		if !errors.Is(err, twilio.ErrUnavailable) || !ok || apiErr.Status != 401 || apiErr.Code != 20003 ||
			!strings.Contains(err.Error(), "credentials refused") {
			t.Errorf("%s: %v", name, err)
		}
		if strings.Contains(err.Error(), token[:31]) {
			t.Errorf("%s: the token is in the error: %v", name, err)
		}
	}
}

func TestSendStatusKinds(t *testing.T) {
	for _, tc := range []struct {
		status int
		kind   error
	}{
		{400, twilio.ErrRejected},
		{422, twilio.ErrRejected},
		{401, twilio.ErrUnavailable},
		{403, twilio.ErrUnavailable},
		{404, twilio.ErrUnavailable},
		{429, twilio.ErrUnavailable},
		{500, twilio.ErrUnavailable},
		{503, twilio.ErrUnavailable},
	} {
		// The server's message quotes the token: it must not reach the error.
		c, _ := setup(t, answer(twiliotest.Reply{Status: tc.status, Code: 20000 + tc.status, Message: "trouble with " + token}))
		_, err := send(t, c, twilio.Send{To: to, From: from, Body: "hi"})
		apiErr, ok := errors.AsType[*twilio.APIError](err)
		if !errors.Is(err, tc.kind) || !ok || apiErr.Status != tc.status || apiErr.Code != 20000+tc.status {
			t.Errorf("%d: %v", tc.status, err)
			continue
		}
		if other := map[error]error{twilio.ErrRejected: twilio.ErrUnavailable, twilio.ErrUnavailable: twilio.ErrRejected}[tc.kind]; errors.Is(err, other) {
			t.Errorf("%d: both kinds: %v", tc.status, err)
		}
		if !strings.Contains(err.Error(), "trouble with [redacted]") {
			t.Errorf("%d: %v", tc.status, err)
		}
		if (tc.status == 401 || tc.status == 403) != strings.Contains(err.Error(), "credentials refused") {
			t.Errorf("%d: %v", tc.status, err)
		}
	}
}

func TestSendTimeout(t *testing.T) {
	c, _ := setup(t, answer(twiliotest.Reply{Hang: true}))
	start := time.Now()
	_, err := send(t, c, twilio.Send{To: to, From: from, Body: "hi"})
	if !errors.Is(err, twilio.ErrUnavailable) || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Errorf("hang: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}

	c, _ = setup(t, answer(twiliotest.Reply{Delay: 100 * time.Millisecond}))
	if _, err := send(t, c, twilio.Send{To: to, From: from, Body: "hi"}); err != nil {
		t.Errorf("delay within the timeout: %v", err)
	}
}

func TestSendCanceled(t *testing.T) {
	started := make(chan struct{}, 1)
	c, _ := setup(t, func(twiliotest.Message) twiliotest.Reply {
		started <- struct{}{}
		return twiliotest.Reply{Hang: true}
	}, func(c *twilio.Config) { c.Timeout = backstop })
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := c.Send(ctx, twilio.Send{To: to, From: from, Body: "hi"})
	if !errors.Is(err, context.Canceled) || errors.Is(err, twilio.ErrUnavailable) || errors.Is(err, twilio.ErrRejected) {
		t.Errorf("canceled: %v", err)
	}
	// Canceled before: no request.
	c2, server := setup(t, nil)
	done, cancel2 := context.WithCancel(t.Context())
	cancel2()
	if _, err := c2.Send(done, twilio.Send{To: to, From: from, Body: "hi"}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled before: %v", err)
	}
	if len(server.Messages()) != 0 {
		t.Error("a request after cancel")
	}
}

func TestSendNetwork(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	l.Close()
	c, err := twilio.New(twilio.Config{BaseURL: base, AccountSID: sid, AuthToken: token, HTTPClient: testHTTPClient(t), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = send(t, c, twilio.Send{To: to, From: from, Body: "hi"})
	if !errors.Is(err, twilio.ErrUnavailable) || strings.Contains(err.Error(), base) {
		t.Errorf("no server: %v", err)
	}
}

func TestSendBadAnswer(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"not JSON": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(201)
			_, _ = w.Write([]byte("<html>ok " + token))
		},
		"no sid": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(201)
			_, _ = w.Write([]byte(`{"status":"queued"}`))
		},
		"HTML 502": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(502)
			_, _ = w.Write([]byte("<h1>Bad Gateway</h1>"))
		},
	} {
		srv := newRaw(t, h)
		c, err := twilio.New(twilio.Config{BaseURL: srv, AccountSID: sid, AuthToken: token, HTTPClient: testHTTPClient(t)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := send(t, c, twilio.Send{To: to, From: from, Body: "hi"}); !errors.Is(err, twilio.ErrUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNew(t *testing.T) {
	const secret = "s3cr3t-t0ken-value"
	for name, cfg := range map[string]twilio.Config{
		"no sid":        {AuthToken: secret},
		"blank sid":     {AccountSID: " ", AuthToken: secret},
		"no token":      {AccountSID: sid},
		"ftp":           {BaseURL: "ftp://api.twilio.com", AccountSID: sid, AuthToken: secret},
		"relative":      {BaseURL: "api.twilio.com", AccountSID: sid, AuthToken: secret},
		"userinfo":      {BaseURL: "https://u:" + secret + "@api.twilio.com", AccountSID: sid, AuthToken: secret},
		"query":         {BaseURL: "https://api.twilio.com/?x=1", AccountSID: sid, AuthToken: secret},
		"space":         {BaseURL: " https://api.twilio.com", AccountSID: sid, AuthToken: secret},
		"no host":       {BaseURL: "https://", AccountSID: sid, AuthToken: secret},
		"bad character": {BaseURL: "https://api.twilio.com/\x7f", AccountSID: sid, AuthToken: secret},
	} {
		c, err := twilio.New(cfg)
		if err == nil || c != nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the token is in the error: %v", name, err)
		}
	}
	c, err := twilio.New(twilio.Config{AccountSID: sid, AuthToken: token})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestBaseURLPathPrefix(t *testing.T) {
	// A base URL with a path (a proxy) and a trailing slash.
	var path string
	srv := newRaw(t, func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.WriteHeader(201)
		_, _ = w.Write([]byte(`{"sid":"SM1","status":"queued","error_code":null}`))
	})
	c, err := twilio.New(twilio.Config{BaseURL: srv + "/twilio/", AccountSID: sid, AuthToken: token, HTTPClient: testHTTPClient(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send(t, c, twilio.Send{To: to, From: from, Body: "hi"}); err != nil {
		t.Fatal(err)
	}
	if want := "/twilio/2010-04-01/Accounts/" + sid + "/Messages.json"; path != want {
		t.Errorf("path %q, want %q", path, want)
	}
}
