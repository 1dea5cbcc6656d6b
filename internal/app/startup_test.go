package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// startupLog serves with args until the server is up, stops it and
// returns its log lines and its "configuration" record.
func startupLog(t *testing.T, args ...string) (string, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var logs syncBuffer
	go func() {
		done <- Main(ctx, append([]string{"serve", "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--sip-addr", "127.0.0.1:0"}, args...),
			&bytes.Buffer{}, &logs, env(nil))
	}()
	waitFor(t, func() bool { return strings.Contains(logs.String(), `"msg":"serving"`) })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d:\n%s", code, logs.String())
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "configuration" {
			return logs.String(), rec
		}
	}
	t.Fatalf("no configuration line:\n%s", logs.String())
	return "", nil
}

// The startup line says what the server runs with, and never a secret.
func TestStartupLogsTheConfiguration(t *testing.T) {
	secrets := []string{"llm-secret", "url-password", "url-token", "dg-secret", "el-secret", "trunk-secret", strings.Repeat("ab", 32)}
	logs, rec := startupLog(t,
		"--llm-base-url", "https://user:url-password@llm.example/v1?token=url-token", "--llm-api-key", "llm-secret", "--llm-model", "llama3.2",
		"--stt", "deepgram", "--deepgram-api-key", "dg-secret", "--tts", "elevenlabs", "--elevenlabs-api-key", "el-secret",
		"--sip-trunk-host", "pbx.example", "--sip-trunk-password", "trunk-secret", "--secret-key", strings.Repeat("ab", 32),
		"--otel-endpoint", "http://127.0.0.1:4318", "--rtp-ports", "31400-31500", "--sip-trunk-cps", "2.5")
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("the log shows the secret %q:\n%s", s, logs)
		}
	}
	sip, _ := rec["sip"].(map[string]any)
	llm, _ := rec["llm"].(map[string]any)
	stt, _ := rec["stt"].(map[string]any)
	tts, _ := rec["tts"].(map[string]any)
	db, _ := rec["database"].(map[string]any)
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"database.engine", db["engine"], "sqlite"},
		{"dialer", rec["dialer"], "sip"},
		{"sip.public_host", sip["public_host"], "127.0.0.1"},
		{"sip.rtp_ports", sip["rtp_ports"], "31400-31500"},
		{"sip.trunk_cps", sip["trunk_cps"], "2.5 a trunk unless it sets callsPerSecond"},
		{"recordings", strings.HasSuffix(fmt.Sprint(rec["recordings"]), "/recordings"), true},
		{"sip.default_trunk", sip["default_trunk"], "pbx.example:5060/udp"},
		{"sip.default_trunk_password", sip["default_trunk_password"], "set"},
		{"llm.base_url", llm["base_url"], "https://llm.example/v1"},
		{"llm.model", llm["model"], "llama3.2"},
		{"llm.api_key", llm["api_key"], "set"},
		{"stt.engine", stt["engine"], "deepgram"},
		{"stt.model", stt["model"], "nova-3"},
		{"stt.api_key", stt["api_key"], "set"},
		{"tts.engine", tts["engine"], "elevenlabs"},
		{"tts.api_key", tts["api_key"], "set"},
		{"secret_key", rec["secret_key"], "set (--secret-key)"},
		{"otel", rec["otel"], "http://127.0.0.1:4318"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if l, _ := sip["listen"].(string); !strings.HasPrefix(l, "127.0.0.1:") || l == "127.0.0.1:0" {
		t.Errorf("sip.listen = %q, want the bound address", l)
	}
	if h, _ := rec["http"].(string); !strings.HasPrefix(h, "127.0.0.1:") || h == "127.0.0.1:0" {
		t.Errorf("http = %q, want the bound address", h)
	}

	// Offline, the line says the model is missing and which flag sets it.
	_, rec = startupLog(t)
	if rec["llm"] != noModel || !strings.Contains(noModel, "--llm-base-url") {
		t.Errorf("llm = %v", rec["llm"])
	}
	if stt, _ := rec["stt"].(map[string]any); stt["engine"] != "local" {
		t.Errorf("stt = %v", rec["stt"])
	}
	if rec["embeddings"] == nil || rec["otel"] != "off" {
		t.Errorf("embeddings %v, otel %v", rec["embeddings"], rec["otel"])
	}
}
