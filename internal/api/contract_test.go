package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// contractPath is the OpenAPI document, relative to this package.
const contractPath = "../../openapi.yaml"

// contract validates HTTP exchanges against openapi.yaml.
//
// The document's paths are full paths ("/v1/agents") under its one server,
// http://127.0.0.1:8080; requests are routed as if sent there, whatever host
// the test server really had. Validation uses kin-openapi's openapi3filter,
// which validates schemas of an OpenAPI 3.1 document as JSON Schema 2020-12,
// except for JSON bodies: schemas validates those, as openapi3filter would,
// with each schema compiled once.
type contract struct {
	doc     *openapi3.T
	router  routers.Router
	server  *url.URL
	schemas *schemaCache
}

var (
	contractOnce   sync.Once
	sharedContract *contract
	contractErr    error
)

// loadContract loads and validates ../../openapi.yaml once per test binary
// (sync.Once), failing t on error.
func loadContract(t testing.TB) *contract {
	t.Helper()
	contractOnce.Do(func() { sharedContract, contractErr = newContract(contractPath) })
	if contractErr != nil {
		t.Fatalf("contract: %v", contractErr)
	}
	return sharedContract
}

func newContract(path string) (*contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("%s is not a valid OpenAPI document: %w", path, err)
	}
	if len(doc.Servers) != 1 {
		return nil, fmt.Errorf("%s: want exactly one server, have %d", path, len(doc.Servers))
	}
	server, err := url.Parse(doc.Servers[0].URL)
	if err != nil {
		return nil, fmt.Errorf("%s: server URL: %w", path, err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: building the router: %w", path, err)
	}
	schemas, err := newSchemaCache(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: preparing its schemas: %w", path, err)
	}
	return &contract{doc: doc, router: router, server: server, schemas: schemas}, nil
}

// options are the validation options of every exchange: authentication is
// the server's business (accept any key here), undocumented status codes
// fail, every problem is reported, and the request is never modified.
func (c *contract) options() *openapi3filter.Options {
	o := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
		SkipSettingDefaults:   true,
	}
	o.WithCustomSchemaErrorFunc(schemaErrorMessage)
	o.SchemaValidationOptions = formatOptions()
	return o
}

// stringFormats make the formats the document uses assertions: kin-openapi
// checks date-time on its own, uuid and uri only when told how.
var stringFormats = map[string]openapi3.StringFormatValidator{
	"uuid": openapi3.NewRegexpFormatValidator(
		`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`),
	"uri": openapi3.NewCallbackValidator(func(s string) error {
		if u, err := url.Parse(s); err != nil || !u.IsAbs() {
			return fmt.Errorf("%q is not an absolute URI", s)
		}
		return nil
	}),
}

func formatOptions() []openapi3.SchemaValidationOption {
	var opts []openapi3.SchemaValidationOption
	for name, f := range stringFormats {
		opts = append(opts, openapi3.WithStringFormatValidator(name, f))
	}
	return opts
}

// schemaOptions are the options openapi3filter validates a body with, but
// EnableJSONSchema2020: schemaCache decides where that applies. direction is
// VisitAsRequest, VisitAsResponse or nil.
func schemaOptions(direction openapi3.SchemaValidationOption) []openapi3.SchemaValidationOption {
	opts := append(formatOptions(), openapi3.MultiErrors(), openapi3.SetSchemaErrorMessageCustomizer(schemaErrorMessage))
	if direction != nil {
		opts = append(opts, direction)
	}
	return opts
}

// check validates req (with its body bytes) and the response (status,
// headers, body bytes) against the document, calling t.Errorf with a message
// naming method, path and status on any mismatch.
//
// Requests answered 2xx must match the document as requests too; requests
// the server rejected are not request-validated (tests send bad input on
// purpose), but every response is validated, error envelopes included.
// Routes not in the document are an error, except when the response is 404
// or 405 (unknown route, or known path with another method): those answers
// must still have the house error shape.
func (c *contract) check(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	t.Helper()
	where := fmt.Sprintf("%s %s → %d", req.Method, req.URL.RequestURI(), resp.StatusCode)
	if final := resp.Request; final != nil && final.URL != nil && final.URL.Path != req.URL.Path {
		// The client followed redirects: resp answers the last request.
		where = fmt.Sprintf("%s %s (redirected to %s %s) → %d",
			req.Method, req.URL.RequestURI(), final.Method, final.URL.RequestURI(), resp.StatusCode)
		if final.Method != req.Method {
			reqBody = nil
		}
		req = final
	}
	routed := c.routable(req, reqBody)
	route, pathParams, err := c.router.FindRoute(routed)
	if err != nil {
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusMethodNotAllowed:
			for _, problem := range c.checkUnrouted(resp, respBody) {
				t.Errorf("contract: %s: %s", where, problem)
			}
			return
		}
		t.Errorf("contract: %s: no such operation in openapi.yaml (%v)", where, err)
		return
	}
	in := &openapi3filter.RequestValidationInput{
		Request: routed, PathParams: pathParams, Route: route, Options: c.options(),
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if err := c.validateRequest(in, reqBody); err != nil {
			t.Errorf("contract: %s: the request was accepted but does not match openapi.yaml %s %s:\n%s",
				where, route.Method, route.Path, describeErr(err))
		}
	}
	if err := c.validateResponse(in, resp, respBody); err != nil {
		t.Errorf("contract: %s: the response does not match openapi.yaml %s %s:\n%s\nbody: %s",
			where, route.Method, route.Path, describeErr(err), clip(respBody))
	}
}

// validateRequest is openapi3filter.ValidateRequest, with a JSON body
// validated through the schema cache.
func (c *contract) validateRequest(in *openapi3filter.RequestValidationInput, body []byte) error {
	var media *openapi3.MediaType
	rb := in.Route.Operation.RequestBody
	if rb != nil && rb.Value != nil && len(body) > 0 {
		media = jsonMedia(rb.Value.Content, in.Request.Header.Get("Content-Type"))
	}
	in.Options.ExcludeRequestBody = media != nil
	var problems openapi3.MultiError
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		problems = append(problems, err)
	}
	if media != nil {
		if problem, err := c.checkBody(media, body, openapi3.VisitAsRequest()); err != nil {
			problems = append(problems, &openapi3filter.RequestError{Input: in, RequestBody: rb.Value, Reason: problem, Err: err})
		}
	}
	if len(problems) > 0 {
		return problems
	}
	return nil
}

// validateResponse is openapi3filter.ValidateResponse, with a JSON body
// validated through the schema cache.
func (c *contract) validateResponse(in *openapi3filter.RequestValidationInput, resp *http.Response, body []byte) error {
	var media *openapi3.MediaType
	responses := in.Route.Operation.Responses
	r := responses.Status(resp.StatusCode)
	if r == nil {
		r = responses.Default()
	}
	if r != nil && r.Value != nil && validatesResponse(in.Request.Method, resp.StatusCode) {
		media = jsonMedia(r.Value.Content, resp.Header.Get("Content-Type"))
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                c.options(),
	}
	out.Options.ExcludeResponseBody = media != nil
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil || media == nil {
		return err
	}
	if problem, err := c.checkBody(media, body, openapi3.VisitAsResponse()); err != nil {
		return &openapi3filter.ResponseError{Input: out, Reason: "response body " + problem, Err: err}
	}
	return nil
}

// validatesResponse is false where openapi3filter validates no response:
// to HEAD, and redirects and 304.
func validatesResponse(method string, status int) bool {
	switch status {
	case http.StatusNotModified, http.StatusPermanentRedirect, http.StatusTemporaryRedirect, http.StatusMovedPermanently:
		return false
	}
	return method != http.MethodHead
}

// routable is a copy of req addressed to the document's server, carrying
// body, for routing and request validation.
func (c *contract) routable(req *http.Request, body []byte) *http.Request {
	u := *c.server
	u.Path = req.URL.Path
	u.RawPath = req.URL.RawPath
	u.RawQuery = req.URL.RawQuery
	out := req.Clone(context.Background())
	out.URL = &u
	out.Host = u.Host
	out.RequestURI = ""
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	// The server reads every body as JSON whatever its Content-Type; a test
	// that sends JSON without saying so is validated as JSON.
	if len(body) > 0 && out.Header.Get("Content-Type") == "" {
		out.Header.Set("Content-Type", "application/json")
	}
	return out
}

// checkUnrouted checks a 404 or 405 answer to a request the document has no
// operation for against the document's NotFound or MethodNotAllowed response.
func (c *contract) checkUnrouted(resp *http.Response, body []byte) []string {
	name := "NotFound"
	if resp.StatusCode == http.StatusMethodNotAllowed {
		name = "MethodNotAllowed"
	}
	ref := c.doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return []string{"openapi.yaml has no components/responses/" + name}
	}
	var problems []string
	for header, h := range ref.Value.Headers {
		if h.Value != nil && h.Value.Required && resp.Header.Get(header) == "" {
			problems = append(problems, fmt.Sprintf("header %s is missing (components/responses/%s)", header, name))
		}
	}
	ct := resp.Header.Get("Content-Type")
	mt := ref.Value.Content.Get(ct)
	if mt == nil || mt.Schema == nil {
		return append(problems, fmt.Sprintf("Content-Type %q is not that of components/responses/%s", ct, name))
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return append(problems, fmt.Sprintf("body is not JSON: %v\nbody: %s", err, clip(body)))
	}
	if err := c.schemas.validate(mt.Schema.Value, v, schemaOptions(nil)); err != nil {
		problems = append(problems, fmt.Sprintf("body does not match components/responses/%s:\n%s\nbody: %s",
			name, describeErr(err), clip(body)))
	}
	return problems
}

// describeErr spells out kin-openapi's errors, one problem a line.
func describeErr(err error) string {
	return "  - " + strings.Join(flattenErr(err), "\n  - ")
}

// flattenErr lists the leaf problems of err, each prefixed by what it is
// about (a parameter, the request body, the response body).
func flattenErr(err error) []string {
	prefixed := func(prefix string, cause error, reason string) []string {
		if cause == nil {
			return []string{prefix + reason}
		}
		var out []string
		for _, s := range flattenErr(cause) {
			out = append(out, prefix+s)
		}
		return out
	}
	switch e := err.(type) {
	case openapi3.MultiError:
		var out []string
		for _, one := range e {
			out = append(out, flattenErr(one)...)
		}
		return out
	case *openapi3filter.RequestError:
		prefix := ""
		switch {
		case e.Parameter != nil:
			prefix = fmt.Sprintf("%s parameter %q: ", e.Parameter.In, e.Parameter.Name)
		case e.RequestBody != nil:
			prefix = "request body: "
		case e.Err != nil && e.Reason != "":
			prefix = e.Reason + ": "
		}
		return prefixed(prefix, e.Err, e.Reason)
	case *openapi3filter.ResponseError:
		prefix := ""
		if e.Err != nil && e.Reason != "" {
			prefix = e.Reason + ": "
		}
		return prefixed(prefix, e.Err, e.Reason)
	}
	return []string{strings.TrimSpace(err.Error())}
}

// schemaErrorMessage is a schema error in one line: where, and what is wrong,
// without kin-openapi's dump of the schema and the value.
func schemaErrorMessage(err *openapi3.SchemaError) string {
	if i := strings.Index(err.Reason, "jsonschema validation failed"); i >= 0 {
		return jsonschemaLeaves(err.Reason[i:])
	}
	msg := fmt.Sprintf("at '/%s': %s", strings.Join(err.JSONPointer(), "/"), err.Reason)
	var origin *openapi3.SchemaError
	if errors.As(err.Origin, &origin) {
		msg += " (" + schemaErrorMessage(origin) + ")"
	} else if err.Origin != nil {
		msg += " (" + err.Origin.Error() + ")"
	}
	return msg
}

// jsonschemaLeaves is a JSON Schema 2020-12 validator's report in one line.
// The report is a tree whose leaves name their place ("- at '/data/name':
// got number, want string"); keep the leaves, drop the grouping lines.
func jsonschemaLeaves(report string) string {
	var leaves []string
	for j, line := range strings.Split(report, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(line, " -"))
		if j == 0 || line == "" || strings.HasSuffix(line, "' failed") || strings.HasSuffix(line, ": validation failed") {
			continue
		}
		leaves = append(leaves, line)
	}
	if len(leaves) == 0 {
		return strings.Join(strings.Fields(report), " ")
	}
	return strings.Join(leaves, "; ")
}

func clip(b []byte) string {
	const max = 2000
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
