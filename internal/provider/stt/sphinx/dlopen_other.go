//go:build !(linux && (amd64 || arm64)) || nosphinx

package sphinx

import "errors"

// openAPI cannot load anything in this build.
func openAPI() (api, error) {
	return api{}, errors.New("pocketsphinx is not available in this build (linux/amd64 and linux/arm64 only, and not with -tags nosphinx)")
}
