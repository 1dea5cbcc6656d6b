package sherpa

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Kind is a streaming model family sherpa-onnx can run.
type Kind string

// The layouts DetectModel recognises (file names are matched by prefix, so
// encoder-epoch-99-avg-1-chunk-16-left-128.int8.onnx is an encoder):
const (
	// Transducer: encoder*.onnx, decoder*.onnx, joiner*.onnx and
	// tokens.txt; the encoder's metadata names its model_type (zipformer2,
	// zipformer, conformer, ebranchformer or lstm). The icefall streaming
	// zipformers (sherpa-onnx-streaming-zipformer-en-2023-06-26, ...).
	Transducer Kind = "transducer"
	// Paraformer: encoder*.onnx and decoder*.onnx (no joiner) and
	// tokens.txt, the encoder carrying lfr_window_size and the rest of
	// paraformer's metadata (sherpa-onnx-streaming-paraformer-*).
	Paraformer Kind = "paraformer"
	// Zipformer2CTC: one model (ctc*.onnx, model*.onnx or any single
	// .onnx) whose metadata has encoder_dims, T and decode_chunk_len, and
	// tokens.txt with <blk> (sherpa-onnx-streaming-zipformer-ctc-*).
	Zipformer2CTC Kind = "zipformer2-ctc"
	// NeMoCTC: one model whose metadata has window_size and
	// cache_last_channel_dim1 (a NeMo streaming fast-conformer CTC export:
	// sherpa-onnx-nemo-streaming-fast-conformer-ctc-*), and tokens.txt.
	NeMoCTC Kind = "nemo-ctc"
)

// TokensFile is the token table every layout needs.
const TokensFile = "tokens.txt"

// Model is a model directory as DetectModel read it: which family, and
// the files the library is given.
type Model struct {
	Dir  string
	Kind Kind
	// Encoder, Decoder and Joiner are the transducer's (Encoder and
	// Decoder alone: the paraformer's).
	Encoder, Decoder, Joiner string
	// CTC is the single model of a CTC kind.
	CTC    string
	Tokens string
	// Type is a transducer encoder's model_type: given to the library, so
	// it does not load the encoder once more to find it.
	Type string
}

// Files are the model files used, in the order they are loaded.
func (m Model) Files() []string {
	var fs []string
	for _, f := range []string{m.Encoder, m.Decoder, m.Joiner, m.CTC, m.Tokens} {
		if f != "" {
			fs = append(fs, f)
		}
	}
	return fs
}

// ErrModel is wrapped by every error of DetectModel: the directory is not
// a model Parley can give sherpa-onnx.
var ErrModel = errors.New("sherpa-onnx model")

// transducerTypes are the model_type values sherpa-onnx's streaming
// transducer accepts.
var transducerTypes = []string{"zipformer2", "zipformer", "conformer", "ebranchformer", "lstm"}

// Metadata keys the library reads without a default: a model missing one
// makes it exit the process, so DetectModel asks for them first.
var (
	zipformer2Keys = []string{"encoder_dims", "query_head_dims", "value_head_dims", "num_heads",
		"num_encoder_layers", "cnn_module_kernels", "left_context_len", "T", "decode_chunk_len"}
	transducerDecoderKeys = []string{"vocab_size", "context_size"}
	paraformerKeys        = []string{"vocab_size", "lfr_window_size", "lfr_window_shift", "encoder_output_size",
		"decoder_num_blocks", "decoder_kernel_size", "neg_mean", "inv_stddev"}
	nemoKeys = []string{"window_size", "chunk_shift", "subsampling_factor", "vocab_size",
		"cache_last_channel_dim1", "cache_last_channel_dim2", "cache_last_channel_dim3",
		"cache_last_time_dim1", "cache_last_time_dim2", "cache_last_time_dim3"}
)

// DetectModel reads dir and tells which layout it holds (see [Kind]), with
// the files to load. Where a directory ships variants (fp32 and int8, or
// several chunk sizes), the int8 one is taken (about four times smaller
// and faster on a CPU), then the first by name; decoder and joiner follow
// the encoder's variant when they have it. Every chosen .onnx file is
// checked to be an ONNX model with the metadata the library requires, and
// tokens.txt to be a token table. Errors wrap [ErrModel] and name the
// missing or faulty file.
func DetectModel(dir string) (Model, error) {
	if dir == "" {
		return Model{}, fmt.Errorf("%w: no model directory given", ErrModel)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Model{}, fmt.Errorf("%w: %s: %w", ErrModel, dir, err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return Model{}, fmt.Errorf("%w: %w", ErrModel, err)
	}
	m := Model{Dir: abs}
	roles := map[string][]string{}
	var others []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".onnx") {
			continue
		}
		role := ""
		for _, r := range []string{"encoder", "decoder", "joiner"} {
			if strings.HasPrefix(name, r) {
				role = r
			}
		}
		if role == "" {
			others = append(others, name)
		} else {
			roles[role] = append(roles[role], name)
		}
	}
	m.Tokens = filepath.Join(abs, TokensFile)
	if fi, err := os.Stat(m.Tokens); err != nil || fi.IsDir() {
		return Model{}, fmt.Errorf("%w: no %s in %s (every streaming model ships its token table)", ErrModel, TokensFile, abs)
	}
	switch {
	case len(roles["encoder"]) > 0:
		err = m.detectEncoderDecoder(roles)
	case len(roles["decoder"]) > 0 || len(roles["joiner"]) > 0:
		err = fmt.Errorf("%w: no encoder*.onnx in %s (found %s)", ErrModel, abs, strings.Join(append(roles["decoder"], roles["joiner"]...), ", "))
	case len(others) > 0:
		err = m.detectCTC(others)
	default:
		err = fmt.Errorf("%w: no .onnx model in %s: expected encoder*.onnx, decoder*.onnx and joiner*.onnx (a streaming transducer), "+
			"encoder*.onnx and decoder*.onnx (a streaming paraformer) or one CTC model.onnx", ErrModel, abs)
	}
	if err != nil {
		return Model{}, err
	}
	if err := checkTokens(m.Tokens, m.Kind == Zipformer2CTC || m.Kind == NeMoCTC); err != nil {
		return Model{}, fmt.Errorf("%w: %w", ErrModel, err)
	}
	return m, nil
}

// detectEncoderDecoder tells a transducer from a paraformer.
func (m *Model) detectEncoderDecoder(roles map[string][]string) error {
	enc := pickVariant(roles["encoder"], "encoder", "")
	suffix := strings.TrimPrefix(enc, "encoder")
	m.Encoder = filepath.Join(m.Dir, enc)
	meta, err := m.metadata(m.Encoder)
	if err != nil {
		return err
	}
	if len(roles["decoder"]) == 0 {
		return fmt.Errorf("%w: no decoder*.onnx in %s beside %s", ErrModel, m.Dir, enc)
	}
	m.Decoder = filepath.Join(m.Dir, pickVariant(roles["decoder"], "decoder", suffix))
	if len(roles["joiner"]) == 0 {
		if _, ok := meta["lfr_window_size"]; !ok {
			if t := meta["model_type"]; t != "" {
				return fmt.Errorf("%w: no joiner*.onnx in %s (a streaming %s transducer needs encoder, decoder and joiner)", ErrModel, m.Dir, t)
			}
			return fmt.Errorf("%w: no joiner*.onnx in %s, and %s is not a paraformer encoder (no lfr_window_size metadata)", ErrModel, m.Dir, enc)
		}
		if err := requireKeys(m.Encoder, meta, paraformerKeys); err != nil {
			return err
		}
		if _, err := m.metadata(m.Decoder); err != nil {
			return err
		}
		m.Kind = Paraformer
		return nil
	}
	m.Joiner = filepath.Join(m.Dir, pickVariant(roles["joiner"], "joiner", suffix))
	m.Type = meta["model_type"]
	if !slices.Contains(transducerTypes, m.Type) {
		if m.Type == "" {
			return fmt.Errorf("%w: %s has no model_type metadata (export it with icefall's export-onnx.py for sherpa-onnx)", ErrModel, m.Encoder)
		}
		return fmt.Errorf("%w: %s has model_type %q; a streaming transducer is one of %s", ErrModel, m.Encoder, m.Type, strings.Join(transducerTypes, ", "))
	}
	if m.Type == "zipformer2" {
		if err := requireKeys(m.Encoder, meta, zipformer2Keys); err != nil {
			return err
		}
	}
	dmeta, err := m.metadata(m.Decoder)
	if err != nil {
		return err
	}
	if err := requireKeys(m.Decoder, dmeta, transducerDecoderKeys); err != nil {
		return err
	}
	if _, err := m.metadata(m.Joiner); err != nil {
		return err
	}
	m.Kind = Transducer
	return nil
}

// detectCTC reads the single model's metadata to tell its family.
func (m *Model) detectCTC(names []string) error {
	m.CTC = filepath.Join(m.Dir, pickVariant(names, "", ""))
	meta, err := m.metadata(m.CTC)
	if err != nil {
		return err
	}
	switch {
	case meta["cache_last_channel_dim1"] != "":
		m.Kind = NeMoCTC
		return requireKeys(m.CTC, meta, nemoKeys)
	case meta["encoder_dims"] != "":
		m.Kind = Zipformer2CTC
		return requireKeys(m.CTC, meta, zipformer2Keys)
	}
	return fmt.Errorf("%w: %s is neither a streaming zipformer2 CTC model (encoder_dims metadata) nor a NeMo streaming CTC model "+
		"(cache_last_channel_dim1); for a transducer name its files encoder*.onnx, decoder*.onnx and joiner*.onnx", ErrModel, m.CTC)
}

func (m *Model) metadata(path string) (map[string]string, error) {
	o, err := readONNXFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	return o.metadata, nil
}

func requireKeys(path string, meta map[string]string, keys []string) error {
	for _, k := range keys {
		if _, ok := meta[k]; !ok {
			return fmt.Errorf("%w: %s lacks the %q metadata sherpa-onnx needs (was it exported for sherpa-onnx?)", ErrModel, path, k)
		}
	}
	return nil
}

// pickVariant chooses among names (all starting with role): the one with
// the suffix want when there is one, else int8 before full precision, then
// the first by name.
func pickVariant(names []string, role, want string) string {
	if want != "" && slices.Contains(names, role+want) {
		return role + want
	}
	best := slices.Clone(names)
	slices.SortFunc(best, func(a, b string) int {
		ai, bi := strings.Contains(a, ".int8."), strings.Contains(b, ".int8.")
		if ai != bi {
			if ai {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return best[0]
}
