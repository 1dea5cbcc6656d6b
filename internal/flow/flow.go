package flow

import (
	"encoding/json"
	"fmt"

	"github.com/parley-voice/parley/internal/invalid"
)

// Node types.
const (
	Conversation = "conversation"
	Extract      = "extract"
	Tool         = "tool"
	Transfer     = "transfer"
	End          = "end"
)

// Flow is a parsed, checked flow definition: what the engine runs.
type Flow struct {
	GlobalPrompt string
	Start        string
	Nodes        []*Node
	byID         map[string]*Node
}

// Node is one step of the conversation.
type Node struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Name string `json:"name"`
	// Global is the condition under which any conversation node may move
	// here ("": the node is not global).
	Global *struct {
		Condition string `json:"condition"`
	} `json:"global"`
	Edges []Edge `json:"edges"`

	// conversation (Instruction also guides an extraction)
	Instruction   string   `json:"instruction"`
	StaticText    string   `json:"staticText"`
	Temperature   *float64 `json:"temperature"`
	Interruptible *bool    `json:"interruptible"`
	Knowledge     *bool    `json:"knowledge"`
	Tools         []string `json:"tools"` // nil: every tool the agent enables

	// extract
	Variables []Variable `json:"variables"`

	// tool
	Tool           string         `json:"tool"`
	Arguments      map[string]any `json:"arguments"`
	ResultVariable string         `json:"resultVariable"`

	// transfer (Text also the end node's closing line)
	ToNumber     string `json:"toNumber"`
	TransferMode string `json:"transferMode"`
	Text         string `json:"text"`
}

// Edge is a way out of a node.
type Edge struct {
	Target     string `json:"target"`
	Condition  string `json:"condition"`
	Expression string `json:"expression"`
	expr       *Expr
}

// Always reports whether the edge holds whatever was said.
func (e Edge) Always() bool { return e.Condition == "" && e.Expression == "" }

// Holds reports whether the edge's expression holds for vars (false for
// an edge without one).
func (e Edge) Holds(vars map[string]any) bool { return e.expr != nil && e.expr.Eval(vars) }

// Variable is a value an extract node fills.
type Variable struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Enum        []string `json:"enum"`
}

// GlobalCondition is the node's global condition ("" when it is not a
// global node).
func (n *Node) GlobalCondition() string {
	if n.Global == nil {
		return ""
	}
	return n.Global.Condition
}

// Silent reports whether the node runs without talking and leaves at once.
func (n *Node) Silent() bool { return n.Type == Extract || n.Type == Tool }

// Node is the node with id (nil: none).
func (f *Flow) Node(id string) *Node { return f.byID[id] }

// Globals are the global nodes, in definition order.
func (f *Flow) Globals() []*Node {
	var out []*Node
	for _, n := range f.Nodes {
		if n.Global != nil {
			out = append(out, n)
		}
	}
	return out
}

// Parse builds the runnable flow of a definition that passes Check (tool
// names aside); a definition that does not is an error (a stored flow from
// before a rule existed, say), which the engine reports rather than guess.
func Parse(def map[string]any) (*Flow, error) {
	var l invalid.List
	check(def, nil, false, "flowDefinition", &l)
	if err := l.Err(); err != nil {
		return nil, err
	}
	return decode(def)
}

// decode turns a checked definition into a Flow, parsing its
// expressions.
func decode(def map[string]any) (*Flow, error) {
	f, err := decodeShape(def)
	if err != nil {
		return nil, err
	}
	for _, n := range f.Nodes {
		for i := range n.Edges {
			if e := &n.Edges[i]; e.Expression != "" {
				if e.expr, err = ParseExpr(e.Expression); err != nil {
					return nil, fmt.Errorf("node %s edge %d: %w", n.ID, i, err)
				}
			}
		}
	}
	return f, nil
}

// decodeShape turns a definition of the schema's shape into a Flow,
// expressions not parsed yet.
func decodeShape(def map[string]any) (*Flow, error) {
	raw, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	var doc struct {
		GlobalPrompt string  `json:"globalPrompt"`
		StartNodeID  string  `json:"startNodeId"`
		Nodes        []*Node `json:"nodes"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	f := &Flow{GlobalPrompt: doc.GlobalPrompt, Start: doc.StartNodeID, Nodes: doc.Nodes, byID: map[string]*Node{}}
	for _, n := range f.Nodes {
		if _, dup := f.byID[n.ID]; !dup {
			f.byID[n.ID] = n
		}
	}
	return f, nil
}
