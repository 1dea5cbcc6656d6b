package sherpatest

import (
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// featureDim is the log-mel bins per frame stt/sherpa configures.
const featureDim = 80

// LoudnessThreshold sits between the mean log-mel feature of a chunk of
// silence (about -16, the library's energy floor) and of a chunk of
// speech (espeak-ng through G.711: -6 to -8) or of noise at a third of
// full scale (above 0).
const LoudnessThreshold = -10

// Zipformer2Metadata is the loudness model's metadata: a zipformer2 of one
// encoder stack of one layer (eight state tensors), chunks of 45 feature
// frames advancing by 32. Callers get a copy.
func Zipformer2Metadata() map[string]string {
	return maps.Clone(map[string]string{
		"model_type": "zipformer2", "encoder_dims": "4", "query_head_dims": "2", "value_head_dims": "2",
		"num_heads": "1", "num_encoder_layers": "1", "cnn_module_kernels": "3", "left_context_len": "2",
		"T": "45", "decode_chunk_len": "32",
	})
}

// LoudnessModel is the loudness model (see the package doc) with the
// given threshold.
func LoudnessModel(threshold float32) []byte {
	states := []struct {
		elem int
		dims []int64
	}{ // the initial states sherpa-onnx makes from Zipformer2Metadata
		{onnxFloat, []int64{2, 1, 2}}, {onnxFloat, []int64{1, 1, 2, 3}}, {onnxFloat, []int64{2, 1, 2}},
		{onnxFloat, []int64{2, 1, 2}}, {onnxFloat, []int64{1, 4, 1}}, {onnxFloat, []int64{1, 4, 1}},
		{onnxFloat, []int64{1, 128, 3, -1}}, {onnxInt64, []int64{1}},
	}
	g := pb{}.
		bytes(1, node("ReduceMean", []string{"x"}, []string{"loudness"}, intsAttr("axes", 1, 2), intAttr("keepdims", 1))).
		bytes(1, node("Concat", []string{"threshold", "loudness"}, []string{"log_probs"}, intAttr("axis", 2))).
		str(2, "loudness_ctc").
		bytes(5, floatTensor("threshold", []int64{1, 1, 1}, threshold)).
		bytes(11, valueInfo("x", onnxFloat, []int64{1, -1, featureDim}))
	for i, s := range states {
		in, out := "state"+strconv.Itoa(i), "next_state"+strconv.Itoa(i)
		g = g.bytes(1, node("Identity", []string{in}, []string{out})).bytes(11, valueInfo(in, s.elem, s.dims))
	}
	g = g.bytes(12, valueInfo("log_probs", onnxFloat, []int64{1, 1, 2}))
	for i, s := range states {
		g = g.bytes(12, valueInfo("next_state"+strconv.Itoa(i), s.elem, s.dims))
	}
	return ONNX(g, Zipformer2Metadata())
}

// Tokens is a token table of symbols, ids in order.
func Tokens(symbols ...string) []byte {
	var b strings.Builder
	for i, s := range symbols {
		b.WriteString(s + " " + strconv.Itoa(i) + "\n")
	}
	return []byte(b.String())
}

// WriteModel writes files (name to contents) into a new temporary
// directory, removed after the test, and returns it.
func WriteModel(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// WriteLoudnessModel writes the loudness model and its token table (<blk>,
// ▁hello) into a new temporary directory and returns it.
func WriteLoudnessModel(t testing.TB) string {
	return WriteModel(t, map[string][]byte{
		"model.onnx": LoudnessModel(LoudnessThreshold), "tokens.txt": Tokens("<blk>", "\u2581hello"),
	})
}
