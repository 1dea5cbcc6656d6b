package otlp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestExportSendsOTLPJSON(t *testing.T) {
	var got map[string]any
	var path, ctype, auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, ctype, auth = r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &got)
	}))
	defer srv.Close()
	e := New(srv.URL+"/", "parley", map[string]string{"Authorization": "Bearer x"})
	trace, root, child := NewTraceID(), NewSpanID(), NewSpanID()
	start := time.Unix(1700000000, 5)
	err := e.Export(context.Background(), []Span{
		{TraceID: trace, ID: root, Name: "call", Start: start, End: start.Add(time.Second), Attrs: map[string]any{"a": "x", "n": 3, "f": 1.5, "b": true}},
		{TraceID: trace, ID: child, Parent: root, Name: "turn", Start: start, End: start.Add(time.Millisecond), ErrorMsg: "boom"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if path != "/v1/traces" || ctype != "application/json" || auth != "Bearer x" {
		t.Errorf("request %s %s %s", path, ctype, auth)
	}
	rs := got["resourceSpans"].([]any)[0].(map[string]any)
	res := rs["resource"].(map[string]any)["attributes"].([]any)[0].(map[string]any)
	if res["key"] != "service.name" || res["value"].(map[string]any)["stringValue"] != "parley" {
		t.Errorf("resource %v", res)
	}
	spans := rs["scopeSpans"].([]any)[0].(map[string]any)["spans"].([]any)
	s0, s1 := spans[0].(map[string]any), spans[1].(map[string]any)
	if len(s0["traceId"].(string)) != 32 || len(s0["spanId"].(string)) != 16 || s0["parentSpanId"] != nil ||
		s0["startTimeUnixNano"] != "1700000000000000005" || s0["endTimeUnixNano"] != "1700000001000000005" {
		t.Errorf("root span %v", s0)
	}
	if s1["parentSpanId"] != s0["spanId"] || s1["traceId"] != s0["traceId"] || s1["status"].(map[string]any)["code"] != 2.0 {
		t.Errorf("child span %v", s1)
	}
	attrs, _ := json.Marshal(s0["attributes"])
	if string(attrs) != `[{"key":"a","value":{"stringValue":"x"}},{"key":"b","value":{"boolValue":true}},{"key":"f","value":{"doubleValue":1.5}},{"key":"n","value":{"intValue":"3"}}]` {
		t.Errorf("attributes %s", attrs)
	}
}

func TestExportReportsCollectorErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	if err := New(srv.URL+"/v1/traces", "parley", nil).Export(context.Background(), nil); err == nil {
		t.Error("a 503 was taken for success")
	}
}
