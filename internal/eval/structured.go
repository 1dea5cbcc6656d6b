package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// ErrNoLLM is wrapped by the judge's and the generator's errors when no
// language model is configured; its text names the setting.
var ErrNoLLM = errors.New("set --llm-base-url (PARLEY_LLM_BASE_URL)")

// maxEchoedAnswer bounds how much of a malformed answer is shown back to
// the model when it is asked again: enough to see its mistake, not a
// runaway answer's whole length.
const maxEchoedAnswer = 20000

// askStructured sends req, whose ResponseFormat names a JSON schema, and
// decodes the answer with parse. An answer parse refuses is shown to the
// model with what was wrong and the request sent once more; if that answer
// is refused too, the error is a *malformedError with parse's reason.
// Errors of the model itself (and ctx's) are returned wrapped, not asked
// again: the client has already retried what is worth retrying.
//
// Compatible servers that do not enforce the schema are why the answer is
// checked here at all, and why its text may arrive in a Markdown code
// fence, which is taken off before parsing.
func askStructured[T any](ctx context.Context, c llm.Client, req llm.Request, parse func(doc string) (T, error)) (T, error) {
	var zero T
	for try := 0; ; try++ {
		res, err := c.Stream(ctx, req, nil)
		if err != nil {
			return zero, fmt.Errorf("the model did not answer: %w", err)
		}
		value, err := parse(unfence(res.Text))
		if err == nil {
			return value, nil
		}
		reason := err.Error()
		if res.FinishReason == "length" {
			reason = "the answer was cut off at the token limit: " + reason
		}
		if try == 1 {
			return zero, &malformedError{reason: reason}
		}
		msgs := append([]llm.Message(nil), req.Messages...)
		if strings.TrimSpace(res.Text) != "" {
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: shorten(res.Text, maxEchoedAnswer)})
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "Your answer was not valid: " + reason +
			". Answer again with only a JSON object that follows the response schema exactly."})
		req.Messages = msgs
	}
}

// malformedError is an answer refused twice; reason says what was wrong
// with the second.
type malformedError struct{ reason string }

func (e *malformedError) Error() string { return e.reason }

// unfence returns text trimmed of spaces and, when it is wrapped in a
// Markdown code fence (```json ... ```), of the fence.
func unfence(text string) string {
	s := strings.TrimSpace(text)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := s[3 : len(s)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return s
	}
	if lang := strings.TrimSpace(body[:nl]); lang != "" && lang != "json" && lang != "JSON" {
		return s
	}
	return strings.TrimSpace(body[nl+1:])
}

// shorten returns s cut to at most n characters (code points), ending in
// "…" when something was cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// jsonObject decodes doc as one JSON object, keeping its values undecoded.
// what names doc in the error. A key given twice in any of its objects is
// refused as JSON that does not parse: which of them the model meant is
// anyone's guess.
func jsonObject(doc, what string) (map[string]json.RawMessage, error) {
	if doc == "" {
		return nil, fmt.Errorf("%s is empty", what)
	}
	var dup *opt.DecodeError
	if errors.As(opt.CheckDuplicateKeys([]byte(doc)), &dup) {
		names := make([]string, len(dup.Fields))
		for i, f := range dup.Fields {
			names[i] = strconv.Quote(f.Name)
		}
		return nil, fmt.Errorf("%s gives a key more than once: %s", what, strings.Join(names, ", "))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &fields); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, fmt.Errorf("%s is JSON but not an object", what)
		}
		return nil, fmt.Errorf("%s is not JSON: %v", what, err)
	}
	if fields == nil {
		return nil, fmt.Errorf("%s is JSON but not an object", what)
	}
	return fields, nil
}

// exactFields checks that fields has every name and nothing else; at
// prefixes the names in the error ("tests[2]."), or is "" at the top.
func exactFields(fields map[string]json.RawMessage, at string, names ...string) error {
	for _, n := range names {
		if _, ok := fields[n]; !ok {
			return fmt.Errorf("missing %q", at+n)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(names, k) {
			return fmt.Errorf("unexpected field %q", at+k)
		}
	}
	return nil
}

// jsonString decodes fields[name] as a string that is not blank, trimmed.
func jsonString(fields map[string]json.RawMessage, at, name string) (string, error) {
	var s *string
	if err := json.Unmarshal(fields[name], &s); err != nil || s == nil {
		return "", fmt.Errorf("%q is not a string", at+name)
	}
	v := strings.TrimSpace(*s)
	if v == "" {
		return "", fmt.Errorf("%q is empty", at+name)
	}
	return v, nil
}
