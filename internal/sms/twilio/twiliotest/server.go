package twiliotest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/sms/twilio"

	"github.com/parley-voice/parley/internal/fakeapi"
)

// Default credentials of a Server.
const (
	DefaultAccountSID = "AC00000000000000000000000000000001"
	DefaultAuthToken  = "0123456789abcdef0123456789abcdef"
)

// MaxBody is the API's limit on a message body, in characters.
const MaxBody = 1600

// Options configures a Server.
type Options struct {
	// AccountSID and AuthToken are the credentials the server accepts
	// ("": DefaultAccountSID, DefaultAuthToken). Webhooks are signed with
	// AuthToken.
	AccountSID, AuthToken string
	// Reply answers each valid message request (nil: 201 queued). It may
	// be called concurrently.
	Reply func(Message) Reply
}

// Reply is how the server answers one valid message request.
type Reply struct {
	// Status other than 0, 200 and 201 answers with Twilio's error body
	// {"code": Code, "message": Message, "more_info", "status": Status}.
	Status  int
	Code    int
	Message string
	// MessageStatus is the status of the message resource ("": queued);
	// ErrorCode and ErrorMessage its error fields (0, "": null).
	MessageStatus string
	ErrorCode     int
	ErrorMessage  string
	// Delay is waited before answering.
	Delay time.Duration
	// Hang: answer nothing, not even the headers, until the client goes
	// away.
	Hang bool
}

// Message is one request the server received on the Messages path.
type Message struct {
	SID          string // assigned when the request was valid, else ""
	Method, Path string
	Header       http.Header
	Form         url.Values // the POST form
	// The basic auth credentials (ok false when there were none).
	User, Password string
	BasicAuth      bool
}

// Server is a fake Twilio Messages API on loopback.
type Server struct {
	// URL is the base URL (no trailing slash): Config.BaseURL of a client.
	URL        string
	AccountSID string
	AuthToken  string

	srv    *httptest.Server
	reply  func(Message) Reply
	client *http.Client

	mu       sync.Mutex
	messages []Message
}

// New starts a server. It closes at t.Cleanup, after any connection still
// open is dropped.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{
		AccountSID: cmp.Or(o.AccountSID, DefaultAccountSID),
		AuthToken:  cmp.Or(o.AuthToken, DefaultAuthToken),
		reply:      o.Reply,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /"+twilio.APIVersion+"/Accounts/{sid}/Messages.json", s.create)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
	})
	s.srv = fakeapi.Start(t, mux)
	s.URL = s.srv.URL
	tr := http.DefaultTransport.(*http.Transport).Clone()
	s.client = &http.Client{Transport: tr, Timeout: 10 * time.Second}
	t.Cleanup(tr.CloseIdleConnections) // before the server closes
	return s
}

// Messages returns every request received on the Messages path, valid or
// not, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

var (
	serviceSID = regexp.MustCompile(`^MG[0-9a-f]{32}$`)
	e164       = invalid.IsE164
)

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	m := Message{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	m.User, m.Password, m.BasicAuth = r.BasicAuth()
	formErr := r.ParseForm()
	m.Form = r.PostForm
	status, code, msg := s.check(r, m, formErr)
	if status == 0 {
		m.SID = NewSID("SM")
	}
	s.mu.Lock()
	s.messages = append(s.messages, m)
	s.mu.Unlock()
	if status != 0 {
		writeError(w, status, code, msg)
		return
	}

	var reply Reply
	if s.reply != nil {
		reply = s.reply(m)
	}
	if !fakeapi.Wait(r, reply.Delay) {
		return
	}
	if reply.Hang {
		<-r.Context().Done()
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK && reply.Status != http.StatusCreated {
		writeError(w, reply.Status, reply.Code, cmp.Or(reply.Message, http.StatusText(reply.Status)))
		return
	}
	now := time.Now().UTC().Format(time.RFC1123Z)
	f := m.Form
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(cmp.Or(reply.Status, http.StatusCreated))
	_ = json.NewEncoder(w).Encode(map[string]any{
		"account_sid":           s.AccountSID,
		"api_version":           twilio.APIVersion,
		"body":                  f.Get("Body"),
		"date_created":          now,
		"date_sent":             nil,
		"date_updated":          now,
		"direction":             "outbound-api",
		"error_code":            nullable(reply.ErrorCode),
		"error_message":         nullable(reply.ErrorMessage),
		"from":                  nullable(f.Get("From")),
		"messaging_service_sid": nullable(f.Get("MessagingServiceSid")),
		"num_media":             "0",
		"num_segments":          "1",
		"price":                 nil,
		"price_unit":            "USD",
		"sid":                   m.SID,
		"status":                cmp.Or(reply.MessageStatus, "queued"),
		"subresource_uris":      map[string]any{"media": r.URL.Path[:len(r.URL.Path)-len(".json")] + "/" + m.SID + "/Media.json"},
		"to":                    f.Get("To"),
		"uri":                   r.URL.Path[:len(r.URL.Path)-len(".json")] + "/" + m.SID + ".json",
	})
}

// check is the status, Twilio error code and message of a request the API
// would refuse (0 when it is valid).
func (s *Server) check(r *http.Request, m Message, formErr error) (int, int, string) {
	if !m.BasicAuth || m.User != s.AccountSID || m.Password != s.AuthToken {
		return http.StatusUnauthorized, 20003, "Authenticate"
	}
	if r.PathValue("sid") != s.AccountSID {
		return http.StatusNotFound, 20404, "The requested resource " + r.URL.Path + " was not found"
	}
	if formErr != nil {
		return http.StatusBadRequest, 21620, "Invalid request body"
	}
	f := m.Form
	to, from, service, body := f.Get("To"), f.Get("From"), f.Get("MessagingServiceSid"), f.Get("Body")
	switch {
	case to == "":
		return http.StatusBadRequest, 21604, "A 'To' phone number is required."
	case !e164(to):
		return http.StatusBadRequest, 21211, fmt.Sprintf("Invalid 'To' Phone Number: %s", to)
	case from == "" && service == "":
		return http.StatusBadRequest, 21603, "A 'From' phone number is required."
	case from != "" && !e164(from):
		return http.StatusBadRequest, 21212, fmt.Sprintf("The 'From' number %s is not a valid phone number, shortcode, or alphanumeric sender ID.", from)
	case service != "" && !serviceSID.MatchString(service):
		return http.StatusBadRequest, 21701, fmt.Sprintf("The Messaging Service Sid %s is invalid.", service)
	case body == "":
		return http.StatusBadRequest, 21602, "Message body is required."
	case invalid.Len(body) > MaxBody:
		return http.StatusBadRequest, 21617, "The concatenated message body exceeds the 1600 character limit."
	case f.Has("StatusCallback") && !invalid.IsHTTPURL(f.Get("StatusCallback")):
		return http.StatusBadRequest, 21609, "Invalid StatusCallback url"
	}
	return 0, 0, ""
}

// NewSID is prefix followed by 32 random lower-case hex digits, the form
// of Twilio's SIDs ("SM" messages, "AC" accounts, "MG" services).
func NewSID(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// StatusCallback POSTs a message status callback to callbackURL as Twilio
// does, signed with the server's auth token: MessageSid and SmsSid (sid),
// MessageStatus and SmsStatus (status), AccountSid, ApiVersion, ErrorCode
// (only when errorCode is not 0, as Twilio sends it for failed and
// undelivered messages) and, when sid is a message the server accepted,
// its To and From or MessagingServiceSid. An answer other than 2xx is an
// error.
func (s *Server) StatusCallback(ctx context.Context, callbackURL, sid, status string, errorCode int) error {
	f := url.Values{
		"MessageSid":    {sid},
		"SmsSid":        {sid},
		"MessageStatus": {status},
		"SmsStatus":     {status},
		"AccountSid":    {s.AccountSID},
		"ApiVersion":    {twilio.APIVersion},
	}
	if errorCode != 0 {
		f.Set("ErrorCode", strconv.Itoa(errorCode))
	}
	for _, m := range s.Messages() {
		if m.SID == sid && sid != "" {
			for _, k := range []string{"To", "From", "MessagingServiceSid"} {
				if v := m.Form.Get(k); v != "" {
					f.Set(k, v)
				}
			}
		}
	}
	return s.Post(ctx, callbackURL, f)
}

// Inbound POSTs an inbound-message webhook to webhookURL as Twilio does
// when a message to one of the account's numbers arrives, signed with the
// server's auth token: MessageSid, SmsMessageSid, SmsSid (a new "SM" sid),
// AccountSid, From, To, Body, NumMedia=0, NumSegments=1, SmsStatus=received
// and ApiVersion. An answer other than 2xx is an error.
func (s *Server) Inbound(ctx context.Context, webhookURL, from, to, body string) error {
	sid := NewSID("SM")
	return s.Post(ctx, webhookURL, url.Values{
		"MessageSid":    {sid},
		"SmsMessageSid": {sid},
		"SmsSid":        {sid},
		"AccountSid":    {s.AccountSID},
		"From":          {from},
		"To":            {to},
		"Body":          {body},
		"NumMedia":      {"0"},
		"NumSegments":   {"1"},
		"SmsStatus":     {"received"},
		"ApiVersion":    {twilio.APIVersion},
	})
}

// Post sends form to target as a webhook of this account: signed with its
// auth token. An answer other than 2xx is an error.
func (s *Server) Post(ctx context.Context, target string, f url.Values) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(f.Encode()))
	if err != nil {
		return fmt.Errorf("twiliotest: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	req.Header.Set("User-Agent", "TwilioProxy/1.1")
	req.Header.Set(twilio.SignatureHeader, twilio.Sign(s.AuthToken, target, f))
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("twiliotest: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("twiliotest: webhook answered %s", resp.Status)
	}
	return nil
}

// writeError answers with Twilio's error body.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	body := map[string]any{"message": msg, "status": status, "code": nullable(code), "more_info": nil}
	if code != 0 {
		body["more_info"] = fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code)
	}
	_ = json.NewEncoder(w).Encode(body)
}

func nullable[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}
