//go:build linux && (amd64 || arm64) && !nosphinx

package sphinx

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// openAPI loads sphinxbase, then pocketsphinx (which needs it), from the
// system's library path and binds [api]'s functions.
func openAPI() (api, error) {
	base, err := purego.Dlopen(BaseLibrary, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return api{}, fmt.Errorf("dlopen %s: %w", BaseLibrary, err)
	}
	ps, err := purego.Dlopen(DecoderLibrary, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return api{}, fmt.Errorf("dlopen %s: %w", DecoderLibrary, err)
	}
	var a api
	psSyms, baseSyms := a.symbols()
	for _, lib := range []struct {
		name string
		h    uintptr
		syms map[string]any
	}{{DecoderLibrary, ps, psSyms}, {BaseLibrary, base, baseSyms}} {
		for name, fn := range lib.syms {
			addr, err := purego.Dlsym(lib.h, name)
			if err != nil {
				return api{}, fmt.Errorf("%s has no %s (not pocketsphinx 5prealpha?): %w", lib.name, name, err)
			}
			purego.RegisterFunc(fn, addr)
		}
	}
	return a, nil
}
