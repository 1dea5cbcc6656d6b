// Package flow owns the conversation flow format of agents in mode
// conversation_flow: its JSON Schema (schema.json, served at
// /v1/flow-schema.json), the validation of a flowDefinition against it and
// against the agent (Check), the parsed graph the engine runs (Flow), and
// the edge expressions over variables (expr.go). Running a flow on a call
// is the pipeline's; this package decides nothing at run time but which
// edge an expression takes.
package flow
