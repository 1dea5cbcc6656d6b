//go:build !(linux && (amd64 || arm64)) || nosphinx

package sphinx

// openAPI cannot load anything in this build.
func openAPI() (api, error) { return api{}, errUnsupported }
