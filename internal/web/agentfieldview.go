package web

import "strings"

// fieldView is one agent form input as its template draws it.
type fieldView struct {
	agentField
	// Control is the input drawn: text, textarea, url, number, bool,
	// select (an enum or a reference) or checkboxes.
	Control  string
	Value    string
	Selected map[string]bool
	Errors   []string
	Choices  []option
	// Nullable selects offer a blank choice (unset).
	Nullable bool
	// DescribedBy lists the ids of the help and error texts.
	DescribedBy string
}

// Field is f as the form shows it, with its value and errors.
func (d agentFormData) Field(f agentField) fieldView {
	v := fieldView{agentField: f, Value: d.Values.Text[f.Name], Errors: d.Errors[f.Name], Selected: map[string]bool{}}
	switch f.Kind {
	case kindText:
		v.Control = "text"
	case kindTextarea, kindJSON:
		v.Control = "textarea"
	case kindURL:
		v.Control = "url"
	case kindDateTime:
		v.Control = "datetime-local"
	case kindInt, kindFloat:
		v.Control = "number"
	case kindBool:
		v.Control, v.Nullable = "select", true
		v.Choices = []option{{"true", "Yes"}, {"false", "No"}}
	case kindEnum:
		v.Control, v.Nullable = "select", !f.Required
		for _, o := range f.Options {
			v.Choices = append(v.Choices, option{o, o})
		}
	case kindFolder, kindTrunk, kindMessaging, kindAgent:
		v.Control, v.Nullable, v.Choices = "select", !f.Required, d.Choices[f.Kind]
	case kindKnowledge, kindCases:
		v.Control, v.Choices = "checkboxes", d.Choices[f.Kind]
		for _, id := range d.Values.Lists[f.Name] {
			v.Selected[id] = true
		}
	}
	if v.Control == "select" {
		v.Selected[v.Value] = true
	}
	var ids []string
	if f.Help != "" {
		ids = append(ids, f.Name+"-help")
	}
	if len(v.Errors) > 0 {
		ids = append(ids, f.Name+"-error")
	}
	v.DescribedBy = strings.Join(ids, " ")
	return v
}

// IsJSON reports whether the input holds JSON (drawn as code).
func (v fieldView) IsJSON() bool { return v.Kind == kindJSON }
