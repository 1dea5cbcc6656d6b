package flow

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/parley-voice/parley/internal/invalid"
)

// System tools, as the engine names them to the model.
const (
	ToolEndCall         = "end_call"
	ToolTransfer        = "transfer_to_number"
	ToolPressDigit      = "press_digit"
	ToolSendMessage     = "send_message"
	ToolSearchKnowledge = "search_knowledge_base"
)

// NodeTools are the system tools a tool node may call; the others act
// through their own node types (end, transfer).
var NodeTools = []string{ToolPressDigit, ToolSendMessage, ToolSearchKnowledge}

var systemTools = []string{ToolEndCall, ToolTransfer, ToolPressDigit, ToolSendMessage, ToolSearchKnowledge}

// MaxHops is how many node changes one turn may make: a loop of silent
// nodes stops there.
const MaxHops = 16

// Check records in l what is wrong with def, each under its path from
// prefix ("flowDefinition.nodes[3].edges[0].target"): first the schema's
// rules (the shape), then, on a definition of the right shape, the
// graph's: a start node that exists, edges to nodes that exist, unique
// node ids, tools the agent has (customTools are its custom tools' names),
// expressions that parse, every node reachable, and no node where the
// conversation could stop without ending the call.
func Check(def map[string]any, customTools []string, prefix string, l *invalid.List) {
	check(def, customTools, true, prefix, l)
}

// check is Check; with checkTools false, tool names are not checked (a
// call runs a stored flow whose tool may since have gone: the tool node
// reports it).
func check(def map[string]any, customTools []string, checkTools bool, prefix string, l *invalid.List) {
	if !checkShape(def, prefix, l) {
		return
	}
	f, err := decodeShape(def)
	if err != nil {
		l.Add(prefix, "is not a valid flow: %v", err)
		return
	}
	checkGraph(f, customTools, checkTools, prefix, l)
}

var printer = message.NewPrinter(language.English)

// checkShape validates def against the schema; false when it breaks it.
func checkShape(def map[string]any, prefix string, l *invalid.List) bool {
	err := compiled().Validate(any(def))
	if err == nil {
		return true
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		l.Add(prefix, "%v", err)
		return false
	}
	seen := map[string]bool{}
	report := func(path, msg string) {
		if k := path + "\x00" + msg; !seen[k] {
			seen[k] = true
			l.Add(path, "%s", msg)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		path := instancePath(prefix, e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				report(path+"."+m, "is required")
			}
			return
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				report(path+"."+p, "is not a known key here")
			}
			return
		case *kind.AnyOf:
			report(path, "needs an instruction or a staticText")
			return
		case *kind.Not:
			report(path, "may have a condition or an expression, not both")
			return
		case *kind.FalseSchema:
			report(path, "is not allowed here")
			return
		case *kind.MaxItems:
			if k.Want == 0 { // an end node's edges
				report(path, "must be empty: an end node ends the call")
				return
			}
		}
		if len(e.Causes) == 0 {
			report(path, e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return false
}

// instancePath is a JSON location as the API names fields: array items
// indexed, keys dotted. Every numeric segment is an index: the schema has
// no object whose keys it checks that could be numbers.
func instancePath(prefix string, loc []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, s := range loc {
		if _, err := strconv.Atoi(s); err == nil {
			b.WriteString("[" + s + "]")
			continue
		}
		b.WriteString("." + s)
	}
	return b.String()
}

// checkGraph checks what the schema cannot: the rules between nodes.
func checkGraph(f *Flow, customTools []string, checkTools bool, prefix string, l *invalid.List) {
	node := func(i int) string { return invalid.Index(prefix+".nodes", i) }
	index := map[string]int{}
	for i, n := range f.Nodes {
		if j, dup := index[n.ID]; dup {
			l.Add(node(i)+".id", "is also the id of %s", node(j))
			continue
		}
		index[n.ID] = i
	}
	if _, ok := index[f.Start]; !ok {
		l.Add(prefix+".startNodeId", "names no node: %q", f.Start)
	}
	known := append(slices.Clone(systemTools), customTools...)
	for i, n := range f.Nodes {
		at := node(i)
		for j, e := range n.Edges {
			eat := invalid.Index(at+".edges", j)
			if _, ok := index[e.Target]; !ok {
				l.Add(eat+".target", "names no node: %q", e.Target)
			}
			if e.Expression != "" {
				if _, err := ParseExpr(e.Expression); err != nil {
					l.Add(eat+".expression", "%v", err)
				}
			}
			if e.Always() && j < len(n.Edges)-1 {
				l.Add(eat, "has no condition or expression, so it always holds: it must be the node's last edge")
			}
		}
		switch n.Type {
		case Conversation:
			if len(n.Edges) == 0 {
				l.Add(at+".edges", "a conversation node needs at least one edge: end the call with an end node")
			}
			for k, t := range n.Tools {
				if checkTools && !slices.Contains(known, t) {
					l.Add(invalid.Index(at+".tools", k), "%s", unknownTool(t, systemTools, customTools))
				}
			}
		case Extract, Tool:
			if len(n.Edges) == 0 || !n.Edges[len(n.Edges)-1].Always() {
				l.Add(at+".edges", "%s must end with an edge that has no condition or expression: it cannot talk, so the call would stop in it",
					map[string]string{Extract: "an extract node", Tool: "a tool node"}[n.Type])
			}
		}
		if checkTools && n.Type == Tool && !slices.Contains(NodeTools, n.Tool) && !slices.Contains(customTools, n.Tool) {
			l.Add(at+".tool", "%s", unknownTool(n.Tool, NodeTools, customTools))
		}
		names := map[string]bool{}
		for k, v := range n.Variables {
			if names[v.Name] {
				l.Add(invalid.Index(at+".variables", k)+".name", "is already a variable of this node")
			}
			names[v.Name] = true
		}
	}
	if _, ok := index[f.Start]; !ok {
		return // every node would be unreachable: the start is the error
	}
	for i, reached := range reachable(f, index) {
		if !reached {
			l.Add(node(i), "cannot be reached from the start node")
		}
	}
}

func unknownTool(name string, system, custom []string) string {
	msg := fmt.Sprintf("%q is not a tool of this agent: use %s", name, strings.Join(system, ", "))
	if len(custom) > 0 {
		return msg + " or one of its custom tools (" + strings.Join(custom, ", ") + ")"
	}
	return msg + " or a custom tool of the agent (none yet: create it with the agent's customTools)"
}

// reachable marks the nodes a call can get to from the start: along edges,
// and to every global node from any conversation node reached.
func reachable(f *Flow, index map[string]int) []bool {
	seen := make([]bool, len(f.Nodes))
	var queue []int
	visit := func(id string) {
		if i, ok := index[id]; ok && !seen[i] {
			seen[i] = true
			queue = append(queue, i)
		}
	}
	visit(f.Start)
	globals := false
	for len(queue) > 0 {
		n := f.Nodes[queue[0]]
		queue = queue[1:]
		for _, e := range n.Edges {
			visit(e.Target)
		}
		if n.Type == Conversation && !globals {
			globals = true
			for _, g := range f.Globals() {
				visit(g.ID)
			}
		}
	}
	// A duplicate id is reported as such, not as unreachable as well.
	for i, n := range f.Nodes {
		if index[n.ID] != i {
			seen[i] = true
		}
	}
	return seen
}
