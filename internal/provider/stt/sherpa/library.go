package sherpa

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/parley-voice/parley/internal/provider/stt"
)

const (
	// LayoutVersion is the sherpa-onnx release whose C structs capi.go
	// mirrors. A library of another version is refused: its structs may
	// differ, and a config read at the wrong offsets corrupts memory.
	LayoutVersion = "1.12.20"
	// LibraryModule and LibraryModuleVersion name the Go module that ships
	// the shared libraries for Linux (Parley uses only its .so files, not
	// its cgo package).
	LibraryModule        = "github.com/k2-fsa/sherpa-onnx-go-linux"
	LibraryModuleVersion = "v" + LayoutVersion

	// APILibrary is sherpa-onnx's C API; it needs RuntimeLibrary beside it.
	APILibrary     = "libsherpa-onnx-c-api.so"
	RuntimeLibrary = "libonnxruntime.so"
)

// ErrNoLibrary means the shared libraries are not where they were looked
// for. It wraps stt.ErrUnavailable.
var ErrNoLibrary = fmt.Errorf("%w: sherpa-onnx libraries not found", stt.ErrUnavailable)

// Library is sherpa-onnx's C API loaded into the process. Libraries are
// never unloaded: a loaded library stays for the process's life (dlclose
// of onnxruntime while its threads idle is not safe), so loading the same
// directory twice returns the same Library.
type Library struct {
	dir     string
	version string
	api     api
}

// Dir is the directory the libraries were loaded from.
func (l *Library) Dir() string { return l.dir }

// Version is the library's own version string (SherpaOnnxGetVersionStr).
func (l *Library) Version() string { return l.version }

var (
	loadedMu sync.Mutex
	loaded   = map[string]*Library{}
)

// LoadLibrary finds the libraries (in dir, or when dir is "" in
// [SearchDirs]) and loads them, refusing a version other than
// [LayoutVersion].
func LoadLibrary(dir string) (*Library, error) {
	dir, err := FindLibraryDir(dir)
	if err != nil {
		return nil, err
	}
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if l, ok := loaded[dir]; ok {
		return l, nil
	}
	a, err := openAPI(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: load %s: %w", stt.ErrUnavailable, filepath.Join(dir, APILibrary), err)
	}
	l := &Library{dir: dir, version: a.version(), api: a}
	if l.version != LayoutVersion {
		return nil, fmt.Errorf("%w: %s is sherpa-onnx %q; Parley mirrors the C structs of %s and needs that version (%s@%s)",
			stt.ErrUnavailable, filepath.Join(dir, APILibrary), l.version, LayoutVersion, LibraryModule, LibraryModuleVersion)
	}
	loaded[dir] = l
	return l, nil
}

// FindLibraryDir returns dir if it holds both libraries, or when dir is ""
// the first of [SearchDirs] that does. The error wraps [ErrNoLibrary] and
// names the places looked at and how to get the files.
func FindLibraryDir(dir string) (string, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %w", ErrNoLibrary, dir, err)
		}
		if missing := missingLibraries(abs); missing != "" {
			return "", fmt.Errorf("%w: no %s in %s (%s)", ErrNoLibrary, missing, abs, howToGet())
		}
		return abs, nil
	}
	dirs := SearchDirs()
	for _, d := range dirs {
		if missingLibraries(d) == "" {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: no %s and %s in any of %s (%s)", ErrNoLibrary, APILibrary, RuntimeLibrary,
		strings.Join(dirs, ", "), howToGet())
}

func howToGet() string {
	return fmt.Sprintf("get them with `go mod download -json %s@%s` (directory Dir/lib/%s) or from sherpa-onnx's %s release tarball",
		LibraryModule, LibraryModuleVersion, platformTriple(), LayoutVersion)
}

// missingLibraries names the first library not in dir, "" when both are.
func missingLibraries(dir string) string {
	for _, name := range []string{APILibrary, RuntimeLibrary} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
			return name
		}
	}
	return ""
}

// SearchDirs are where the libraries are looked for when no directory is
// given, in order: beside the executable (and its lib/ and ../lib/),
// the system's library directories, and the Go module cache's copy of
// [LibraryModule] (GOMODCACHE, else GOPATH/pkg/mod, else ~/go/pkg/mod).
func SearchDirs() []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		d := filepath.Dir(exe)
		dirs = append(dirs, d, filepath.Join(d, "lib"), filepath.Join(filepath.Dir(d), "lib"))
	}
	dirs = append(dirs, "/usr/local/lib", "/usr/lib", "/usr/lib/"+multiarch())
	if cache := moduleCache(); cache != "" {
		dirs = append(dirs, ModuleLibDir(cache))
	}
	return dirs
}

// ModuleLibDir is where [LibraryModule] keeps this platform's libraries
// inside the module cache at cache.
func ModuleLibDir(cache string) string {
	return filepath.Join(cache, filepath.FromSlash(LibraryModule)+"@"+LibraryModuleVersion, "lib", platformTriple())
}

// moduleCache is Go's module cache as `go env GOMODCACHE` would answer,
// without running go (a server need not have it).
func moduleCache() string {
	if c := os.Getenv("GOMODCACHE"); c != "" {
		return c
	}
	if p := os.Getenv("GOPATH"); p != "" {
		return filepath.Join(filepath.SplitList(p)[0], "pkg", "mod")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// platformTriple names the module's library directory for this machine.
func platformTriple() string {
	switch runtime.GOARCH {
	case "arm64":
		return "aarch64-unknown-linux-gnu"
	case "arm":
		return "arm-unknown-linux-gnueabihf"
	}
	return "x86_64-unknown-linux-gnu"
}

func multiarch() string {
	if runtime.GOARCH == "arm64" {
		return "aarch64-linux-gnu"
	}
	return "x86_64-linux-gnu"
}

// errUnsupported is what openAPI answers on platforms without dlopen
// support here (or built with -tags nosherpa).
var errUnsupported = errors.New("sherpa-onnx is not available in this build (linux/amd64 and linux/arm64 only, and not with -tags nosherpa)")
