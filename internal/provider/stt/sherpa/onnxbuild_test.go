package sherpa

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pb writes protobuf fields: enough of the wire format to build ONNX
// files for the tests (onnx.proto's field numbers are given where used).
type pb []byte

func (b pb) varint(v uint64) pb { return binary.AppendUvarint(b, v) }
func (b pb) tag(field, wire int) pb {
	return b.varint(uint64(field)<<3 | uint64(wire))
}
func (b pb) int(field int, v int64) pb { return b.tag(field, 0).varint(uint64(v)) }
func (b pb) bytes(field int, v []byte) pb {
	return append(b.tag(field, 2).varint(uint64(len(v))), v...)
}
func (b pb) str(field int, s string) pb { return b.bytes(field, []byte(s)) }
func (b pb) float(field int, f float32) pb {
	return binary.LittleEndian.AppendUint32(b.tag(field, 5), math.Float32bits(f))
}

// ONNX enum values.
const (
	onnxFloat = 1 // TensorProto.FLOAT
	onnxInt64 = 7 // TensorProto.INT64

	attrInt  = 2 // AttributeProto.INT
	attrInts = 7 // AttributeProto.INTS
)

// onnxFile is a ModelProto: ir_version 8, opset 13, graph and metadata.
func onnxFile(graph pb, meta map[string]string) []byte {
	b := pb{}.int(1, 8)                        // ir_version
	b = b.bytes(8, pb{}.str(1, "").int(2, 13)) // opset_import {domain, version}
	b = b.bytes(7, graph)                      // graph
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = b.bytes(14, pb{}.str(1, k).str(2, meta[k])) // metadata_props {key, value}
	}
	return b
}

// valueInfo is a ValueInfoProto: a tensor of elem type with dims (nil:
// shape unknown; a negative dim: symbolic).
func valueInfo(name string, elem int, dims []int64) pb {
	tensor := pb{}.int(1, int64(elem)) // elem_type
	if dims != nil {
		var shape pb
		for i, d := range dims {
			if d < 0 {
				shape = shape.bytes(1, pb{}.str(2, "d"+strconv.Itoa(i))) // dim_param
			} else {
				shape = shape.bytes(1, pb{}.int(1, d)) // dim_value
			}
		}
		tensor = tensor.bytes(2, shape)
	}
	return pb{}.str(1, name).bytes(2, pb{}.bytes(1, tensor)) // name, type {tensor_type}
}

// node is a NodeProto with attributes already encoded.
func node(op string, in, out []string, attrs ...pb) pb {
	var b pb
	for _, s := range in {
		b = b.str(1, s)
	}
	for _, s := range out {
		b = b.str(2, s)
	}
	b = b.str(3, op+"_"+out[0]).str(4, op)
	for _, a := range attrs {
		b = b.bytes(5, a)
	}
	return b
}

func intAttr(name string, v int64) pb { return pb{}.str(1, name).int(3, v).int(20, attrInt) }
func intsAttr(name string, vs ...int64) pb {
	b := pb{}.str(1, name)
	for _, v := range vs {
		b = b.int(8, v)
	}
	return b.int(20, attrInts)
}

// floatTensor is a TensorProto named name of dims holding vs.
func floatTensor(name string, dims []int64, vs ...float32) pb {
	var b pb
	for _, d := range dims {
		b = b.int(1, d)
	}
	b = b.int(2, onnxFloat)
	for _, v := range vs {
		b = b.float(4, v)
	}
	return b.str(8, name)
}

// zipformer2Meta is the metadata of the tiny zipformer2 CTC model below:
// one encoder stack of one layer, so eight state tensors.
var zipformer2Meta = map[string]string{
	"model_type": "zipformer2", "encoder_dims": "4", "query_head_dims": "2", "value_head_dims": "2",
	"num_heads": "1", "num_encoder_layers": "1", "cnn_module_kernels": "3", "left_context_len": "2",
	"T": "45", "decode_chunk_len": "32",
}

// loudnessCTC is a streaming zipformer2 CTC model in form only: its eight
// states go through unchanged, and each chunk yields one frame of two
// scores, the blank's (threshold) and token 1's (the mean of the chunk's
// 80 log-mel features), so a chunk of sound louder than threshold decodes
// as token 1 and silence as nothing. It lets the tests run the real
// library end to end: model loading from the config struct, streams,
// resampling, decoding, results.
func loudnessCTC(threshold float32) []byte {
	states := []struct {
		elem int
		dims []int64
	}{
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
	return onnxFile(g, zipformer2Meta)
}

// writeModel makes a model directory in a temporary directory: files maps
// names to contents.
func writeModel(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tokens is a token table of the given symbols, ids in order.
func tokens(symbols ...string) []byte {
	var b strings.Builder
	for i, s := range symbols {
		b.WriteString(s + " " + strconv.Itoa(i) + "\n")
	}
	return []byte(b.String())
}
