package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

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

// waitEntries waits until the call's transcript holds n entries: an
// utterance's entry lands once it has played in full, so waitEntries(t, b,
// 1) waits out the greeting however slowly a loaded machine plays it.
func (b bench) waitEntries(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(b.stored(t).Transcript) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the transcript did not reach %d entries: %q", n, texts(b.stored(t)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
