// Package screenshots keeps the README's screenshots, docs/screenshots/*.png,
// which the browser tests take. A test run leaves them alone, so running the
// tests does not dirty the tree: they are written when
// PARLEY_UPDATE_SCREENSHOTS=1, or when one is missing.
package screenshots

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// UpdateEnv names the environment variable that has every screenshot
// written again.
const UpdateEnv = "PARLEY_UPDATE_SCREENSHOTS"

// Save writes png as docs/screenshots/name.png of the module the test runs
// in, when asked to (UpdateEnv=1) or when there is none yet.
func Save(t testing.TB, name string, png []byte) {
	t.Helper()
	dir, err := docsDir()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if os.Getenv(UpdateEnv) != "1" {
		if _, err := os.Stat(path); err == nil {
			return
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// docsDir is docs/screenshots beside the go.mod above the working
// directory (a test runs in its package's directory).
func docsDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("screenshots: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "docs", "screenshots"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("screenshots: no go.mod above the working directory")
		}
		dir = parent
	}
}
