package sherpatest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The Go module shipping sherpa-onnx's libraries, at the version
// stt/sherpa mirrors.
const (
	libraryModule  = "github.com/k2-fsa/sherpa-onnx-go-linux"
	libraryVersion = "v1.12.20"
)

var (
	libOnce sync.Once
	libDir  string
	libErr  error
)

// LibDir is the directory of this platform's libsherpa-onnx-c-api.so and
// libonnxruntime.so in the module cache, as an operator finds it:
// `go mod download -json` the module (fetching it from the module proxy
// when it is not cached yet) and take Dir/lib/<platform>.
func LibDir(t testing.TB) string {
	t.Helper()
	libOnce.Do(func() {
		cmd := exec.Command("go", "mod", "download", "-json", libraryModule+"@"+libraryVersion)
		cmd.Dir = os.TempDir() // outside any module: no go.sum is touched
		out, err := cmd.Output()
		if err != nil {
			libErr = err
			if ee, ok := err.(*exec.ExitError); ok {
				libErr = &downloadError{err: err, stderr: string(ee.Stderr), stdout: string(out)}
			}
			return
		}
		var m struct{ Dir string }
		if err := json.Unmarshal(out, &m); err != nil {
			libErr = err
			return
		}
		libDir = filepath.Join(m.Dir, "lib", triple())
	})
	if libErr != nil {
		t.Fatalf("go mod download %s@%s: %v", libraryModule, libraryVersion, libErr)
	}
	return libDir
}

// Header is c-api.h of the module LibDir comes from.
func Header(t testing.TB) string {
	return filepath.Join(filepath.Dir(filepath.Dir(LibDir(t))), "c-api.h")
}

type downloadError struct {
	err            error
	stderr, stdout string
}

func (e *downloadError) Error() string { return e.err.Error() + ": " + e.stderr + e.stdout }

func triple() string {
	if runtime.GOARCH == "arm64" {
		return "aarch64-unknown-linux-gnu"
	}
	return "x86_64-unknown-linux-gnu"
}
