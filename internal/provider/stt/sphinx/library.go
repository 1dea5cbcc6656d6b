package sphinx

import (
	"errors"
	"fmt"
	"sync"

	"github.com/parley-voice/parley/internal/provider/stt"
)

const (
	// DecoderLibrary and BaseLibrary are Debian's pocketsphinx and
	// sphinxbase (packages libpocketsphinx3 and libsphinxbase3, pulled in
	// by pocketsphinx), found through the system's library path.
	DecoderLibrary = "libpocketsphinx.so.3"
	BaseLibrary    = "libsphinxbase.so.3"
)

// library is the C API loaded into the process. It is loaded once and
// never unloaded (decoders may be alive anywhere in the process).
var library struct {
	once sync.Once
	api  *api
	err  error
}

// loadLibrary loads the libraries the first time it is called and
// returns the outcome of that load ever after. It turns the libraries'
// log off: it is process-wide (a global file pointer every decoder writes
// to), so it is set once, before any decoder exists, and never changed
// while one may be writing; failures are explained by Parley's own checks
// instead (see checkFiles).
func loadLibrary() (*api, error) {
	library.once.Do(func() {
		a, err := openAPI()
		switch {
		case errors.Is(err, errUnsupported):
			library.err = fmt.Errorf("%w: %w", stt.ErrUnavailable, err)
			return
		case err != nil:
			library.err = fmt.Errorf("%w: pocketsphinx: %w (install the %s)", stt.ErrUnavailable, err, packages)
			return
		}
		a.setLogFP(0)
		library.api = &a
	})
	return library.api, library.err
}

// errUnsupported is what openAPI answers where it cannot load libraries.
var errUnsupported = errors.New("pocketsphinx is not available in this build (linux/amd64 and linux/arm64 only, and not with -tags nosphinx)")
