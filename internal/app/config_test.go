package app

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnvTwins(t *testing.T) {
	var c Config
	fs := newFlagSet("serve", &bytes.Buffer{})
	serveFlags(fs, &c)
	err := parse(fs, []string{"--addr", "127.0.0.1:9"}, env(map[string]string{
		"PARLEY_ADDR": "0.0.0.0:1", "PARLEY_DATA_DIR": "/tmp/x", "PARLEY_MAX_CONCURRENT_CALLS": "4", "PARLEY_RATE_LIMIT": "2.5",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9" || c.DataDir != "/tmp/x" || c.MaxConcurrentCalls != 4 || c.RateLimit != 2.5 {
		t.Errorf("config = %+v (flag must win over env, env over default)", c)
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(EnvName(f.Name), "PARLEY_") {
			t.Errorf("flag %s has no env twin", f.Name)
		}
	})
	if err := parse(newServeFlags(), nil, env(map[string]string{"PARLEY_MAX_CONCURRENT_CALLS": "many"})); err == nil {
		t.Error("a malformed env value was accepted")
	}
}

func newServeFlags() *flag.FlagSet {
	var c Config
	fs := newFlagSet("serve", &bytes.Buffer{})
	serveFlags(fs, &c)
	return fs
}

func TestKeysCreatePrintsOnlyTheKey(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"keys", "create", "--org", "acme", "--data-dir", dir}, &out, &errOut, env(nil))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !regexp.MustCompile(`^pk_live_[0-9A-Za-z]{43}\n$`).MatchString(out.String()) {
		t.Fatalf("stdout = %q, want the key alone on one line", out.String())
	}
	// The same organization gets a second, different key.
	var out2 bytes.Buffer
	if code := Main(context.Background(), []string{"keys", "create", "--org", "acme"}, &out2, &errOut, env(map[string]string{"PARLEY_DATA_DIR": dir})); code != 0 || out2.String() == out.String() {
		t.Fatalf("second key: exit %d %q", code, out2.String())
	}
	var list bytes.Buffer
	if code := Main(context.Background(), []string{"keys", "list", "--org", "acme", "--data-dir", dir}, &list, &errOut, env(nil)); code != 0 || strings.Count(list.String(), "pk_live_") != 2 {
		t.Errorf("keys list: exit %d\n%s", code, list.String())
	}
	if strings.Contains(list.String(), strings.TrimSpace(out.String())) {
		t.Error("keys list shows a whole secret")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"bogus"}, {"keys"}, {"keys", "create"}, {"serve", "--nope"}, {"serve", "extra"}, {"keys", "revoke", "--org", "a"}} {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), args, &out, &errOut, env(nil)); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errOut.String())
		}
	}
	var out bytes.Buffer
	if code := Main(context.Background(), []string{"version"}, &out, &bytes.Buffer{}, env(nil)); code != 0 || !strings.HasPrefix(out.String(), "parley ") {
		t.Errorf("version: %d %q", code, out.String())
	}
	var errOut bytes.Buffer
	if code := Main(context.Background(), []string{"serve", "--max-concurrent-calls", "0", "--data-dir", t.TempDir()}, &out, &errOut, env(nil)); code != 1 || !strings.Contains(errOut.String(), "max-concurrent-calls") {
		t.Errorf("bad config: exit %d %q", code, errOut.String())
	}
}

func TestMigrateThenServeAndStop(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), []string{"migrate", "--data-dir", dir}, &out, &errOut, env(nil)); code != 0 {
		t.Fatalf("migrate: exit %d %s", code, errOut.String())
	}
	if _, err := filepath.Glob(filepath.Join(dir, "parley.db")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var serveErr syncBuffer
	go func() {
		done <- Main(ctx, []string{"serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--sip-addr", "127.0.0.1:0"}, &bytes.Buffer{}, &serveErr, env(nil))
	}()
	waitFor(t, func() bool { return strings.Contains(serveErr.String(), `"msg":"serving"`) })
	if !regexp.MustCompile(`(?m)^pk_live_\S+$`).MatchString(serveErr.String()) {
		t.Errorf("first start printed no key:\n%s", serveErr.String())
	}
	cancel() // what SIGTERM does through signal.NotifyContext
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d:\n%s", code, serveErr.String())
	}
	if !strings.Contains(serveErr.String(), `"msg":"stopped"`) {
		t.Errorf("no clean stop:\n%s", serveErr.String())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSpeechEngineSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error; "" = accepted
	}{
		{[]string{"--stt", "whisper"}, "--stt must be local, deepgram, openai or sherpa"},
		{[]string{"--tts", "polly"}, "--tts must be local, openai or elevenlabs"},
		{[]string{"--stt", "deepgram"}, "--stt deepgram needs --deepgram-api-key"},
		{[]string{"--tts", "elevenlabs"}, "--tts elevenlabs needs --elevenlabs-api-key"},
		{[]string{"--tts", "openai"}, "--tts openai needs a key for OpenAI's API (https://api.openai.com/v1): set --tts-api-key, --openai-api-key or --llm-api-key"},
		{[]string{"--stt", "openai", "--openai-api-key", "k", "--openai-base-url", "ftp://x"}, "--openai-base-url must be an http(s) URL"},
		{[]string{"--stt", "deepgram", "--deepgram-api-key", "k", "--tts", "elevenlabs", "--elevenlabs-api-key", "k"}, ""},
		{[]string{"--stt", "openai", "--tts", "openai", "--llm-api-key", "k"}, ""},
		{[]string{"--otel-endpoint", "127.0.0.1:4318"}, "--otel-endpoint must be an http(s) URL"},
		{[]string{"--otel-endpoint", "http://127.0.0.1:4318"}, ""},
	} {
		var c Config
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		serveFlags(fs, &c)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := c.check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestSIPCodecsFlag(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  []string
		err   string
	}{
		{"", nil, "at least one codec"},
		{"G722,PCMU,PCMA", []string{"G722", "PCMU", "PCMA"}, ""},
		{" pcmu , g722", []string{"pcmu", "g722"}, ""},
		{"PCMU,opus", nil, `codec "opus" is not supported`},
	} {
		c := Config{SIPCodecs: tc.value}
		if tc.want != nil && strings.Join(c.sipCodecs(), ",") != strings.Join(tc.want, ",") {
			t.Errorf("%q: codecs %q, want %q", tc.value, c.sipCodecs(), tc.want)
		}
		// --max-concurrent-calls 0 fails the config either way, so serve
		// never starts; the codecs' error is reported beside it or not.
		var out, errOut bytes.Buffer
		code := Main(context.Background(), []string{"serve", "--sip-codecs", tc.value, "--sip-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--max-concurrent-calls", "0"}, &out, &errOut, env(nil))
		hasCodecErr := strings.Contains(errOut.String(), "--sip-codecs")
		if code != 1 || hasCodecErr != (tc.err != "") || !strings.Contains(errOut.String(), tc.err) {
			t.Errorf("--sip-codecs %q: exit %d, stderr %q; want the error %q", tc.value, code, errOut.String(), tc.err)
		}
	}
}

func TestSIPInviteExemptFlag(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  string // the prefixes, comma-separated
		err   string
	}{
		{"", "", ""},
		{"203.0.113.7", "203.0.113.7/32", ""},
		{" 198.51.100.0/24 , 2001:db8::/32,::ffff:192.0.2.1", "198.51.100.0/24,2001:db8::/32,192.0.2.1/32", ""},
		{"198.51.100.9/24", "198.51.100.0/24", ""},
		{"sbc.example.com", "", `"sbc.example.com" is neither an address nor a CIDR`},
	} {
		c := Config{SIPInviteExempt: tc.value}
		got, err := c.sipInviteExempt()
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if strings.Join(s, ",") != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: %v, %v; want %q, error %q", tc.value, s, err, tc.want, tc.err)
		}
		// A bad list fails the serve configuration, by the flag's name.
		var out, errOut bytes.Buffer
		code := Main(context.Background(), []string{"serve", "--sip-invite-exempt", tc.value, "--sip-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--max-concurrent-calls", "0"}, &out, &errOut, env(nil))
		if code != 1 || strings.Contains(errOut.String(), "--sip-invite-exempt") != (tc.err != "") {
			t.Errorf("--sip-invite-exempt %q: exit %d, stderr %q", tc.value, code, errOut.String())
		}
	}
}
