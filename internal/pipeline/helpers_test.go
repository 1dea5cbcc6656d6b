package pipeline

import (
	"fmt"
	"os"
	"sort"
	"strings"

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
