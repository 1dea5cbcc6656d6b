package main

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// parley version reads the binary's own build info: the main module's
// version, the VCS revision when the build stamped one (it is then this
// checkout's HEAD), the Go release; a version set with -ldflags wins.
func TestVersionFromBuildInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := build(t)
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	line := versionOf(t, bin)
	want := "parley " + info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			want += " revision " + s.Value
			head, err := exec.Command("git", "rev-parse", "HEAD").Output()
			if err == nil && strings.TrimSpace(string(head)) != s.Value {
				t.Errorf("the stamped revision %s is not HEAD %s", s.Value, head)
			}
		}
	}
	if !strings.HasPrefix(line, want) || !strings.HasSuffix(line, " "+info.GoVersion) {
		t.Errorf("parley version = %q, want %q ... %s", line, want, info.GoVersion)
	}

	tagged := filepath.Join(t.TempDir(), "parley")
	cmd := exec.Command("go", "build", "-ldflags", "-X github.com/parley-voice/parley/internal/app.Version=v9.8.7-test", "-o", tagged, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as build: the compiled packages are reused
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags: %v\n%s", err, out)
	}
	if line := versionOf(t, tagged); !strings.HasPrefix(line, "parley v9.8.7-test ") {
		t.Errorf("with -ldflags: parley version = %q, want parley v9.8.7-test ...", line)
	}
}

func versionOf(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	if strings.Count(string(out), "\n") != 1 {
		t.Errorf("parley version printed %q, want one line", out)
	}
	return strings.TrimSpace(string(out))
}
