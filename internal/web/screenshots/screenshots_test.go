package screenshots

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSaveWritesOnlyWhenAskedOrMissing runs Save in a module of its own:
// a missing screenshot is written, an existing one is kept, and with
// UpdateEnv=1 it is written again.
func TestSaveWritesOnlyWhenAskedOrMissing(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "internal", "web")
	shots := filepath.Join(root, "docs", "screenshots")
	for _, dir := range []string{pkg, shots} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	path := filepath.Join(shots, "page.png")
	got := func() string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Setenv(UpdateEnv, "")
	Save(t, "page", []byte("first"))
	if got() != "first" {
		t.Fatalf("a missing screenshot was not written: %q", got())
	}
	Save(t, "page", []byte("second"))
	if got() != "first" {
		t.Fatalf("a test run rewrote an existing screenshot: %q", got())
	}
	t.Setenv(UpdateEnv, "1")
	Save(t, "page", []byte("third"))
	if got() != "third" {
		t.Fatalf("%s=1 did not write the screenshot: %q", UpdateEnv, got())
	}
}
