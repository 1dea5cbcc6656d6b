package web

import (
	"errors"
	"net/url"
	"testing"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/opt"
)

// FuzzAgentInput: any submitted form becomes either a request or field
// errors (never a panic, never another error), and always leaves the
// values to show the form again with.
func FuzzAgentInput(f *testing.F) {
	f.Add("name=Support&promptTemplate=Help&status=active&mode=single_prompt", true)
	f.Add("name=&interruptionThresholdMs=x&defaultVariables=%7B&llmTemperature=NaN", false)
	f.Add("transferRoutes=%5B%7B%22to_number%22%3A1%7D%5D&knowledgeBaseIds=nope&endCallEnabled=maybe", true)
	f.Add("runtimeConfig=%5B1%5D&name=%00&timezone=%FF", false)
	f.Fuzz(func(t *testing.T, query string, creating bool) {
		form, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		in, vals, err := agentInput(form, creating)
		if vals.Text == nil || vals.Lists == nil {
			t.Fatal("no values to show the form again with")
		}
		var (
			bad    *invalid.Error
			decode *opt.DecodeError
		)
		if err != nil {
			if !errors.As(err, &bad) && !errors.As(err, &decode) {
				t.Fatalf("not a field error: %v", err)
			}
			return
		}
		if creating && in.Mode.Set && in.Mode.Null {
			t.Fatal("a create form sent mode as null")
		}
	})
}
