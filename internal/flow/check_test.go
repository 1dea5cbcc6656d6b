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
