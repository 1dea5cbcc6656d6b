// Package otlp exports OpenTelemetry traces over OTLP/HTTP with the JSON
// encoding (POST <endpoint>/v1/traces), the protocol every OpenTelemetry
// collector, Jaeger, Tempo and most vendors accept. It is a few dozen lines
// of the standard library instead of the OpenTelemetry SDK: Parley writes
// one trace per call, after the call, and needs nothing else of the SDK.
package otlp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Span is one timed operation of a trace.
type Span struct {
	TraceID  TraceID
	ID       SpanID
	Parent   SpanID // zero for the root
	Name     string
	Start    time.Time
	End      time.Time
	Attrs    map[string]any // string, bool, int, int64, float64 values
	ErrorMsg string         // set: the span's status is ERROR with this message
}

// TraceID and SpanID are random identifiers.
type (
	TraceID [16]byte
	SpanID  [8]byte
)

// NewTraceID returns a random trace id.
func NewTraceID() TraceID {
	var id TraceID
	_, _ = rand.Read(id[:])
	return id
}

// NewSpanID returns a random span id.
func NewSpanID() SpanID {
	var id SpanID
	_, _ = rand.Read(id[:])
	return id
}

// Exporter sends spans to a collector. It is safe for concurrent use.
type Exporter struct {
	url     string
	service string
	headers map[string]string
	client  *http.Client
}

// Timeout bounds one export.
const Timeout = 5 * time.Second

// New returns an exporter to endpoint, the collector's OTLP/HTTP base URL
// (http://127.0.0.1:4318; a URL already ending in /v1/traces is kept), with
// service.name service and extra request headers (authentication).
func New(endpoint, service string, headers map[string]string) *Exporter {
	u := strings.TrimRight(endpoint, "/")
	if !strings.HasSuffix(u, "/v1/traces") {
		u += "/v1/traces"
	}
	return &Exporter{url: u, service: service, headers: headers, client: &http.Client{Timeout: Timeout}}
}

// Export sends spans in one request.
func (e *Exporter) Export(ctx context.Context, spans []Span) error {
	body, err := json.Marshal(e.request(spans))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("otlp: collector answered %s", resp.Status)
	}
	return nil
}

// The OTLP JSON shapes (opentelemetry-proto, JSON encoding: ids in hex,
// times as decimal strings of Unix nanoseconds).
type (
	exportRequest struct {
		ResourceSpans []resourceSpans `json:"resourceSpans"`
	}
	resourceSpans struct {
		Resource   resource     `json:"resource"`
		ScopeSpans []scopeSpans `json:"scopeSpans"`
	}
	resource struct {
		Attributes []keyValue `json:"attributes"`
	}
	scopeSpans struct {
		Scope scope      `json:"scope"`
		Spans []wireSpan `json:"spans"`
	}
	scope struct {
		Name string `json:"name"`
	}
	wireSpan struct {
		TraceID      string     `json:"traceId"`
		SpanID       string     `json:"spanId"`
		ParentSpanID string     `json:"parentSpanId,omitempty"`
		Name         string     `json:"name"`
		Kind         int        `json:"kind"`
		Start        string     `json:"startTimeUnixNano"`
		End          string     `json:"endTimeUnixNano"`
		Attributes   []keyValue `json:"attributes,omitempty"`
		Status       *status    `json:"status,omitempty"`
	}
	status struct {
		Code    int    `json:"code"`
		Message string `json:"message,omitempty"`
	}
	keyValue struct {
		Key   string   `json:"key"`
		Value anyValue `json:"value"`
	}
	anyValue struct {
		String *string  `json:"stringValue,omitempty"`
		Bool   *bool    `json:"boolValue,omitempty"`
		Int    *string  `json:"intValue,omitempty"`
		Double *float64 `json:"doubleValue,omitempty"`
	}
)

const (
	kindInternal = 1
	statusError  = 2
)

func (e *Exporter) request(spans []Span) exportRequest {
	out := make([]wireSpan, 0, len(spans))
	for _, s := range spans {
		w := wireSpan{TraceID: hex.EncodeToString(s.TraceID[:]), SpanID: hex.EncodeToString(s.ID[:]), Name: s.Name,
			Kind: kindInternal, Start: nanos(s.Start), End: nanos(s.End), Attributes: attributes(s.Attrs)}
		if s.Parent != (SpanID{}) {
			w.ParentSpanID = hex.EncodeToString(s.Parent[:])
		}
		if s.ErrorMsg != "" {
			w.Status = &status{Code: statusError, Message: s.ErrorMsg}
		}
		out = append(out, w)
	}
	return exportRequest{ResourceSpans: []resourceSpans{{
		Resource:   resource{Attributes: attributes(map[string]any{"service.name": e.service})},
		ScopeSpans: []scopeSpans{{Scope: scope{Name: "github.com/parley-voice/parley"}, Spans: out}},
	}}}
}

func nanos(t time.Time) string { return fmt.Sprint(t.UnixNano()) }

func attributes(m map[string]any) []keyValue {
	out := make([]keyValue, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		var a anyValue
		switch v := v.(type) {
		case string:
			a.String = &v
		case bool:
			a.Bool = &v
		case int:
			s := fmt.Sprint(v)
			a.Int = &s
		case int64:
			s := fmt.Sprint(v)
			a.Int = &s
		case float64:
			a.Double = &v
		default:
			s := fmt.Sprint(v)
			a.String = &s
		}
		out = append(out, keyValue{Key: k, Value: a})
	}
	return out
}
