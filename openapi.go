// Package parley holds what belongs to the repository as a whole: the
// OpenAPI document of the /v1 interface, embedded so the binary serves the
// same contract the tests check it against.
package parley

import _ "embed"

// OpenAPI is openapi.yaml, the OpenAPI 3.1 description of every /v1 endpoint.
//
//go:embed openapi.yaml
var OpenAPI []byte
