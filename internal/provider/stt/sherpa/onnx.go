package sherpa

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// onnxModel is what Parley reads of an .onnx file before handing it to the
// library: sherpa-onnx aborts the whole process on a file onnxruntime
// cannot parse or a model without the metadata it expects, so an
// operator's mistake must be caught here, as an error.
type onnxModel struct {
	irVersion uint64
	hasGraph  bool
	metadata  map[string]string // ModelProto.metadata_props
}

// Limits on what a model's top level may hold (real models carry a few
// dozen metadata entries of at most a few KiB: paraformer's neg_mean).
const (
	maxMetadataEntry   = 1 << 20
	maxMetadataEntries = 10000
)

var errNotONNX = errors.New("not an ONNX model")

// readONNXFile reads the top level of the ONNX file at path.
func readONNXFile(path string) (onnxModel, error) {
	f, err := os.Open(path)
	if err != nil {
		return onnxModel{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return onnxModel{}, err
	}
	m, err := readONNX(f, fi.Size())
	if err != nil {
		return onnxModel{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// readONNX walks the top level of a serialized onnx.ModelProto (protobuf)
// of size bytes: every field must be well formed and end inside the file,
// ir_version (1) must be a varint and graph (7) present; metadata_props
// (14) entries are decoded. Other fields, the graph included, are skipped
// without being read, so a 300 MB encoder costs a few hundred small reads.
func readONNX(r io.ReaderAt, size int64) (onnxModel, error) {
	m := onnxModel{metadata: map[string]string{}}
	if size == 0 {
		return m, fmt.Errorf("%w: empty file", errNotONNX)
	}
	var off int64
	for off < size {
		tag, n, err := varintAt(r, off, size)
		if err != nil {
			return m, fmt.Errorf("%w: field at byte %d: %w", errNotONNX, off, err)
		}
		off += n
		field, wire := tag>>3, tag&7
		if field == 0 || field > 1<<29-1 {
			return m, fmt.Errorf("%w: field number %d at byte %d", errNotONNX, field, off-n)
		}
		switch {
		case field == 1 && wire != 0, (field == 7 || field == 14) && wire != 2:
			return m, fmt.Errorf("%w: field %d has wire type %d", errNotONNX, field, wire)
		}
		switch wire {
		case 0: // varint
			v, n, err := varintAt(r, off, size)
			if err != nil {
				return m, fmt.Errorf("%w: field %d: %w", errNotONNX, field, err)
			}
			off += n
			if field == 1 {
				m.irVersion = v
			}
		case 1: // fixed64
			off += 8
		case 5: // fixed32
			off += 4
		case 2: // length-delimited
			l, n, err := varintAt(r, off, size)
			if err != nil {
				return m, fmt.Errorf("%w: field %d: %w", errNotONNX, field, err)
			}
			off += n
			if l > uint64(size-off) {
				return m, fmt.Errorf("%w: field %d of %d bytes runs past the end (%d bytes left)", errNotONNX, field, l, size-off)
			}
			switch field {
			case 7:
				m.hasGraph = true
			case 14:
				if len(m.metadata) >= maxMetadataEntries {
					return m, fmt.Errorf("%w: over %d metadata entries", errNotONNX, maxMetadataEntries)
				}
				if l > maxMetadataEntry {
					return m, fmt.Errorf("%w: a metadata entry of %d bytes", errNotONNX, l)
				}
				b := make([]byte, l)
				if _, err := r.ReadAt(b, off); err != nil {
					return m, fmt.Errorf("%w: metadata: %w", errNotONNX, err)
				}
				k, v, err := metadataEntry(b)
				if err != nil {
					return m, fmt.Errorf("%w: metadata: %w", errNotONNX, err)
				}
				m.metadata[k] = v
			}
			off += int64(l)
		default: // 3, 4 (groups, unused by ONNX), 6, 7
			return m, fmt.Errorf("%w: wire type %d at byte %d", errNotONNX, wire, off-n)
		}
		if off > size {
			return m, fmt.Errorf("%w: field %d runs past the end", errNotONNX, field)
		}
	}
	if m.irVersion == 0 {
		return m, fmt.Errorf("%w: no ir_version", errNotONNX)
	}
	if !m.hasGraph {
		return m, fmt.Errorf("%w: no graph", errNotONNX)
	}
	return m, nil
}

// metadataEntry decodes an onnx.StringStringEntryProto: key (1), value (2).
func metadataEntry(b []byte) (key, value string, err error) {
	for len(b) > 0 {
		tag, n := varint(b)
		if n <= 0 {
			return "", "", errors.New("bad tag")
		}
		b = b[n:]
		field, wire := tag>>3, tag&7
		switch wire {
		case 0:
			_, n := varint(b)
			if n <= 0 {
				return "", "", errors.New("bad varint")
			}
			b = b[n:]
		case 1, 5:
			w := 8
			if wire == 5 {
				w = 4
			}
			if len(b) < w {
				return "", "", errors.New("truncated")
			}
			b = b[w:]
		case 2:
			l, n := varint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return "", "", errors.New("truncated")
			}
			s := string(b[n : n+int(l)])
			b = b[n+int(l):]
			switch field {
			case 1:
				key = s
			case 2:
				value = s
			}
		default:
			return "", "", fmt.Errorf("wire type %d", wire)
		}
	}
	return key, value, nil
}

// varint decodes a protobuf varint from b: n is the bytes used, 0 when b
// ends first, -1 on overflow.
func varint(b []byte) (v uint64, n int) {
	for i, c := range b {
		if i == 10 || (i == 9 && c > 1) {
			return 0, -1
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// varintAt decodes the varint at off in a file of size bytes.
func varintAt(r io.ReaderAt, off, size int64) (uint64, int64, error) {
	var buf [10]byte
	b := buf[:min(int64(len(buf)), size-off)]
	if _, err := r.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, err
	}
	v, n := varint(b)
	switch {
	case n == 0:
		return 0, 0, errors.New("truncated varint")
	case n < 0:
		return 0, 0, errors.New("varint overflows 64 bits")
	}
	return v, int64(n), nil
}
