package twilio

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/httpclient"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/provider/apierr"
)

// Defaults of Config's zero values.
const (
	DefaultBaseURL = "https://api.twilio.com"
	DefaultTimeout = 15 * time.Second
)

// APIVersion is the version path segment of the Messages API.
const APIVersion = "2010-04-01"

// maxReply bounds how much of an answer is read: a message resource is
// about a kilobyte.
const maxReply = 1 << 20

// Error kinds. Every error of Send but a canceled ctx wraps one of them.
var (
	// ErrRejected: the message as asked can't be sent (an invalid number,
	// an empty or too long body, ...). Sending it again won't help.
	ErrRejected = errors.New("twilio: message rejected")
	// ErrUnavailable: the API could not be used (credentials refused, no
	// connection, rate limit, server error, timeout, an unreadable answer).
	ErrUnavailable = errors.New("twilio: unavailable")
)

// Config configures a Client.
type Config struct {
	// BaseURL is the API root ("": DefaultBaseURL); requests go to
	// {BaseURL}/2010-04-01/Accounts/{AccountSID}/Messages.json.
	BaseURL string
	// AccountSID and AuthToken are the HTTP basic auth credentials.
	AccountSID string
	AuthToken  string
	// Timeout bounds one Send from sending the request to the last byte of
	// the answer (<= 0: DefaultTimeout).
	Timeout time.Duration
	// HTTPClient sends the requests (nil: a client of the Client's own,
	// whose idle connections Close releases).
	HTTPClient *http.Client
}

// Client sends text messages through a Twilio-compatible Messages API. It
// is safe for concurrent use.
type Client struct {
	endpoint string
	sid      string
	token    string
	timeout  time.Duration
	http     httpclient.Client
}

// New returns a Client for c. It refuses a missing account SID or auth
// token and a base URL that is not an absolute http or https URL (or that
// carries credentials, a query or a fragment). It sends nothing until Send.
func New(c Config) (*Client, error) {
	switch {
	case invalid.IsBlank(c.AccountSID):
		return nil, errors.New("twilio: the account SID is required")
	case invalid.IsBlank(c.AuthToken):
		return nil, errors.New("twilio: the auth token is required")
	}
	base := cmp.Or(c.BaseURL, DefaultBaseURL)
	if !invalid.IsHTTPURL(base) {
		return nil, errors.New("twilio: the base URL must be an absolute http or https URL")
	}
	if u, _ := url.Parse(base); u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return nil, errors.New("twilio: the base URL must not have credentials, a query or a fragment")
	}
	cl := &Client{
		endpoint: strings.TrimRight(base, "/") + "/" + APIVersion + "/Accounts/" +
			url.PathEscape(c.AccountSID) + "/Messages.json",
		sid:     c.AccountSID,
		token:   c.AuthToken,
		timeout: c.Timeout,
		http:    httpclient.Or(c.HTTPClient),
	}
	if cl.timeout <= 0 {
		cl.timeout = DefaultTimeout
	}
	return cl, nil
}

// Close releases idle connections of the Client's own HTTP client (none
// when Config.HTTPClient was given). The Client stays usable.
func (c *Client) Close() {
	c.http.CloseIdle()
}

// Send is one outbound message.
type Send struct {
	To                  string // E.164 number (or a channel address like whatsapp:+1...)
	From                string // the sender; exactly one of From and MessagingServiceSID
	MessagingServiceSID string // "MG...": the service picks the sender
	Body                string
	StatusCallback      string // URL for delivery status callbacks ("": none)
}

// Sent is the message resource the API answered with.
type Sent struct {
	SID          string // "SM..."
	Status       string // accepted, queued, sending, sent, failed, delivered, undelivered, ...
	ErrorCode    int    // 0 when none
	ErrorMessage string
}

// form is the request body of s.
func (s Send) form() (url.Values, error) {
	switch {
	case invalid.IsBlank(s.To):
		return nil, fmt.Errorf("%w: the 'To' number is required", ErrRejected)
	case s.Body == "":
		return nil, fmt.Errorf("%w: the body is required", ErrRejected)
	case (s.From == "") == (s.MessagingServiceSID == ""):
		return nil, fmt.Errorf("%w: exactly one of From and MessagingServiceSid is required", ErrRejected)
	}
	f := url.Values{"To": {s.To}, "Body": {s.Body}}
	if s.From != "" {
		f.Set("From", s.From)
	} else {
		f.Set("MessagingServiceSid", s.MessagingServiceSID)
	}
	if s.StatusCallback != "" {
		f.Set("StatusCallback", s.StatusCallback)
	}
	return f, nil
}

// Send asks the API to send s. A nil error means the message was accepted
// (its Status is usually queued or accepted); delivery is reported later to
// s.StatusCallback.
func (c *Client) Send(ctx context.Context, s Send) (Sent, error) {
	f, err := s.form()
	if err != nil {
		return Sent{}, err
	}
	if err := ctx.Err(); err != nil {
		return Sent{}, fmt.Errorf("twilio: %w", err)
	}
	timedOut := fmt.Errorf("%w: no answer within %s", ErrUnavailable, c.timeout)
	run, cancel := context.WithTimeoutCause(ctx, c.timeout, timedOut)
	defer cancel()
	traced, sent := apierr.Trace(run)
	req, err := http.NewRequestWithContext(traced, http.MethodPost, c.endpoint, strings.NewReader(f.Encode()))
	if err != nil {
		text, _ := apierr.Unanswered(err, c.token, false) // never sent
		return Sent{}, fmt.Errorf("%w: %s", ErrUnavailable, text)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(c.sid, c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return Sent{}, c.failed(ctx, run, err, sent())
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return Sent{}, c.failed(ctx, run, err, true)
	}
	return parseReply(resp.StatusCode, reply, c.token)
}

// failed explains a request that got no complete answer: the caller's
// cancel, the timeout, or the network (apierr.BrokeOff; sent: whether the
// request's headers, with the token, went out).
func (c *Client) failed(ctx, run context.Context, err error, sent bool) error {
	return apierr.BrokeOff(ctx, run, err, "twilio", ErrUnavailable, c.token, sent)
}
