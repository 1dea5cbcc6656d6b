package sherpa

// api is the part of sherpa-onnx's C API Parley calls: the streaming
// ("online") recognizer. Handles are the library's opaque pointers, kept
// as uintptr: Go never reads through them.
type api struct {
	versionStr        func() string // SherpaOnnxGetVersionStr (static storage; copied)
	createRecognizer  func(*recognizerConfig) uintptr
	destroyRecognizer func(recognizer uintptr)
	createStream      func(recognizer uintptr) uintptr
	destroyStream     func(stream uintptr)
	acceptWaveform    func(stream uintptr, rate int32, samples *float32, n int32)
	isReady           func(recognizer, stream uintptr) int32
	decode            func(recognizer, stream uintptr)
	result            func(recognizer, stream uintptr) *recognizerResult
	destroyResult     func(*recognizerResult)
	inputFinished     func(stream uintptr)
}

func (a api) version() string { return a.versionStr() }

// symbols binds each api field to its C function.
func (a *api) symbols() map[string]any {
	return map[string]any{
		"SherpaOnnxGetVersionStr":                 &a.versionStr,
		"SherpaOnnxCreateOnlineRecognizer":        &a.createRecognizer,
		"SherpaOnnxDestroyOnlineRecognizer":       &a.destroyRecognizer,
		"SherpaOnnxCreateOnlineStream":            &a.createStream,
		"SherpaOnnxDestroyOnlineStream":           &a.destroyStream,
		"SherpaOnnxOnlineStreamAcceptWaveform":    &a.acceptWaveform,
		"SherpaOnnxIsOnlineStreamReady":           &a.isReady,
		"SherpaOnnxDecodeOnlineStream":            &a.decode,
		"SherpaOnnxGetOnlineStreamResult":         &a.result,
		"SherpaOnnxDestroyOnlineRecognizerResult": &a.destroyResult,
		"SherpaOnnxOnlineStreamInputFinished":     &a.inputFinished,
	}
}
