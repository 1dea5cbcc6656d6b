package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/tts"
)

func testingCI() bool { return os.Getenv("CI") == "true" }

func ttsRequest(text string) tts.Request { return tts.Request{Text: text, Language: "en"} }

func fmtMap(m map[string]any) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%v", k, m[k]))
	}
	return "map[" + strings.Join(parts, " ") + "]"
}

// ended is the call as its end would record it: the stored record (the
// transcript the conversation appended) with the outcome it reported, its
// metrics as JSON gives them back (numbers float64).
func (b bench) ended(t *testing.T, out call.Outcome) model.Call {
	t.Helper()
	c := b.stored(t)
	c.Summary = out.Summary
	raw, err := json.Marshal(out.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	c.Metrics = nil
	if err := json.Unmarshal(raw, &c.Metrics); err != nil {
		t.Fatal(err)
	}
	return c
}
