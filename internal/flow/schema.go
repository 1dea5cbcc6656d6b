package flow

import (
	"bytes"
	_ "embed"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed schema.json
var schemaJSON []byte

// SchemaURL is where the schema is served and its $id.
const SchemaURL = "https://parley.dev/v1/flow-schema.json"

// Schema is the flow format's JSON Schema, the document GET
// /v1/flow-schema.json serves and the validator compiles: one file, so
// what users read is what their flows are checked against.
func Schema() []byte { return bytes.Clone(schemaJSON) }

var compiled = sync.OnceValue(func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		panic("flow: schema.json does not parse: " + err.Error())
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		panic("flow: schema.json: " + err.Error())
	}
	return c.MustCompile(SchemaURL)
})
