package sherpa

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/provider/stt/sherpa/sherpatest"
)

// pb appends raw protobuf fields, for malformed files.
type pb []byte

func (b pb) varint(v uint64) pb        { return binary.AppendUvarint(b, v) }
func (b pb) tag(field, wire int) pb    { return b.varint(uint64(field)<<3 | uint64(wire)) }
func (b pb) int(field int, v int64) pb { return b.tag(field, 0).varint(uint64(v)) }
func (b pb) bytes(field int, v []byte) pb {
	return append(b.tag(field, 2).varint(uint64(len(v))), v...)
}
func (b pb) str(field int, s string) pb { return b.bytes(field, []byte(s)) }

var (
	zipformer2Meta = sherpatest.Zipformer2Metadata()
	writeModel     = sherpatest.WriteModel
	tokens         = sherpatest.Tokens
)

// with is meta plus more keys.
func with(meta map[string]string, kv ...string) map[string]string {
	m := maps.Clone(meta)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func without(meta map[string]string, key string) map[string]string {
	m := maps.Clone(meta)
	delete(m, key)
	return m
}

var (
	decoderMeta    = map[string]string{"vocab_size": "500", "context_size": "2"}
	paraformerMeta = map[string]string{"vocab_size": "8404", "lfr_window_size": "7", "lfr_window_shift": "6",
		"encoder_output_size": "512", "decoder_num_blocks": "16", "decoder_kernel_size": "11", "neg_mean": "-1,-2", "inv_stddev": "1,2"}
	nemoMeta = map[string]string{"window_size": "17", "chunk_shift": "8", "subsampling_factor": "8", "vocab_size": "1024",
		"cache_last_channel_dim1": "17", "cache_last_channel_dim2": "70", "cache_last_channel_dim3": "512",
		"cache_last_time_dim1": "17", "cache_last_time_dim2": "512", "cache_last_time_dim3": "8"}
)

func meta(m map[string]string) []byte { return sherpatest.ONNX(nil, m) }

// zipformerEn is the file list of sherpa-onnx-streaming-zipformer-en-2023-06-26.
func zipformerEn() map[string][]byte {
	files := map[string][]byte{"tokens.txt": tokens("<blk>", "<sos/eos>", "<unk>", "S", "\u2581THE")}
	for _, v := range []string{"-epoch-99-avg-1-chunk-16-left-128", "-epoch-99-avg-1-chunk-16-left-64"} {
		for _, q := range []string{".onnx", ".int8.onnx"} {
			files["encoder"+v+q] = meta(with(zipformer2Meta, "model_type", "zipformer2"))
			files["decoder"+v+q] = meta(decoderMeta)
			files["joiner"+v+q] = meta(nil)
		}
	}
	return files
}

func TestDetectModelLayouts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  Model // file names relative to the directory
	}{
		{"streaming zipformer with int8 and two chunk sizes", zipformerEn(), Model{Kind: Transducer, Type: "zipformer2",
			Encoder: "encoder-epoch-99-avg-1-chunk-16-left-128.int8.onnx", Decoder: "decoder-epoch-99-avg-1-chunk-16-left-128.int8.onnx",
			Joiner: "joiner-epoch-99-avg-1-chunk-16-left-128.int8.onnx"}},
		{"transducer with plain names, an fp32 decoder", map[string][]byte{
			"encoder.int8.onnx": meta(map[string]string{"model_type": "lstm"}), "decoder.onnx": meta(decoderMeta),
			"joiner.int8.onnx": meta(nil), "tokens.txt": tokens("<blk>", "a"), "README.md": []byte("hi"),
		}, Model{Kind: Transducer, Type: "lstm", Encoder: "encoder.int8.onnx", Decoder: "decoder.onnx", Joiner: "joiner.int8.onnx"}},
		{"paraformer", map[string][]byte{
			"encoder.onnx": meta(paraformerMeta), "encoder.int8.onnx": meta(paraformerMeta),
			"decoder.onnx": meta(nil), "decoder.int8.onnx": meta(nil), "tokens.txt": tokens("<blank>", "<s>", "</s>", "a"),
		}, Model{Kind: Paraformer, Encoder: "encoder.int8.onnx", Decoder: "decoder.int8.onnx"}},
		{"zipformer2 CTC", map[string][]byte{
			"ctc-epoch-20-avg-1-chunk-16-left-128.onnx": meta(zipformer2Meta), "ctc-epoch-20-avg-1-chunk-16-left-128.int8.onnx": meta(zipformer2Meta),
			"tokens.txt": tokens("<blk>", "a"),
		}, Model{Kind: Zipformer2CTC, CTC: "ctc-epoch-20-avg-1-chunk-16-left-128.int8.onnx"}},
		{"NeMo CTC", map[string][]byte{"model.onnx": meta(nemoMeta), "tokens.txt": tokens("a", "b", "<blk>")},
			Model{Kind: NeMoCTC, CTC: "model.onnx"}},
	} {
		dir := writeModel(t, tc.files)
		got, err := DetectModel(dir)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		want := tc.want
		want.Dir = dir
		for _, f := range []*string{&want.Encoder, &want.Decoder, &want.Joiner, &want.CTC} {
			if *f != "" {
				*f = filepath.Join(dir, *f)
			}
		}
		want.Tokens = filepath.Join(dir, TokensFile)
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, want)
		}
	}
}

func TestDetectModelRefusals(t *testing.T) {
	zt := with(zipformer2Meta, "model_type", "zipformer2")
	tok := tokens("<blk>", "a")
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  []string // in the error
	}{
		{"empty directory", map[string][]byte{}, []string{"no tokens.txt"}},
		{"no model files", map[string][]byte{"tokens.txt": tok}, []string{"no .onnx model", "encoder*.onnx"}},
		{"no joiner", map[string][]byte{"encoder.onnx": meta(zt), "decoder.onnx": meta(decoderMeta), "tokens.txt": tok},
			[]string{"no joiner*.onnx", "zipformer2 transducer"}},
		{"no decoder", map[string][]byte{"encoder.onnx": meta(zt), "joiner.onnx": meta(nil), "tokens.txt": tok},
			[]string{"no decoder*.onnx", "encoder.onnx"}},
		{"no encoder", map[string][]byte{"decoder.onnx": meta(decoderMeta), "joiner.onnx": meta(nil), "tokens.txt": tok},
			[]string{"no encoder*.onnx", "decoder.onnx"}},
		{"no tokens", map[string][]byte{"encoder.onnx": meta(zt), "decoder.onnx": meta(decoderMeta), "joiner.onnx": meta(nil)},
			[]string{"no tokens.txt"}},
		{"encoder not ONNX", map[string][]byte{"encoder.onnx": []byte("<html>rate limited</html>"), "decoder.onnx": meta(decoderMeta),
			"joiner.onnx": meta(nil), "tokens.txt": tok}, []string{"encoder.onnx", "not an ONNX model"}},
		{"truncated joiner", map[string][]byte{"encoder.onnx": meta(zt), "decoder.onnx": meta(decoderMeta),
			"joiner.onnx": meta(nil)[:5], "tokens.txt": tok}, []string{"joiner.onnx", "not an ONNX model"}},
		{"encoder without model_type", map[string][]byte{"encoder.onnx": meta(without(zipformer2Meta, "model_type")), "decoder.onnx": meta(decoderMeta),
			"joiner.onnx": meta(nil), "tokens.txt": tok}, []string{"encoder.onnx", "no model_type"}},
		{"offline model", map[string][]byte{"encoder.onnx": meta(with(zt, "model_type", "whisper")), "decoder.onnx": meta(decoderMeta),
			"joiner.onnx": meta(nil), "tokens.txt": tok}, []string{`"whisper"`}},
		{"zipformer2 encoder lacking metadata", map[string][]byte{"encoder.onnx": meta(without(zt, "decode_chunk_len")),
			"decoder.onnx": meta(decoderMeta), "joiner.onnx": meta(nil), "tokens.txt": tok}, []string{`"decode_chunk_len"`}},
		{"decoder lacking context_size", map[string][]byte{"encoder.onnx": meta(zt), "decoder.onnx": meta(without(decoderMeta, "context_size")),
			"joiner.onnx": meta(nil), "tokens.txt": tok}, []string{"decoder.onnx", `"context_size"`}},
		{"paraformer lacking inv_stddev", map[string][]byte{"encoder.onnx": meta(without(paraformerMeta, "inv_stddev")),
			"decoder.onnx": meta(nil), "tokens.txt": tok}, []string{`"inv_stddev"`}},
		{"unknown single model", map[string][]byte{"model.onnx": meta(map[string]string{"model_type": "whisper"}), "tokens.txt": tok},
			[]string{"model.onnx", "neither"}},
		{"CTC without a blank", map[string][]byte{"model.onnx": meta(zipformer2Meta), "tokens.txt": tokens("a", "b")},
			[]string{"tokens.txt", "<blk>"}},
		{"token table not a table", map[string][]byte{"model.onnx": meta(zipformer2Meta), "tokens.txt": []byte("<blk>\n")},
			[]string{"tokens.txt", "line 1"}},
	} {
		dir := writeModel(t, tc.files)
		_, err := DetectModel(dir)
		if !errors.Is(err, ErrModel) {
			t.Errorf("%s: %v, want ErrModel", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}
	for _, dir := range []string{"", filepath.Join(t.TempDir(), "missing")} {
		if _, err := DetectModel(dir); !errors.Is(err, ErrModel) {
			t.Errorf("%q: %v", dir, err)
		}
	}
}

func TestReadONNX(t *testing.T) {
	b := sherpatest.LoudnessModel(sherpatest.LoudnessThreshold)
	m, err := readONNX(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if m.irVersion != 8 || !m.hasGraph || !maps.Equal(m.metadata, zipformer2Meta) {
		t.Errorf("read %+v", m)
	}
	for name, bad := range map[string][]byte{
		"empty":          nil,
		"no graph":       pb{}.int(1, 8).bytes(14, pb{}.str(1, "k").str(2, "v")),
		"no ir_version":  pb{}.bytes(7, nil),
		"field 0":        pb{}.int(1, 8).bytes(7, nil).tag(0, 0),
		"group":          pb{}.int(1, 8).bytes(7, nil).tag(9, 3),
		"graph varint":   pb{}.int(1, 8).int(7, 1),
		"long length":    pb{}.int(1, 8).tag(7, 2).varint(1 << 40),
		"cut fixed64":    pb{}.int(1, 8).bytes(7, nil).tag(9, 1).varint(1),
		"varint too big": append(pb{}.int(1, 8).bytes(7, nil).tag(9, 0), bytes.Repeat([]byte{0xff}, 11)...),
		"bad metadata":   pb{}.int(1, 8).bytes(7, nil).bytes(14, []byte{0x0a, 0x05, 'k'}),
	} {
		if _, err := readONNX(bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, errNotONNX) {
			t.Errorf("%s: %v, want errNotONNX", name, err)
		}
	}
}

// FuzzReadONNX: any bytes give a model or errNotONNX, never a panic, and
// a model has what readONNX promises.
func FuzzReadONNX(f *testing.F) {
	f.Add(sherpatest.LoudnessModel(sherpatest.LoudnessThreshold))
	f.Add(meta(paraformerMeta))
	f.Add([]byte("not a model"))
	f.Add([]byte{0x08, 0x08, 0x3a, 0x00, 0x72, 0x03, 0x0a, 0x01, 'k'})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readONNX(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			if !errors.Is(err, errNotONNX) {
				t.Fatalf("error %v is not errNotONNX", err)
			}
			return
		}
		if m.irVersion == 0 || !m.hasGraph || len(m.metadata) > maxMetadataEntries {
			t.Fatalf("accepted %+v", m)
		}
	})
}

func TestParseTokens(t *testing.T) {
	for text, ok := range map[string]bool{
		"<blk> 0\n<sos/eos> 1\n\u2581THE 2\n": true,
		"<blk>\t0\r\n  3\n":                   true, // a space symbol
		"":                                    false,
		"\n\n":                                false,
		"<blk> zero\n":                        false,
		"<blk> -1\n":                          false,
		"<blk> 99999999999\n":                 false,
		"<blk> 0\n\xff 1\n":                   false,
	} {
		if err := parseTokens([]byte(text), false); (err == nil) != ok {
			t.Errorf("%q: %v", text, err)
		}
	}
	if err := parseTokens([]byte("a 0\nb 1\n"), true); err == nil {
		t.Error("a CTC table without a blank accepted")
	}
}

func FuzzParseTokens(f *testing.F) {
	f.Add([]byte("<blk> 0\n\u2581THE 1\n"), true)
	f.Add([]byte("a 0\nb x\n"), false)
	f.Fuzz(func(t *testing.T, b []byte, ctc bool) {
		if parseTokens(b, ctc) == nil && len(bytes.TrimSpace(b)) == 0 {
			t.Fatal("an empty table accepted")
		}
	})
}
