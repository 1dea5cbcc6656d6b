package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/flow"
	"github.com/parley-voice/parley/internal/invalid"
)

func TestFlowSchemaIsServedWithoutAKey(t *testing.T) {
	e := newEnv(t)
	r := e.request("GET", "/v1/flow-schema.json", nil, "")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /v1/flow-schema.json = %d %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/schema+json" {
		t.Errorf("Content-Type = %q, want application/schema+json", ct)
	}
	if !bytes.Equal(r.Body, flow.Schema()) {
		t.Error("the body is not flow.Schema()")
	}
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	if doc["$id"] != flow.SchemaURL {
		t.Errorf("$id = %v, want %s", doc["$id"], flow.SchemaURL)
	}
}

// exampleBody is the first ```json block after the heading "Complete
// example" of docs/flows.md: the body the guide tells users to POST.
func exampleBody(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile("../../docs/flows.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "\n## Complete example\n")
	if !ok {
		t.Fatal(`docs/flows.md has no heading "## Complete example"`)
	}
	_, block, ok := strings.Cut(after, "\n```json\n")
	if !ok {
		t.Fatal("docs/flows.md has no ```json block after Complete example")
	}
	body, _, ok := strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal("the example's ```json block is not closed")
	}
	return []byte(body)
}

func TestFlowGuideExampleCreatesTheAgent(t *testing.T) {
	e := newEnv(t)
	body := exampleBody(t)
	var sent map[string]any
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("the example is not JSON: %v", err)
	}
	a := e.must(http.StatusCreated, "POST", "/v1/agents", body).Data(t)
	if a["mode"] != "conversation_flow" {
		t.Errorf("mode = %v", a["mode"])
	}
	read := e.must(http.StatusOK, "GET", "/v1/agents/"+a["id"].(string), nil).Data(t)
	for _, got := range []map[string]any{a, read} {
		if !jsonEqual(got["flowDefinition"], sent["flowDefinition"]) {
			t.Errorf("flowDefinition stored as\n%v\nwant\n%v", got["flowDefinition"], sent["flowDefinition"])
		}
		tools, _ := got["customTools"].([]any)
		if len(tools) != 1 {
			t.Fatalf("customTools = %v, want book_appointment", got["customTools"])
		}
		tool := tools[0].(map[string]any)
		want := sent["customTools"].([]any)[0].(map[string]any)
		if tool["name"] != "book_appointment" || tool["webhookUrl"] != want["webhookUrl"] ||
			tool["enabled"] != true || !jsonEqual(tool["schema"], want["schema"]) || tool["agentId"] != a["id"] {
			t.Errorf("custom tool = %v", tool)
		}
	}
	list := e.must(http.StatusOK, "GET", "/v1/agents/"+a["id"].(string)+"/custom-tools", nil).List(t)
	if len(list) != 1 || list[0]["name"] != "book_appointment" {
		t.Errorf("GET custom-tools = %v", list)
	}
}

// validFlow is a flow with one node of most kinds, valid for an agent with
// the custom tool "lookup":
//
//	0 greet (conversation) -condition-> 1 ask (conversation) -always->
//	2 get (extract) -expression-> 3 book (tool) -always-> 4 done (end)
//	                -always-> 1 ask
func validFlow() map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(`{
		"globalPrompt": "Be brief.",
		"startNodeId": "greet",
		"nodes": [
			{"id": "greet", "type": "conversation", "staticText": "Hello.",
			 "edges": [{"target": "ask", "condition": "The caller wants to book"}]},
			{"id": "ask", "type": "conversation", "instruction": "Ask the caller's age.",
			 "tools": ["end_call", "lookup"], "edges": [{"target": "get"}]},
			{"id": "get", "type": "extract",
			 "variables": [{"name": "age", "type": "integer", "description": "The caller's age"}],
			 "edges": [{"target": "book", "expression": "{{age}} >= 18"}, {"target": "ask"}]},
			{"id": "book", "type": "tool", "tool": "lookup", "arguments": {"age": "{{age}}"},
			 "resultVariable": "booking", "edges": [{"target": "done"}]},
			{"id": "done", "type": "end", "text": "Booked: {{booking.reference}}."}
		]}`), &m); err != nil {
		panic(err)
	}
	return m
}

func lookupTool() []any {
	return []any{map[string]any{"name": "lookup", "webhookUrl": "https://example.com/lookup"}}
}

// node is node i of flow f, for editing.
func node(f map[string]any, i int) map[string]any {
	return f["nodes"].([]any)[i].(map[string]any)
}

func edges(f map[string]any, i int) []any { return node(f, i)["edges"].([]any) }

func edge(f map[string]any, i, j int) map[string]any { return edges(f, i)[j].(map[string]any) }

// flowCase is a broken flow: edit breaks validFlow, and want lists the
// fields the refusal must name (it may name others the break causes).
type flowCase struct {
	name string
	edit func(f map[string]any)
	want []string
}

var brokenFlows = []flowCase{
	{"unknown node type", func(f map[string]any) { node(f, 1)["type"] = "bogus" },
		[]string{"flowDefinition.nodes[1].type"}},
	{"no nodes", func(f map[string]any) { delete(f, "nodes") },
		[]string{"flowDefinition.nodes"}},
	{"unknown key in a node", func(f map[string]any) { node(f, 0)["instructions"] = "typo" },
		[]string{"flowDefinition.nodes[0].instructions"}},
	{"unknown key at the top", func(f map[string]any) { f["start"] = "greet" },
		[]string{"flowDefinition.start"}},
	{"conversation node with nothing to say", func(f map[string]any) { delete(node(f, 0), "staticText") },
		[]string{"flowDefinition.nodes[0]"}},
	{"end node with an edge", func(f map[string]any) { node(f, 4)["edges"] = []any{map[string]any{"target": "greet"}} },
		[]string{"flowDefinition.nodes[4].edges"}},
	{"transfer to a number that is not E.164", func(f map[string]any) {
		f["nodes"] = append(f["nodes"].([]any), map[string]any{"id": "human", "type": "transfer", "toNumber": "555-0100",
			"global": map[string]any{"condition": "The caller asks for a person"}})
	}, []string{"flowDefinition.nodes[5].toNumber"}},
	{"edge with condition and expression", func(f map[string]any) { edge(f, 0, 0)["expression"] = "{{age}} > 1" },
		[]string{"flowDefinition.nodes[0].edges[0]"}},
	{"no start node", func(f map[string]any) { delete(f, "startNodeId") },
		[]string{"flowDefinition.startNodeId"}},
	{"start node of nothing", func(f map[string]any) { f["startNodeId"] = "nowhere" },
		[]string{"flowDefinition.startNodeId"}},
	{"edge to a missing node", func(f map[string]any) { edge(f, 3, 0)["target"] = "nowhere" },
		[]string{"flowDefinition.nodes[3].edges[0].target"}},
	{"duplicate node id", func(f map[string]any) { node(f, 2)["id"] = "ask" },
		[]string{"flowDefinition.nodes[2].id"}},
	{"unknown tool in a tool node", func(f map[string]any) { node(f, 3)["tool"] = "nope" },
		[]string{"flowDefinition.nodes[3].tool"}},
	{"end_call in a tool node", func(f map[string]any) { node(f, 3)["tool"] = "end_call" },
		[]string{"flowDefinition.nodes[3].tool"}},
	{"unknown tool in a node's tools", func(f map[string]any) { node(f, 1)["tools"] = []any{"end_call", "nope"} },
		[]string{"flowDefinition.nodes[1].tools[1]"}},
	{"expression missing an operand", func(f map[string]any) { edge(f, 2, 0)["expression"] = "{{age}} >=" },
		[]string{"flowDefinition.nodes[2].edges[0].expression"}},
	{"unclosed variable", func(f map[string]any) { edge(f, 2, 0)["expression"] = "{{age" },
		[]string{"flowDefinition.nodes[2].edges[0].expression"}},
	{"unreachable node", func(f map[string]any) {
		f["nodes"] = append(f["nodes"].([]any), map[string]any{"id": "orphan", "type": "end"})
	}, []string{"flowDefinition.nodes[5]"}},
	{"conversation node without edges", func(f map[string]any) { delete(node(f, 1), "edges") },
		[]string{"flowDefinition.nodes[1].edges"}},
	{"conversation node with no edge", func(f map[string]any) { node(f, 1)["edges"] = []any{} },
		[]string{"flowDefinition.nodes[1].edges"}},
	{"extract node ending on an expression", func(f map[string]any) { node(f, 2)["edges"] = edges(f, 2)[:1] },
		[]string{"flowDefinition.nodes[2].edges"}},
	{"tool node ending on a condition", func(f map[string]any) { edge(f, 3, 0)["condition"] = "It worked" },
		[]string{"flowDefinition.nodes[3].edges"}},
	{"always-edge before another edge", func(f map[string]any) {
		node(f, 0)["edges"] = []any{map[string]any{"target": "ask"}, map[string]any{"target": "ask", "condition": "Later"}}
	}, []string{"flowDefinition.nodes[0].edges[0]"}},
	{"duplicate extract variable", func(f map[string]any) {
		node(f, 2)["variables"] = append(node(f, 2)["variables"].([]any),
			map[string]any{"name": "age", "type": "string", "description": "Again"})
	}, []string{"flowDefinition.nodes[2].variables[1].name"}},
	{"several errors", func(f map[string]any) {
		edge(f, 3, 0)["target"] = "nowhere"
		node(f, 1)["tools"] = []any{"nope"}
		edge(f, 2, 0)["expression"] = "{{age}} >="
		node(f, 2)["variables"] = append(node(f, 2)["variables"].([]any),
			map[string]any{"name": "age", "type": "string", "description": "Again"})
	}, []string{
		"flowDefinition.nodes[3].edges[0].target", "flowDefinition.nodes[1].tools[0]",
		"flowDefinition.nodes[2].edges[0].expression", "flowDefinition.nodes[2].variables[1].name",
	}},
}

// broken is validFlow broken by c.
func (c flowCase) broken() map[string]any {
	f := validFlow()
	c.edit(f)
	return f
}

// refused sends body and checks it is refused as validation_failed naming at
// least want; what names the case in failures.
func (e *env) refused(what, method, path string, body any, want ...string) {
	e.t.Helper()
	r := e.do(method, path, body)
	if r.Status != http.StatusBadRequest || r.ErrorCode(e.t) != "validation_failed" {
		e.t.Errorf("%s: %s %s = %d, want 400 validation_failed: %s", what, method, path, r.Status, r.Body)
		return
	}
	got := r.ErrorFields(e.t)
	for _, f := range want {
		if !slices.Contains(got, f) {
			e.t.Errorf("%s: %s %s: fields %v lack %s", what, method, path, got, f)
		}
	}
}

func flowAgent(flowDefinition any) map[string]any {
	return map[string]any{
		"name": "Flow", "promptTemplate": "You are the front desk.", "mode": "conversation_flow",
		"flowDefinition": flowDefinition, "customTools": lookupTool(),
	}
}

func TestFlowValidationOnCreate(t *testing.T) {
	e := newEnv(t)
	// The valid flow is accepted, its tool created with it.
	a := e.must(http.StatusCreated, "POST", "/v1/agents", flowAgent(validFlow())).Data(t)
	if a["mode"] != "conversation_flow" || !jsonEqual(a["flowDefinition"], validFlow()) {
		t.Fatalf("created %v", a)
	}
	for _, c := range brokenFlows {
		e.refused(c.name, "POST", "/v1/agents", flowAgent(c.broken()), c.want...)
	}
	// The tools a new agent's flow may name are those of the request.
	withoutTools := flowAgent(validFlow())
	delete(withoutTools, "customTools")
	e.refused("no customTools", "POST", "/v1/agents", withoutTools, "flowDefinition.nodes[3].tool", "flowDefinition.nodes[1].tools[1]")
	badTool := flowAgent(validFlow())
	badTool["customTools"] = []any{map[string]any{"name": "lookup", "webhookUrl": "not a url"}}
	e.refused("bad custom tool", "POST", "/v1/agents", badTool, "customTools[0].webhookUrl")
	if n := countAgents(e); n != 1 {
		t.Errorf("%d agents, want only the valid one: a refused create stored something", n)
	}

	// A flow agent may be stored without a flow while it is being built.
	noFlow := flowAgent(nil)
	delete(noFlow, "flowDefinition")
	for _, body := range []map[string]any{noFlow, flowAgent(nil)} {
		a := e.must(http.StatusCreated, "POST", "/v1/agents", body).Data(t)
		if a["mode"] != "conversation_flow" || a["flowDefinition"] != nil {
			t.Errorf("flow agent without a flow: mode %v, flow %v", a["mode"], a["flowDefinition"])
		}
	}
}

func TestFlowValidationOnUpdate(t *testing.T) {
	e := newEnv(t)
	a := e.must(http.StatusCreated, "POST", "/v1/agents", flowAgent(validFlow())).Data(t)
	path := "/v1/agents/" + a["id"].(string)
	unchanged := func(what string) {
		t.Helper()
		got := e.must(http.StatusOK, "GET", path, nil).Data(t)
		if !jsonEqual(got["flowDefinition"], validFlow()) || got["mode"] != "conversation_flow" {
			t.Errorf("%s: a refused update changed the agent: mode %v, flow %v", what, got["mode"], got["flowDefinition"])
		}
	}
	for _, c := range brokenFlows {
		e.refused(c.name, "PATCH", path, map[string]any{"flowDefinition": c.broken()}, c.want...)
		unchanged(c.name)
	}
	e.refused("mode change", "PATCH", path, map[string]any{"mode": "single_prompt"}, "mode")
	e.refused("mode sent", "PATCH", path, map[string]any{"mode": "conversation_flow", "flowDefinition": validFlow()}, "mode")
	e.refused("customTools sent", "PATCH", path, map[string]any{"customTools": lookupTool(), "flowDefinition": validFlow()}, "customTools")
	unchanged("mode or customTools")

	// The tools an update's flow may name are the agent's stored ones.
	other := validFlow()
	node(other, 3)["tool"] = "other"
	e.refused("tool not yet created", "PATCH", path, map[string]any{"flowDefinition": other}, "flowDefinition.nodes[3].tool")
	unchanged("tool not yet created")
	e.create(path+"/custom-tools", map[string]any{"name": "other", "webhookUrl": "https://example.com/other"})
	got := e.must(http.StatusOK, "PATCH", path, map[string]any{"flowDefinition": other}).Data(t)
	if !jsonEqual(got["flowDefinition"], other) {
		t.Errorf("flow after update = %v", got["flowDefinition"])
	}
	// An update without a flow leaves it alone; null clears it.
	got = e.must(http.StatusOK, "PATCH", path, map[string]any{"name": "Renamed"}).Data(t)
	if !jsonEqual(got["flowDefinition"], other) {
		t.Errorf("flow after a rename = %v", got["flowDefinition"])
	}
	got = e.must(http.StatusOK, "PATCH", path, map[string]any{"flowDefinition": nil}).Data(t)
	if got["flowDefinition"] != nil || got["mode"] != "conversation_flow" {
		t.Errorf("after clearing the flow: mode %v, flow %v", got["mode"], got["flowDefinition"])
	}
}

// A single_prompt agent's flowDefinition never runs: it is stored as given.
func TestSinglePromptFlowIsNotValidated(t *testing.T) {
	e := newEnv(t)
	junk := map[string]any{"nodes": "not a list", "startNodeId": 5, "anything": []any{1, "x"}}
	for _, mode := range []string{"", "single_prompt"} {
		body := map[string]any{"name": "Plain", "promptTemplate": "P", "flowDefinition": junk}
		if mode != "" {
			body["mode"] = mode
		}
		a := e.must(http.StatusCreated, "POST", "/v1/agents", body).Data(t)
		if a["mode"] != "single_prompt" || !jsonEqual(a["flowDefinition"], junk) {
			t.Errorf("created %v", a)
		}
		path := "/v1/agents/" + a["id"].(string)
		broken := brokenFlows[0].broken()
		got := e.must(http.StatusOK, "PATCH", path, map[string]any{"flowDefinition": broken}).Data(t)
		if !jsonEqual(got["flowDefinition"], broken) {
			t.Errorf("updated flow = %v", got["flowDefinition"])
		}
		if got := e.must(http.StatusOK, "PATCH", path, map[string]any{"flowDefinition": nil}).Data(t); got["flowDefinition"] != nil {
			t.Errorf("cleared flow = %v", got["flowDefinition"])
		}
	}
}

// Every JSON example of the guide is JSON, and every flow in it is valid.
func TestFlowGuideExamplesAreValid(t *testing.T) {
	doc, err := os.ReadFile("../../docs/flows.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "\n```json\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("docs/flows.md has no JSON example")
	}
	for i, b := range blocks {
		text, _, _ := strings.Cut(b, "\n```\n")
		var v map[string]any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Errorf("JSON block %d does not parse: %v\n%s", i+1, err, text)
			continue
		}
		if _, ok := v["nodes"]; ok {
			var l invalid.List
			flow.Check(v, nil, "flowDefinition", &l)
			if err := l.Err(); err != nil {
				t.Errorf("JSON block %d is not a valid flow: %v", i+1, err)
			}
		}
	}
}
