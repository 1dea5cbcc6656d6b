// Package sherpatest owns what tests need to run stt/sherpa against the
// real sherpa-onnx library where no trained model exists: the library
// itself, from the Go module cache ([LibDir]), and model directories
// generated in Go.
//
// [ONNX] writes ONNX models (the protobuf wire format, by hand: enough of
// onnx.proto for small graphs) with the metadata sherpa-onnx reads. The
// loudness model ([WriteLoudnessModel]) is a streaming zipformer2 CTC
// model in form only: its eight state tensors pass through unchanged and
// each chunk of audio yields one frame of two scores, the blank's (a
// threshold) and token 1's (the mean of the chunk's 80 log-mel features).
// A chunk of sound (speech, noise) therefore decodes as "hello", and
// silence as nothing: a stretch of sound, a silence and another sound is
// "hello hello". That exercises everything
// between Parley and the library (loading through the config struct,
// streams, decoding, results) with text known in advance.
package sherpatest
