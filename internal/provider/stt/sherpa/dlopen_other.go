//go:build !(linux && (amd64 || arm64)) || nosherpa

package sherpa

// openAPI cannot load anything in this build.
func openAPI(string) (api, error) { return api{}, errUnsupported }
