// Package sherpa owns Parley's optional neural speech-to-text (--stt
// sherpa): a streaming [stt.Recognizer] and [stt.Streamer] backed by
// sherpa-onnx's C API (libsherpa-onnx-c-api.so and libonnxruntime.so),
// loaded at run time with purego, so the parley binary still builds with
// CGO_ENABLED=0 and touches no library unless --stt sherpa is chosen.
//
// # What the operator supplies
//
// The libraries ship in the Go module [LibraryModule] at
// [LibraryModuleVersion] (lib/x86_64-unknown-linux-gnu/ and
// lib/aarch64-unknown-linux-gnu/); Parley uses only those .so files, not
// the module's cgo package. `go mod download -json
// github.com/k2-fsa/sherpa-onnx-go-linux@v1.12.20` fetches it (its "Dir"
// is the directory), or sherpa-onnx's v1.12.20 release tarball
// (sherpa-onnx-v1.12.20-linux-x64-shared.tar.bz2, lib/) has the same
// files. Without --sherpa-lib-dir they are looked for in [SearchDirs]:
// beside the executable, the system library directories and the module
// cache. Only version [LayoutVersion] is accepted: the C structs are
// mirrored in Go (capi.go, offsets asserted by the tests against the
// header), and another version's structs may differ.
//
// The model is a directory the operator downloads (no package reachable
// to Parley ships ASR weights): a streaming ("online") model exported for
// sherpa-onnx, one of the layouts of [Kind], told apart by file names and
// ONNX metadata ([DetectModel]). For English on the phone:
//
//	curl -LO https://github.com/k2-fsa/sherpa-onnx/releases/download/asr-models/sherpa-onnx-streaming-zipformer-en-2023-06-26.tar.bz2
//	tar xf sherpa-onnx-streaming-zipformer-en-2023-06-26.tar.bz2
//	parley serve --stt sherpa --sherpa-model-dir ./sherpa-onnx-streaming-zipformer-en-2023-06-26
//
// # Method
//
// One model is loaded per server ([Recognizer.Load], at start) and serves
// every call. Each utterance is a sherpa-onnx online stream: [Recognizer.Open]
// creates it when the caller starts speaking; each Write resamples the
// line's audio to the model's 16 kHz (media/audio's streaming resampler,
// so 8 kHz G.711, 16 kHz G.722 and 48 kHz legs all work; the library
// could resample too, but logs to stderr for every such stream), hands it
// over as floats, then decodes every chunk that has enough features and
// stores the text so far, which Partial returns (the adaptive end of
// turn reads it). Close appends 0.5 s of silence (a streaming model emits
// its last word only once it has audio past it), marks the input
// finished, decodes the rest and returns the text. Decoding runs on the
// goroutine that writes: the pipeline's recognizer goroutine, never the
// call's audio loop. Greedy search; endpointing is off (Parley's VAD ends
// turns). Text comes back with single spaces, and in lower case when the
// model writes capitals only.
//
// # Failures
//
// sherpa-onnx exits the process on some malformed models (a file
// onnxruntime cannot parse, metadata it expects and lacks) instead of
// returning an error, so [DetectModel] reads every model file's top level
// (it must be an ONNX model with a graph) and the metadata keys the
// library reads without a default, and the token table, and refuses the
// directory with an error naming the file. The library's own messages go
// to the process's stderr. Errors wrap stt.ErrUnavailable; a language
// other than the model's ([Config.Language], default en) is
// stt.ErrLanguage.
//
// # Limits
//
// No trained model is reachable from where Parley is developed and tested
// (Debian, npm and the Go module proxy ship no ASR weights), so recognition
// of real speech is not exercised by the tests: accuracy and speed depend
// on the model the operator brings and are measured with it
// (docs/benchmarks.md's method). What the tests do run is the real
// library, from the module cache: its version, the struct layouts against
// its header, model detection on generated ONNX files, the library's
// refusal of missing files, and whole utterances and calls through a
// generated stand-in model (sherpatest's loudness model, which hears
// "hello" for each stretch of sound), at 8, 16 and 48 kHz: loading,
// streams, chunked decoding, Partial and results go through the library.
//
// The recognizer is not [stt.Adaptable]: sherpa-onnx's hotwords (a
// transducer with modified beam search) could bias it to an agent's
// names and terms, and are not used yet.
//
// Importing purego makes a CGO_ENABLED=0 build a dynamically linked
// executable (it imports the C library's dlopen); `-tags nosherpa` leaves
// the package without a loader (--stt sherpa then reports it) and the
// binary static.
package sherpa
