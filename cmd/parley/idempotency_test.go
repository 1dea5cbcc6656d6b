package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// A client whose connection dies after POST /calls committed retries with
// the same Idempotency-Key and gets the committed call, not a second one:
// the server is SIGKILLed between the commit and the answer
// (PARLEY_TEST_KILL_AFTER_COMMIT), restarted on the same database, and
// asked again. On SQLite, and on PostgreSQL when PARLEY_TEST_DATABASE_URL
// is set.
func TestRetryAfterCrashReturnsTheCommittedCall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := build(t)
	stores := map[string][]string{"sqlite": {"PARLEY_DATA_DIR=" + t.TempDir()}}
	if url := os.Getenv("PARLEY_TEST_DATABASE_URL"); url != "" {
		stores["postgres"] = []string{"PARLEY_DATA_DIR=" + t.TempDir(), "PARLEY_SECRET_KEY=" + strings.Repeat("ab", 32),
			"PARLEY_DATABASE_URL=" + createSchema(t, url, fmt.Sprintf("idem_%d", time.Now().UnixNano()))}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but PARLEY_TEST_DATABASE_URL is unset")
	}
	for name, env := range stores {
		t.Run(name, func(t *testing.T) {
			dying := startServer(t, bin, append(env, "PARLEY_TEST_KILL_AFTER_COMMIT=1"))
			key := dying.key
			agent := dying.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P"})["data"].(map[string]any)
			body := fmt.Sprintf(`{"agentId":%q,"toNumber":"+14155550101","fromNumber":"+14155550100"}`, agent["id"])
			if code, _, err := postKeyed(dying.addr, key, "crash-1", body); err == nil {
				t.Fatalf("the server answered %d instead of dying after the commit", code.status)
			}
			<-dying.eof // the process is gone

			srv := startServer(t, bin, env)
			calls := srv.calls(key)
			if len(calls) != 1 {
				t.Fatalf("%d calls committed before the crash, want 1", len(calls))
			}
			code, replayed, err := postKeyed(srv.addr, key, "crash-1", body)
			if err != nil || code.status != 201 || replayed != "true" {
				t.Fatalf("retry after the restart: %v %v (replayed %q)", code, err, replayed)
			}
			if _, ok := calls[code.id]; !ok {
				t.Errorf("the retry answered call %s, not the one committed (%v)", code.id, calls)
			}
			if n := len(srv.calls(key)); n != 1 {
				t.Errorf("%d calls after the retry, want 1", n)
			}
		})
	}
}

type created struct {
	status int
	id     string
}

// postKeyed sends POST /v1/calls with an Idempotency-Key and returns the
// answer's status and call id, and its Idempotent-Replayed header.
func postKeyed(addr, apiKey, idemKey, body string) (created, string, error) {
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/calls", strings.NewReader(body))
	req.Header.Set("x-api-key", apiKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idemKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return created{}, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return created{status: resp.StatusCode}, "", err
	}
	var m struct {
		Data struct{ ID string } `json:"data"`
	}
	json.NewDecoder(bytes.NewReader(b)).Decode(&m)
	return created{resp.StatusCode, m.Data.ID}, resp.Header.Get("Idempotent-Replayed"), nil
}
