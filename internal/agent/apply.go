package agent

import (
	"reflect"
	"strings"
	"sync"

	"github.com/parley-voice/parley/internal/model"
)

// columns are the Input keys kept as model.Agent fields or stored apart;
// every other key names a model.AgentConfig field of the same json tag.
var columns = map[string]bool{
	"name": true, "status": true, "mode": true, "folderId": true, "sipTrunkId": true,
	"messagingConnectionId": true, "knowledgeBaseIds": true, "interruptionThresholdMs": true,
	"customTools": true,
}

// apply writes the keys present in in onto a.
func apply(a *model.Agent, in *Input) {
	if in.Name.Present() {
		a.Name = in.Name.V
	}
	if in.Status.Present() {
		a.Status = in.Status.V
	}
	if in.Mode.Present() {
		a.Mode = in.Mode.V
	}
	if in.FolderID.Set {
		a.FolderID = in.FolderID.Ptr()
	}
	if in.SIPTrunkID.Set {
		a.SIPTrunkID = in.SIPTrunkID.Ptr()
	}
	if in.MessagingConnectionID.Set {
		a.MessagingConnectionID = in.MessagingConnectionID.Ptr()
	}
	if in.InterruptionThresholdMs.Set {
		a.Config.InterruptionThresholdMs = model.DefaultInterruptionThresholdMs
		if in.InterruptionThresholdMs.Present() {
			a.Config.InterruptionThresholdMs = in.InterruptionThresholdMs.V
		}
	}
	cfg := reflect.ValueOf(&a.Config).Elem()
	src := reflect.ValueOf(in).Elem()
	for _, f := range inputFieldList() {
		if columns[f.name] {
			continue
		}
		field := src.Field(f.index)
		if !field.FieldByName("Set").Bool() {
			continue
		}
		dst := cfg.Field(configIndex()[f.name])
		if field.FieldByName("Null").Bool() {
			dst.SetZero()
			continue
		}
		v := field.FieldByName("V")
		if dst.Kind() == reflect.Pointer && v.Kind() != reflect.Pointer {
			p := reflect.New(v.Type())
			p.Elem().Set(v)
			dst.Set(p)
		} else {
			dst.Set(v)
		}
	}
}

// presence is whether an Input key was given, and whether as null.
type presence struct{ Set, Null bool }

func fieldSet(in *Input, name string) presence {
	for _, f := range inputFieldList() {
		if f.name == name {
			v := reflect.ValueOf(in).Elem().Field(f.index)
			return presence{Set: v.FieldByName("Set").Bool(), Null: v.FieldByName("Null").Bool()}
		}
	}
	panic("agent: no input field " + name)
}

type taggedField struct {
	name  string
	index int
}

var (
	inputFieldList = sync.OnceValue(func() []taggedField { return tagged(reflect.TypeFor[Input]()) })
	configIndex    = sync.OnceValue(func() map[string]int {
		m := map[string]int{}
		for _, f := range tagged(reflect.TypeFor[model.AgentConfig]()) {
			m[f.name] = f.index
		}
		// Every Input key that is not a column must land somewhere.
		for _, f := range inputFieldList() {
			if _, ok := m[f.name]; !ok && !columns[f.name] {
				panic("agent: input field " + f.name + " has no AgentConfig twin")
			}
		}
		return m
	})
)

func tagged(t reflect.Type) []taggedField {
	var out []taggedField
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, taggedField{name: name, index: i})
	}
	return out
}
