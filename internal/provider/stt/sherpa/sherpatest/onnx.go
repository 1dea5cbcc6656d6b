package sherpatest

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
)

// pb appends protobuf fields (onnx.proto's field numbers are given where
// used).
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
	attrInt   = 2 // AttributeProto.INT
	attrInts  = 7 // AttributeProto.INTS
)

// ONNX is a serialized ModelProto: ir_version 8, opset 13, the given
// GraphProto bytes (nil: an empty graph, enough for a file that is only
// read, never run) and metadata_props.
func ONNX(graph []byte, meta map[string]string) []byte {
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

// valueInfo is a ValueInfoProto: a tensor of elem type with dims (a
// negative dim is symbolic).
func valueInfo(name string, elem int, dims []int64) pb {
	var shape pb
	for i, d := range dims {
		if d < 0 {
			shape = shape.bytes(1, pb{}.str(2, "d"+strconv.Itoa(i))) // dim_param
		} else {
			shape = shape.bytes(1, pb{}.int(1, d)) // dim_value
		}
	}
	tensor := pb{}.int(1, int64(elem)).bytes(2, shape)       // elem_type, shape
	return pb{}.str(1, name).bytes(2, pb{}.bytes(1, tensor)) // name, type {tensor_type}
}

// node is a NodeProto with encoded attributes.
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

// floatTensor is a TensorProto of dims holding vs.
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
