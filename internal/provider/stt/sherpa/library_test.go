package sherpa

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// goModCache is `go env GOMODCACHE`.
func goModCache(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func TestLibraryLoadsFromTheModuleCache(t *testing.T) {
	dir := testLibDir(t) // where `go mod download -json` says the module is
	if d := ModuleLibDir(goModCache(t)); d != dir {
		t.Errorf("ModuleLibDir = %s, the module's libraries are in %s", d, dir)
	}
	lib, err := LoadLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if lib.Version() != LayoutVersion {
		t.Errorf("version %q, want %q", lib.Version(), LayoutVersion)
	}
	if lib.Dir() != dir {
		t.Errorf("dir %q, want %q", lib.Dir(), dir)
	}
	again, err := LoadLibrary(dir)
	if err != nil || again != lib {
		t.Errorf("second load: %p %v, want the same library %p", again, err, lib)
	}
}

func TestLibraryFoundWithoutADirectory(t *testing.T) {
	dir := testLibDir(t)
	cache := goModCache(t)
	envs := []map[string]string{{"GOMODCACHE": cache}}
	if strings.HasSuffix(cache, filepath.Join("pkg", "mod")) { // the default: GOPATH/pkg/mod
		envs = append(envs, map[string]string{"GOMODCACHE": "", "GOPATH": filepath.Dir(filepath.Dir(cache))})
	}
	for _, env := range envs {
		for k, v := range env {
			t.Setenv(k, v)
		}
		dirs := SearchDirs()
		if !slices.Contains(dirs, dir) {
			t.Errorf("%v: the module cache's %s is not among %v", env, dir, dirs)
		}
		found, err := FindLibraryDir("")
		if err != nil {
			t.Fatal(err)
		}
		// The first place with both files wins: on a machine without a
		// system-wide sherpa-onnx, the module cache.
		first := dirs[slices.IndexFunc(dirs, func(d string) bool { return missingLibraries(d) == "" })]
		if found != first {
			t.Errorf("%v: found %q, want %q", env, found, first)
		}
	}
}

func TestLibraryMissing(t *testing.T) {
	empty := t.TempDir()
	_, err := LoadLibrary(empty)
	if !errors.Is(err, ErrNoLibrary) || !errors.Is(err, stt.ErrUnavailable) {
		t.Fatalf("error %v, want ErrNoLibrary", err)
	}
	for _, want := range []string{APILibrary, empty, "go mod download -json " + LibraryModule + "@" + LibraryModuleVersion} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// The C API without onnxruntime beside it.
	half := t.TempDir()
	if err := os.Symlink(filepath.Join(testLibDir(t), APILibrary), filepath.Join(half, APILibrary)); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLibrary(half); !errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), RuntimeLibrary) {
		t.Errorf("without onnxruntime: %v", err)
	}
	// Nothing anywhere: every place looked at is named.
	t.Setenv("GOMODCACHE", t.TempDir())
	if _, err := FindLibraryDir(""); err != nil {
		for _, d := range SearchDirs() {
			if !strings.Contains(err.Error(), d) {
				t.Errorf("error %q does not name %s", err, d)
			}
		}
	}
}

func TestLibraryNotALibrary(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{APILibrary, RuntimeLibrary} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("not an ELF file"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := LoadLibrary(dir)
	if !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "dlopen") {
		t.Fatalf("error %v, want a dlopen failure", err)
	}
}
