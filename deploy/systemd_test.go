package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// unit is a systemd unit file: each section's keys, each with its values
// in order (a key may be given more than once).
type unit map[string]map[string][]string

func parseUnit(t *testing.T, text string) unit {
	t.Helper()
	u := unit{}
	section := ""
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case section == "":
			t.Fatalf("line %d: %q outside a section", i+1, line)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("line %d: %q is not key=value", i+1, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// one is the value of a key given once.
func (u unit) one(t *testing.T, section, key string) string {
	t.Helper()
	v := u[section][key]
	if len(v) != 1 {
		t.Fatalf("[%s] %s is given %d times, want once", section, key, len(v))
	}
	return v[0]
}

// flagDefault is a flag's default in README.md's table of flags.
func flagDefault(t *testing.T, readme, flag string) string {
	t.Helper()
	m := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(flag) + "` \\| `[A-Z_]+` \\| `([^`]*)` \\|").FindStringSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md's table has no default for %s", flag)
	}
	return m[1]
}

// TestSystemdUnit checks deploy/parley.service against what the docs ask
// of it: parley serve as a user of its own, its data dir made by systemd
// and writable under a read-only system, the file-descriptor limit
// docs/operations.md asks for, a stop that waits out the drain
// (--call-drain and --post-call-budget, as README.md defaults them) before
// systemd kills, and an environment file whose example sets only
// variables README.md documents. systemd-analyze verifies it where
// systemd is installed.
func TestSystemdUnit(t *testing.T) {
	text := readRepoFile(t, "deploy/parley.service")
	u := parseUnit(t, text)
	readme := readRepoFile(t, "README.md")
	ops := readRepoFile(t, "docs/operations.md")

	start := strings.Fields(u.one(t, "Service", "ExecStart"))
	if len(start) != 2 || filepath.Base(start[0]) != "parley" || !filepath.IsAbs(start[0]) || start[1] != "serve" {
		t.Fatalf("ExecStart=%v, want /path/to/parley serve", start)
	}
	if user := u.one(t, "Service", "User"); user == "root" || user == "0" {
		t.Error("runs as root")
	}

	state := u.one(t, "Service", "StateDirectory")
	dataDir := "/var/lib/" + state
	if !slices.Contains(u["Service"]["Environment"], "PARLEY_DATA_DIR="+dataDir) {
		t.Errorf("PARLEY_DATA_DIR is not the state directory %s: %v", dataDir, u["Service"]["Environment"])
	}
	if u.one(t, "Service", "ProtectSystem") == "strict" && !slices.Contains(strings.Fields(u.one(t, "Service", "ReadWritePaths")), dataDir) {
		t.Errorf("the data dir %s is read-only under ProtectSystem=strict", dataDir)
	}

	asked := regexp.MustCompile(`LimitNOFILE=(\d+)`).FindStringSubmatch(ops)
	if asked == nil {
		t.Fatal("docs/operations.md asks for no LimitNOFILE")
	}
	want, _ := strconv.Atoi(asked[1])
	if got, err := strconv.Atoi(u.one(t, "Service", "LimitNOFILE")); err != nil || got < want {
		t.Errorf("LimitNOFILE=%d; docs/operations.md asks for %d", got, want)
	}

	if s := u["Service"]["KillSignal"]; len(s) > 0 && s[0] != "SIGTERM" {
		t.Errorf("KillSignal=%s: the drain starts on SIGTERM", s[0])
	}
	stop, err := time.ParseDuration(u.one(t, "Service", "TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}
	drain, err := time.ParseDuration(flagDefault(t, readme, "--call-drain"))
	if err != nil {
		t.Fatal(err)
	}
	budget, err := time.ParseDuration(flagDefault(t, readme, "--post-call-budget"))
	if err != nil {
		t.Fatal(err)
	}
	if stop <= drain+budget {
		t.Errorf("TimeoutStopSec=%s: systemd kills Parley before its calls drain (%s) and end (%s)", stop, drain, budget)
	}

	// The environment file's example: only variables README.md documents.
	envFile := strings.TrimPrefix(u.one(t, "Service", "EnvironmentFile"), "-")
	example := readRepoFile(t, "deploy/"+filepath.Base(envFile))
	for i, line := range strings.Split(example, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "#")
		name, _, ok := strings.Cut(line, "=")
		if !ok || !regexp.MustCompile(`^PARLEY_[A-Z_]+$`).MatchString(name) {
			continue
		}
		if !strings.Contains(readme, "`"+name+"`") {
			t.Errorf("%s line %d: %s is not in README.md's table", envFile, i+1, name)
		}
	}

	// systemd's own check, with the binary where ExecStart says (here:
	// this test's, which is executable).
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: systemd's own check skipped")
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "parley.service")
	if err := os.WriteFile(path, []byte(strings.Replace(text, "ExecStart="+start[0], "ExecStart="+self, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
