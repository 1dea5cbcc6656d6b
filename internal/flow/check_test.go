package flow

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/invalid"
)

func def(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func fields(def map[string]any, tools ...string) string {
	var l invalid.List
	Check(def, tools, "flowDefinition", &l)
	err := l.Err()
	if err == nil {
		return ""
	}
	var out []string
	for _, f := range err.(*invalid.Error).Fields {
		out = append(out, f.Name+": "+f.Message)
	}
	return strings.Join(out, "\n")
}

const good = `{"globalPrompt":"You are Ava.","startNodeId":"greet","nodes":[
 {"id":"greet","type":"conversation","staticText":"Hello!","edges":[{"condition":"wants to book","target":"qualify"}]},
 {"id":"qualify","type":"conversation","instruction":"Ask the age.","edges":[{"target":"age"}]},
 {"id":"age","type":"extract","variables":[{"name":"age","type":"integer","description":"the caller's age"}],
  "edges":[{"expression":"{{age}} >= 18","target":"book"},{"target":"qualify"}]},
 {"id":"book","type":"tool","tool":"book","arguments":{"age":"{{age}}"},"resultVariable":"booking","edges":[{"target":"done"}]},
 {"id":"done","type":"end","text":"Bye."},
 {"id":"human","type":"transfer","toNumber":"+15550001111","global":{"condition":"asks for a person"}}
]}`

func TestCheckShape(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"no start":       {`{"nodes":[{"id":"a","type":"end"}]}`, "flowDefinition.startNodeId: is required"},
		"bad type":       {`{"startNodeId":"a","nodes":[{"id":"a","type":"end"},{"id":"b","type":"nope"}]}`, "flowDefinition.nodes[1].type"},
		"unknown key":    {`{"startNodeId":"a","nodes":[{"id":"a","type":"end","foo":1}]}`, "flowDefinition.nodes[0].foo: is not a known key here"},
		"both":           {`{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","instruction":"x","edges":[{"target":"a","condition":"c","expression":"{{x}}"}]}]}`, "flowDefinition.nodes[0].edges[0]: may have"},
		"no instruction": {`{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","edges":[{"target":"a"}]}]}`, "flowDefinition.nodes[0]: needs an instruction"},
		"end edges":      {`{"startNodeId":"a","nodes":[{"id":"a","type":"end","edges":[{"target":"a"}]}]}`, "flowDefinition.nodes[0].edges"},
		"bad number":     {`{"startNodeId":"a","nodes":[{"id":"a","type":"transfer","toNumber":"555"}]}`, "flowDefinition.nodes[0].toNumber"},
	} {
		got := fields(def(t, tc.doc))
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: got\n%s\nwant %s", name, got, tc.want)
		}
	}
	if got := fields(def(t, good), "book"); got != "" {
		t.Errorf("good flow: %s", got)
	}
}

// Every rule between nodes, each named at its path.
func TestCheckGraph(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"start names no node": {`{"startNodeId":"x","nodes":[{"id":"a","type":"end"}]}`,
			`flowDefinition.startNodeId: names no node: "x"`},
		"edge to a missing node": {`{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","instruction":"i","edges":[{"target":"b"}]},{"id":"b","type":"end"},{"id":"c","type":"end","global":{"condition":"g"}},
			{"id":"d","type":"conversation","instruction":"i","global":{"condition":"h"},"edges":[{"target":"zz"}]}]}`,
			`flowDefinition.nodes[3].edges[0].target: names no node: "zz"`},
		"duplicate id": {`{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","instruction":"i","edges":[{"target":"b"}]},{"id":"b","type":"end"},{"id":"b","type":"end"}]}`,
			"flowDefinition.nodes[2].id: is also the id of flowDefinition.nodes[1]"},
		"unknown tool": {`{"startNodeId":"a","nodes":[{"id":"a","type":"tool","tool":"nope","edges":[{"target":"b"}]},{"id":"b","type":"end"}]}`,
			`flowDefinition.nodes[0].tool: "nope" is not a tool of this agent`},
		"end_call is not a tool node's": {`{"startNodeId":"a","nodes":[{"id":"a","type":"tool","tool":"end_call","edges":[{"target":"b"}]},{"id":"b","type":"end"}]}`,
			`flowDefinition.nodes[0].tool: "end_call" is not a tool of this agent`},
		"unknown node tool": {`{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","instruction":"i","tools":["end_call","nope"],"edges":[{"target":"b"}]},{"id":"b","type":"end"}]}`,
			`flowDefinition.nodes[0].tools[1]: "nope" is not a tool`},
		"bad expression": {`{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","instruction":"i","edges":[{"expression":"{{age}} >=","target":"b"},{"target":"b"}]},{"id":"b","type":"end"}]}`,
			"flowDefinition.nodes[0].edges[0].expression: expected an operand"},
		"unreachable": {`{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","instruction":"i","edges":[{"target":"b"}]},{"id":"b","type":"end"},{"id":"c","type":"end"}]}`,
			"flowDefinition.nodes[2]: cannot be reached from the start node"},
		"conversation dead end": {`{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","instruction":"i"}]}`,
			"flowDefinition.nodes[0].edges: a conversation node needs at least one edge"},
		"extract without an always-edge": {`{"startNodeId":"a","nodes":[{"id":"a","type":"extract","variables":[{"name":"x","type":"string","description":"d"}],"edges":[{"expression":"{{x}}","target":"b"}]},{"id":"b","type":"end"}]}`,
			"flowDefinition.nodes[0].edges: an extract node must end with an edge"},
		"always-edge not last": {`{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","instruction":"i","edges":[{"target":"b"},{"condition":"c","target":"b"}]},{"id":"b","type":"end"}]}`,
			"flowDefinition.nodes[0].edges[0]: has no condition or expression"},
		"duplicate variable": {`{"startNodeId":"a","nodes":[{"id":"a","type":"extract","variables":[{"name":"x","type":"string","description":"d"},{"name":"x","type":"number","description":"d"}],"edges":[{"target":"b"}]},{"id":"b","type":"end"}]}`,
			"flowDefinition.nodes[0].variables[1].name: is already a variable of this node"},
	} {
		got := fields(def(t, tc.doc), "book")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: got\n%s\nwant %s", name, got, tc.want)
		}
	}
}

// Several broken rules are reported at once; a custom tool of the agent
// is known.
func TestCheckReportsEveryError(t *testing.T) {
	doc := `{"startNodeId":"a","nodes":[{"id":"a","type":"conversation","instruction":"i","edges":[{"target":"zz"}]},
		{"id":"b","type":"tool","tool":"book","edges":[{"target":"a"}]},{"id":"c","type":"end"}]}`
	got := fields(def(t, doc), "book")
	for _, want := range []string{"nodes[0].edges[0].target", "nodes[1]: cannot be reached", "nodes[2]: cannot be reached"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	if strings.Contains(got, "tool") {
		t.Errorf("book is a custom tool of the agent:\n%s", got)
	}
}

// The flow Check accepts parses into what the engine runs.
func TestParse(t *testing.T) {
	f, err := Parse(def(t, good))
	if err != nil {
		t.Fatal(err)
	}
	if f.Start != "greet" || len(f.Nodes) != 6 || f.Node("age").Edges[0].Holds(map[string]any{"age": 20.0}) != true ||
		f.Node("age").Edges[0].Holds(map[string]any{"age": 12.0}) || !f.Node("age").Edges[1].Always() || len(f.Globals()) != 1 {
		t.Errorf("parsed %+v", f)
	}
	if _, err := Parse(def(t, `{"startNodeId":"x","nodes":[{"id":"a","type":"end"}]}`)); err == nil {
		t.Error("a broken flow parsed")
	}
}

// Check reads untrusted JSON: whatever the bytes, it answers without
// panicking, and what it accepts parses.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"startNodeId":"a","nodes":[{"id":"a","type":"end","edges":[{"target":"a"}]}]}`))
	f.Add([]byte(`{"startNodeId":"a","nodes":[{"id":"a","type":"tool","tool":"x","arguments":{"a":[1,{"b":null}]},"edges":[{"expression":"{{a.b}} contains 'x'","target":"a"},{"target":"a"}]}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		var l invalid.List
		Check(m, []string{"x"}, "flowDefinition", &l)
		if l.Empty() {
			if _, err := Parse(m); err != nil {
				t.Fatalf("checked but does not parse: %v", err)
			}
		}
	})
}
