package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-voice/parley/internal/model"
)

// Events: the X-Parley-Event values.
const (
	EventPreCall        = "pre_call"
	EventPostCall       = "post_call"
	EventCustomTool     = "custom_tool"
	EventInboundMessage = "inbound_message"
	// EventTestRunCompleted is sent when a test run ends (completed or
	// canceled), to the agent under test's postCallWebhookUrl.
	EventTestRunCompleted = "test_run.completed"
	// EventCampaignCompleted is sent when a campaign completes, to its
	// webhookUrl.
	EventCampaignCompleted = "campaign_completed"
)

// Header names and fixed values of every delivery.
const (
	HeaderEvent     = "X-Parley-Event"
	HeaderDelivery  = "X-Parley-Delivery"
	HeaderSignature = "X-Parley-Signature"
	UserAgent       = "Parley-Webhook/1"
)

// DefaultTimeout bounds a delivery whose caller gave no timeout.
const DefaultTimeout = 10 * time.Second

// maxResponseHeaderBytes bounds the response headers a receiver may send.
const maxResponseHeaderBytes = 64 << 10

// Errors a delivery's Result can carry (test with errors.Is); see also
// ErrPrivateAddress.
var (
	ErrBadURL   = errors.New("webhook URL must be an absolute http:// or https:// URL")
	ErrTimeout  = errors.New("webhook timed out")
	ErrStatus   = errors.New("webhook answered with a non-2xx status")
	ErrResponse = errors.New("webhook response invalid")
)

// Options configure a Sender.
type Options struct {
	// AllowPrivate lets deliveries reach loopback, private, link-local and
	// other non-public addresses: the operator's --allow-private-webhooks,
	// for local testing only.
	AllowPrivate bool
	// Registerer receives the metrics parley_webhook_deliveries_total
	// {event,result} and parley_webhook_delivery_duration_seconds{event}
	// (nil: not registered).
	Registerer prometheus.Registerer
	// Logger records failed deliveries (nil: discarded).
	Logger *slog.Logger
}

// Sender delivers webhooks. It is safe for concurrent use.
type Sender struct {
	transport *http.Transport
	client    *http.Client
	metrics   *metrics
	log       *slog.Logger

	// Fixed in production; tests shorten or pin them.
	now             func() time.Time
	preCallTimeout  time.Duration
	postCallTimeout time.Duration
}

// New returns a Sender. Close it when done.
func New(o Options) *Sender {
	dialer := &net.Dialer{Timeout: DefaultTimeout, KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		dialer.Control = refusePrivate
	}
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would connect for us, past the address check
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    DefaultTimeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		DisableCompression:     true, // send exactly the documented headers
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sender{
		transport: transport,
		client: &http.Client{
			Transport: transport,
			// Redirects are answers, not instructions: a 3xx fails.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		metrics:         newMetrics(o.Registerer),
		log:             log,
		now:             time.Now,
		preCallTimeout:  PreCallTimeout,
		postCallTimeout: PostCallTimeout,
	}
}

// Close releases idle connections. Deliveries under way are not affected;
// the Sender stays usable.
func (s *Sender) Close() { s.transport.CloseIdleConnections() }

// Header is one extra request header of a delivery.
type Header struct {
	Key, Value string
}

// Delivery is one webhook to send.
type Delivery struct {
	// Event is the X-Parley-Event value (one of the Event constants).
	Event string
	// URL is the receiver: an absolute http or https URL.
	URL string
	// Secret signs the delivery (X-Parley-Signature); "" sends it unsigned.
	Secret string
	// Body is the JSON request body, sent as is.
	Body []byte
	// Headers are added to the request (a custom tool's headers). They
	// cannot replace Content-Type, User-Agent or the X-Parley headers.
	Headers []Header
	// Query is appended to the URL's own query string, which is kept as is.
	Query url.Values
	// Timeout bounds the whole delivery, reading the response included
	// (<= 0: DefaultTimeout).
	Timeout time.Duration
	// MaxResponse is how many bytes of the response body are kept; the rest
	// is discarded unread. 0 reads none.
	MaxResponse int64
}

// Result is how a delivery went.
type Result struct {
	// ID is the delivery's X-Parley-Delivery value ("" if nothing was sent).
	ID string
	// Sent: the receiver answered 2xx and the response was read.
	Sent bool
	// StatusCode is the receiver's HTTP status (0: no answer).
	StatusCode int
	// Duration is from the start of sending to the response read.
	Duration time.Duration
	// Body is the response body, at most MaxResponse bytes; Truncated says
	// more was there.
	Body      []byte
	Truncated bool
	// Err says why the delivery failed (nil when Sent). Its text is fit for
	// logs and customers: it never contains the URL.
	Err error
}

// Status is the delivery's webhook status, "sent" or "failed".
func (r Result) Status() string {
	if r.Sent {
		return model.WebhookSent
	}
	return model.WebhookFailed
}

// Deliver sends d once and reports how it went. It honours ctx as well as
// d.Timeout.
func (s *Sender) Deliver(ctx context.Context, d Delivery) Result {
	r := s.send(ctx, d)
	s.record(d.Event, r)
	return r
}

// send is Deliver without the metrics and logs.
func (s *Sender) send(ctx context.Context, d Delivery) (r Result) {
	start := time.Now()
	defer func() { r.Duration = time.Since(start) }()

	target, err := requestURL(d.URL, d.Query)
	if err != nil {
		r.Err = err
		return r
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(dctx, http.MethodPost, target, bytes.NewReader(d.Body))
	if err != nil {
		r.Err = ErrBadURL
		return r
	}
	for _, h := range d.Headers {
		req.Header.Add(h.Key, h.Value)
	}
	r.ID = uuid.NewString()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderEvent, d.Event)
	req.Header.Set(HeaderDelivery, r.ID)
	req.Header.Del(HeaderSignature)
	if d.Secret != "" {
		req.Header.Set(HeaderSignature, Sign(d.Secret, s.now(), d.Body))
	}

	resp, err := s.client.Do(req)
	if err != nil {
		r.Err = explain(ctx, dctx, timeout, err)
		return r
	}
	defer resp.Body.Close()
	r.StatusCode = resp.StatusCode
	var readErr error
	if d.MaxResponse > 0 {
		r.Body, readErr = io.ReadAll(io.LimitReader(resp.Body, d.MaxResponse+1))
		if int64(len(r.Body)) > d.MaxResponse {
			r.Body, r.Truncated = r.Body[:d.MaxResponse], true
		}
	}
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		r.Err = statusError(resp.StatusCode)
	case readErr != nil:
		r.Err = explain(ctx, dctx, timeout, readErr)
	default:
		r.Sent = true
	}
	return r
}

// requestURL checks raw and appends query to its own query string.
func requestURL(raw string, query url.Values) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", ErrBadURL
	}
	if extra := query.Encode(); extra != "" {
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += extra
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

func statusError(code int) error {
	err := fmt.Errorf("%w: %d %s", ErrStatus, code, http.StatusText(code))
	if code >= 300 && code < 400 {
		err = fmt.Errorf("%w (redirects are not followed)", err)
	}
	return err
}

// explain turns a transport error into one fit for logs and customers:
// the URL, which may carry credentials in its query, is left out, and so
// is the address of a refused connection.
func explain(ctx, dctx context.Context, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, ErrPrivateAddress):
		return ErrPrivateAddress
	case ctx.Err() != nil:
		return fmt.Errorf("webhook delivery canceled: %w", ctx.Err())
	case dctx.Err() != nil:
		return fmt.Errorf("%w: no complete answer within %s", ErrTimeout, timeout)
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return fmt.Errorf("webhook delivery: %w", err)
}

// record counts a finished delivery and logs a failed one.
func (s *Sender) record(event string, r Result) {
	s.metrics.observe(event, r.Status(), r.Duration)
	if !r.Sent {
		s.log.Warn("webhook delivery failed", "event", event, "delivery_id", r.ID,
			"status_code", r.StatusCode, "duration", r.Duration, "err", r.Err)
	}
}
