package eval

import (
	"net/http"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
)

// fakeModel is the real openai client talking to a fake server on
// loopback that answers with answers, in order, one per request.
type fakeModel struct {
	client *openai.Client
	server *llmtest.Server
}

// newFakeModel answers the i-th request with answers[i] as text; a request
// beyond them fails the test.
func newFakeModel(t *testing.T, answers ...string) fakeModel {
	t.Helper()
	var mu sync.Mutex
	next := 0
	return newFakeModelScript(t, func(llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(answers) {
			t.Errorf("request %d: only %d answers scripted", next+1, len(answers))
			return llmtest.Reply{Status: http.StatusBadRequest, Message: "unexpected request"}
		}
		next++
		return llmtest.Reply{Text: []string{answers[next-1]}}
	})
}

func newFakeModelScript(t *testing.T, script func(llmtest.Request) llmtest.Reply) fakeModel {
	t.Helper()
	server := llmtest.New(t, script)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	client := openai.New(openai.Config{BaseURL: server.URL, APIKey: "sk-test-0123456789abcdef", Model: "judge-model",
		HTTPClient: &http.Client{Transport: tr}})
	return fakeModel{client: client, server: server}
}

// contents is the content of each message of a request, in order, as
// "role: content".
func contents(r llmtest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		role, _ := m["role"].(string)
		content, _ := m["content"].(string)
		out = append(out, role+": "+content)
	}
	return out
}
