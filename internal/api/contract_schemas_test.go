package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonMedia is content's application/json entry when a body of Content-Type
// ct is validated by it against a schema, else nil (openapi3filter then
// validates the body, whatever it is, on its own).
func jsonMedia(content openapi3.Content, ct string) *openapi3.MediaType {
	mt := content.Get(ct)
	if mt == nil || mt != content["application/json"] || mt.Schema == nil || mt.Schema.Value == nil || len(mt.Encoding) > 0 {
		return nil
	}
	return mt
}

// checkBody validates a JSON body against mt's schema as openapi3filter
// does (decoding it with its JSON decoder), through the schema cache. On
// failure, problem is openapi3filter's words for it.
func (c *contract) checkBody(mt *openapi3.MediaType, body []byte, direction openapi3.SchemaValidationOption) (problem string, err error) {
	value, err := openapi3filter.JSONBodyDecoder(bytes.NewReader(body), nil, mt.Schema, nil)
	if err != nil {
		return "failed to decode body", err
	}
	if err := c.schemas.validate(mt.Schema.Value, value, schemaOptions(direction)); err != nil {
		id := mt.Schema.Ref
		if id == "" {
			id = mt.Schema.Value.Title
		}
		return strings.TrimSpace("doesn't match schema " + id), err
	}
	return "", nil
}

// schemaCache validates values against the document's schemas as kin-openapi
// does for an OpenAPI 3.1 document, compiling each schema once.
//
// Schema.VisitJSON with EnableJSONSchema2020 (what openapi3filter calls for
// every body) compiles a JSON Schema 2020-12 validator on every call, which
// made most of the contract's cost. This mirrors its decision as of
// kin-openapi v0.152.0 (useJSONSchema2020), once per schema: the compiled
// validator, or kin-openapi's own validator where kin-openapi falls back to
// it (a schema that refers to components and uses no 2020-12 keyword; a
// schema that does not compile), which compiles nothing.
type schemaCache struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[*openapi3.Schema]*cachedSchema
}

// cachedSchema is one schema's validator: compiled, or nil with legacy set
// (kin-openapi's validator), or err when compiling failed for good.
type cachedSchema struct {
	compiled *jsonschema.Schema
	legacy   bool
	err      error
}

const (
	componentsURL = "https://parley.test/components.json"
	componentRef  = "#/components/schemas/"
)

// newSchemaCache adds the document's component schemas to a compiler as one
// resource ($defs by name), which every compiled schema refers to, and
// registers every format the document uses as kin-openapi would.
func newSchemaCache(doc *openapi3.T) (*schemaCache, error) {
	defs := map[string]any{}
	for name, ref := range doc.Components.Schemas {
		v, err := schemaJSON(ref.Value)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		defs[name] = rewriteRefs(v, "#/$defs/")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	whole, err := schemaJSON(doc)
	if err != nil {
		return nil, err
	}
	formats := map[string]bool{}
	collectFormats(whole, formats)
	for name := range formats {
		c.RegisterFormat(&jsonschema.Format{Name: name, Validate: formatAssertion(name)})
	}
	c.AssertFormat()
	if err := c.AddResource(componentsURL, map[string]any{"$defs": defs}); err != nil {
		return nil, err
	}
	return &schemaCache{compiler: c, schemas: map[*openapi3.Schema]*cachedSchema{}}, nil
}

// validate checks value against schema. opts are the options of
// kin-openapi's validator (never EnableJSONSchema2020: that would compile).
func (sc *schemaCache) validate(schema *openapi3.Schema, value any, opts []openapi3.SchemaValidationOption) error {
	cs := sc.get(schema)
	switch {
	case cs.err != nil:
		return cs.err
	case cs.legacy:
		return schema.VisitJSON(value, opts...)
	}
	var verr *jsonschema.ValidationError
	if err := cs.compiled.Validate(value); errors.As(err, &verr) {
		return violation{verr}
	} else if err != nil {
		return err
	}
	return nil
}

func (sc *schemaCache) get(schema *openapi3.Schema) *cachedSchema {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if cs, ok := sc.schemas[schema]; ok {
		return cs
	}
	cs := sc.compile(schema)
	sc.schemas[schema] = cs
	return cs
}

// compile is kin-openapi's useJSONSchema2020 decision for schema.
func (sc *schemaCache) compile(schema *openapi3.Schema) *cachedSchema {
	uses2020 := anySubschema(schema, has2020Keyword)
	v, err := schemaJSON(schema)
	var compiled *jsonschema.Schema
	if err == nil {
		url := fmt.Sprintf("https://parley.test/schema%d.json", len(sc.schemas))
		if err = sc.compiler.AddResource(url, rewriteRefs(v, componentsURL+"#/$defs/")); err == nil {
			compiled, err = sc.compiler.Compile(url)
		}
	}
	switch {
	case err != nil && uses2020 && strings.Contains(err.Error(), "json-pointer") && strings.Contains(err.Error(), "not found"):
		// A reference left unresolved: kin-openapi reports it rather than
		// drop the constraints behind it.
		return &cachedSchema{err: err}
	case err != nil, hasComponentRef(v) && !uses2020:
		if anySubschema(schema, func(s *openapi3.Schema) bool { return s.Nullable }) {
			// kin-openapi ignores nullable in a 3.1 document; its validator
			// called without EnableJSONSchema2020, as here, would not.
			return &cachedSchema{err: errors.New("nullable is not a keyword of OpenAPI 3.1")}
		}
		return &cachedSchema{legacy: true}
	}
	return &cachedSchema{compiled: compiled}
}

// violation is a failed JSON Schema validation, read as the contract's
// messages read kin-openapi's: its leaves, one per problem.
type violation struct{ err *jsonschema.ValidationError }

func (v violation) Error() string { return jsonschemaLeaves(v.err.Error()) }

// schemaJSON is v as kin-openapi marshals it, decoded into generic JSON.
func schemaJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

// rewriteRefs points the component references inside v (in place) under
// prefix, and returns v.
func rewriteRefs(v any, prefix string) any {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, componentRef) {
			v["$ref"] = prefix + strings.TrimPrefix(ref, componentRef)
		}
		for _, x := range v {
			rewriteRefs(x, prefix)
		}
	case []any:
		for _, x := range v {
			rewriteRefs(x, prefix)
		}
	}
	return v
}

// hasComponentRef tells whether v (already rewritten) refers to a component.
func hasComponentRef(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, componentsURL) {
			return true
		}
		for _, x := range v {
			if hasComponentRef(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasComponentRef(x) {
				return true
			}
		}
	}
	return false
}

func collectFormats(v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		if f, ok := v["format"].(string); ok && f != "" {
			into[f] = true
		}
		for _, x := range v {
			collectFormats(x, into)
		}
	case []any:
		for _, x := range v {
			collectFormats(x, into)
		}
	}
}

// formatAssertion checks a format as kin-openapi's 2020-12 path does: the
// contract's string formats first, then kin-openapi's registered ones; a
// format nobody defines accepts anything.
func formatAssertion(name string) func(any) error {
	return func(v any) error {
		switch v := v.(type) {
		case string:
			f, ok := stringFormats[name]
			if !ok {
				if f, ok = openapi3.SchemaStringFormats[name]; !ok {
					return nil
				}
			}
			return f.Validate(v)
		case json.Number:
			if n, err := v.Float64(); err == nil {
				return numberFormat(name, n)
			}
		case float64:
			return numberFormat(name, v)
		}
		return nil
	}
}

func numberFormat(name string, n float64) error {
	if n == math.Trunc(n) && !math.IsInf(n, 0) {
		if f, ok := openapi3.SchemaIntegerFormats[name]; ok {
			return f.Validate(int64(n))
		}
	}
	if f, ok := openapi3.SchemaNumberFormats[name]; ok {
		return f.Validate(n)
	}
	return nil
}

// has2020Keyword is kin-openapi's test for the keywords its 3.0 validator
// must not be trusted with (schemaHasJSONSchema2020FallbackGuardKeyword).
func has2020Keyword(s *openapi3.Schema) bool {
	return s.Const != nil || len(s.PrefixItems) != 0 || s.Contains != nil ||
		len(s.PatternProperties) != 0 || len(s.DependentSchemas) != 0 || s.PropertyNames != nil ||
		s.UnevaluatedItems.Has != nil || s.UnevaluatedItems.Schema != nil ||
		s.UnevaluatedProperties.Has != nil || s.UnevaluatedProperties.Schema != nil ||
		s.If != nil || s.Then != nil || s.Else != nil ||
		len(s.DependentRequired) != 0 || len(s.Defs) != 0 || s.ContentSchema != nil
}

// anySubschema tells whether schema or a schema reachable from it is one
// that pred holds for.
func anySubschema(schema *openapi3.Schema, pred func(*openapi3.Schema) bool) bool {
	found := errors.New("found")
	err := openapi3.NewSchemaRef("", schema).WalkSubtree(func(_ string, ref *openapi3.SchemaRef) error {
		if pred(ref.Value) {
			return found
		}
		return nil
	})
	return errors.Is(err, found)
}
