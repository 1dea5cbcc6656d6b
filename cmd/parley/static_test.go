package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// `make build TAGS="nosherpa nosphinx"` is the static binary for scratch
// and musl images: with both C library loaders left out, nothing links
// the C library dynamically (no ELF interpreter). The default build has
// one: purego loads the libraries through the system's loader.
func TestStaticBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		tags    string
		dynamic bool
	}{{"nosherpa nosphinx", false}, {"", true}} {
		bin := filepath.Join(dir, "parley")
		cmd := exec.Command("go", "build", "-trimpath", "-tags", c.tags, "-o", bin, ".") // as make build
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("CGO_ENABLED=0 go build -trimpath -tags %q: %v\n%s", c.tags, err, out)
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		interp := false
		for _, p := range f.Progs {
			interp = interp || p.Type == elf.PT_INTERP
		}
		f.Close()
		if interp != c.dynamic {
			t.Errorf("-tags %q: dynamically linked %v, want %v", c.tags, interp, c.dynamic)
		}
	}
}
