//go:build linux && (amd64 || arm64) && !nosherpa

package sherpa

import (
	"fmt"
	"path/filepath"

	"github.com/ebitengine/purego"
)

// openAPI loads onnxruntime, then sherpa-onnx's C API, from dir and binds
// [api]'s functions. onnxruntime goes first and global, so the C API finds
// it whatever its RPATH says.
func openAPI(dir string) (api, error) {
	if _, err := purego.Dlopen(filepath.Join(dir, RuntimeLibrary), purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
		return api{}, fmt.Errorf("dlopen %s: %w", RuntimeLibrary, err)
	}
	h, err := purego.Dlopen(filepath.Join(dir, APILibrary), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return api{}, fmt.Errorf("dlopen %s: %w", APILibrary, err)
	}
	var a api
	for name, fn := range a.symbols() {
		addr, err := purego.Dlsym(h, name)
		if err != nil {
			return api{}, fmt.Errorf("%s has no %s (not sherpa-onnx %s?): %w", APILibrary, name, LayoutVersion, err)
		}
		purego.RegisterFunc(fn, addr)
	}
	return a, nil
}
