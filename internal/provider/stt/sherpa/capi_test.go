package sherpa

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/parley-voice/parley/internal/provider/stt/sherpa/sherpatest"
)

// layout is every size and offset capi.go's comments state, by the C name
// of the struct and field, as Go lays the mirrors out. TestLayout pins them
// to the numbers written in capi.go (read off c-api.h by hand);
// TestLayoutMatchesHeader has gcc confirm them from the header itself.
func layout() map[string]uintptr {
	var (
		tc  transducerConfig
		pc  paraformerConfig
		sc  singleModelConfig
		mc  modelConfig
		fc  featureConfig
		cfc ctcFSTDecoderConfig
		hc  homophoneReplacerConfig
		rc  recognizerConfig
		rr  recognizerResult
	)
	return map[string]uintptr{
		"sizeof SherpaOnnxOnlineTransducerModelConfig":    unsafe.Sizeof(tc),
		"SherpaOnnxOnlineTransducerModelConfig.encoder":   unsafe.Offsetof(tc.encoder),
		"SherpaOnnxOnlineTransducerModelConfig.decoder":   unsafe.Offsetof(tc.decoder),
		"SherpaOnnxOnlineTransducerModelConfig.joiner":    unsafe.Offsetof(tc.joiner),
		"sizeof SherpaOnnxOnlineParaformerModelConfig":    unsafe.Sizeof(pc),
		"SherpaOnnxOnlineParaformerModelConfig.encoder":   unsafe.Offsetof(pc.encoder),
		"SherpaOnnxOnlineParaformerModelConfig.decoder":   unsafe.Offsetof(pc.decoder),
		"sizeof SherpaOnnxOnlineZipformer2CtcModelConfig": unsafe.Sizeof(sc),
		"sizeof SherpaOnnxOnlineNemoCtcModelConfig":       unsafe.Sizeof(sc),
		"sizeof SherpaOnnxOnlineToneCtcModelConfig":       unsafe.Sizeof(sc),
		"SherpaOnnxOnlineZipformer2CtcModelConfig.model":  unsafe.Offsetof(sc.model),

		"sizeof SherpaOnnxOnlineModelConfig":          unsafe.Sizeof(mc),
		"SherpaOnnxOnlineModelConfig.transducer":      unsafe.Offsetof(mc.transducer),
		"SherpaOnnxOnlineModelConfig.paraformer":      unsafe.Offsetof(mc.paraformer),
		"SherpaOnnxOnlineModelConfig.zipformer2_ctc":  unsafe.Offsetof(mc.zipformer2CTC),
		"SherpaOnnxOnlineModelConfig.tokens":          unsafe.Offsetof(mc.tokens),
		"SherpaOnnxOnlineModelConfig.num_threads":     unsafe.Offsetof(mc.numThreads),
		"SherpaOnnxOnlineModelConfig.provider":        unsafe.Offsetof(mc.provider),
		"SherpaOnnxOnlineModelConfig.debug":           unsafe.Offsetof(mc.debug),
		"SherpaOnnxOnlineModelConfig.model_type":      unsafe.Offsetof(mc.modelType),
		"SherpaOnnxOnlineModelConfig.modeling_unit":   unsafe.Offsetof(mc.modelingUnit),
		"SherpaOnnxOnlineModelConfig.bpe_vocab":       unsafe.Offsetof(mc.bpeVocab),
		"SherpaOnnxOnlineModelConfig.tokens_buf":      unsafe.Offsetof(mc.tokensBuf),
		"SherpaOnnxOnlineModelConfig.tokens_buf_size": unsafe.Offsetof(mc.tokensBufSize),
		"SherpaOnnxOnlineModelConfig.nemo_ctc":        unsafe.Offsetof(mc.nemoCTC),
		"SherpaOnnxOnlineModelConfig.t_one_ctc":       unsafe.Offsetof(mc.toneCTC),

		"sizeof SherpaOnnxFeatureConfig":                 unsafe.Sizeof(fc),
		"SherpaOnnxFeatureConfig.sample_rate":            unsafe.Offsetof(fc.sampleRate),
		"SherpaOnnxFeatureConfig.feature_dim":            unsafe.Offsetof(fc.featureDim),
		"sizeof SherpaOnnxOnlineCtcFstDecoderConfig":     unsafe.Sizeof(cfc),
		"SherpaOnnxOnlineCtcFstDecoderConfig.graph":      unsafe.Offsetof(cfc.graph),
		"SherpaOnnxOnlineCtcFstDecoderConfig.max_active": unsafe.Offsetof(cfc.maxActive),
		"sizeof SherpaOnnxHomophoneReplacerConfig":       unsafe.Sizeof(hc),
		"SherpaOnnxHomophoneReplacerConfig.dict_dir":     unsafe.Offsetof(hc.dictDir),
		"SherpaOnnxHomophoneReplacerConfig.lexicon":      unsafe.Offsetof(hc.lexicon),
		"SherpaOnnxHomophoneReplacerConfig.rule_fsts":    unsafe.Offsetof(hc.ruleFSTs),

		"sizeof SherpaOnnxOnlineRecognizerConfig":                     unsafe.Sizeof(rc),
		"SherpaOnnxOnlineRecognizerConfig.feat_config":                unsafe.Offsetof(rc.feat),
		"SherpaOnnxOnlineRecognizerConfig.model_config":               unsafe.Offsetof(rc.model),
		"SherpaOnnxOnlineRecognizerConfig.decoding_method":            unsafe.Offsetof(rc.decodingMethod),
		"SherpaOnnxOnlineRecognizerConfig.max_active_paths":           unsafe.Offsetof(rc.maxActivePaths),
		"SherpaOnnxOnlineRecognizerConfig.enable_endpoint":            unsafe.Offsetof(rc.enableEndpoint),
		"SherpaOnnxOnlineRecognizerConfig.rule1_min_trailing_silence": unsafe.Offsetof(rc.rule1MinTrailingSilence),
		"SherpaOnnxOnlineRecognizerConfig.rule2_min_trailing_silence": unsafe.Offsetof(rc.rule2MinTrailingSilence),
		"SherpaOnnxOnlineRecognizerConfig.rule3_min_utterance_length": unsafe.Offsetof(rc.rule3MinUtteranceLength),
		"SherpaOnnxOnlineRecognizerConfig.hotwords_file":              unsafe.Offsetof(rc.hotwordsFile),
		"SherpaOnnxOnlineRecognizerConfig.hotwords_score":             unsafe.Offsetof(rc.hotwordsScore),
		"SherpaOnnxOnlineRecognizerConfig.ctc_fst_decoder_config":     unsafe.Offsetof(rc.ctcFSTDecoder),
		"SherpaOnnxOnlineRecognizerConfig.rule_fsts":                  unsafe.Offsetof(rc.ruleFSTs),
		"SherpaOnnxOnlineRecognizerConfig.rule_fars":                  unsafe.Offsetof(rc.ruleFARs),
		"SherpaOnnxOnlineRecognizerConfig.blank_penalty":              unsafe.Offsetof(rc.blankPenalty),
		"SherpaOnnxOnlineRecognizerConfig.hotwords_buf":               unsafe.Offsetof(rc.hotwordsBuf),
		"SherpaOnnxOnlineRecognizerConfig.hotwords_buf_size":          unsafe.Offsetof(rc.hotwordsBufSize),
		"SherpaOnnxOnlineRecognizerConfig.hr":                         unsafe.Offsetof(rc.hr),

		"sizeof SherpaOnnxOnlineRecognizerResult":     unsafe.Sizeof(rr),
		"SherpaOnnxOnlineRecognizerResult.text":       unsafe.Offsetof(rr.text),
		"SherpaOnnxOnlineRecognizerResult.tokens":     unsafe.Offsetof(rr.tokens),
		"SherpaOnnxOnlineRecognizerResult.tokens_arr": unsafe.Offsetof(rr.tokensArr),
		"SherpaOnnxOnlineRecognizerResult.timestamps": unsafe.Offsetof(rr.timestamps),
		"SherpaOnnxOnlineRecognizerResult.count":      unsafe.Offsetof(rr.count),
		"SherpaOnnxOnlineRecognizerResult.json":       unsafe.Offsetof(rr.json),
	}
}

// TestLayout pins the mirrors to the offsets documented in capi.go, on
// the 64-bit platforms the library ships for. No compiler needed.
func TestLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Fatal("capi.go mirrors the 64-bit (LP64) layout")
	}
	want := map[string]uintptr{
		"sizeof SherpaOnnxOnlineTransducerModelConfig": 24, "SherpaOnnxOnlineTransducerModelConfig.encoder": 0,
		"SherpaOnnxOnlineTransducerModelConfig.decoder": 8, "SherpaOnnxOnlineTransducerModelConfig.joiner": 16,
		"sizeof SherpaOnnxOnlineParaformerModelConfig": 16, "SherpaOnnxOnlineParaformerModelConfig.encoder": 0,
		"SherpaOnnxOnlineParaformerModelConfig.decoder":   8,
		"sizeof SherpaOnnxOnlineZipformer2CtcModelConfig": 8, "sizeof SherpaOnnxOnlineNemoCtcModelConfig": 8,
		"sizeof SherpaOnnxOnlineToneCtcModelConfig": 8, "SherpaOnnxOnlineZipformer2CtcModelConfig.model": 0,

		"sizeof SherpaOnnxOnlineModelConfig": 136, "SherpaOnnxOnlineModelConfig.transducer": 0,
		"SherpaOnnxOnlineModelConfig.paraformer": 24, "SherpaOnnxOnlineModelConfig.zipformer2_ctc": 40,
		"SherpaOnnxOnlineModelConfig.tokens": 48, "SherpaOnnxOnlineModelConfig.num_threads": 56,
		"SherpaOnnxOnlineModelConfig.provider": 64, "SherpaOnnxOnlineModelConfig.debug": 72,
		"SherpaOnnxOnlineModelConfig.model_type": 80, "SherpaOnnxOnlineModelConfig.modeling_unit": 88,
		"SherpaOnnxOnlineModelConfig.bpe_vocab": 96, "SherpaOnnxOnlineModelConfig.tokens_buf": 104,
		"SherpaOnnxOnlineModelConfig.tokens_buf_size": 112, "SherpaOnnxOnlineModelConfig.nemo_ctc": 120,
		"SherpaOnnxOnlineModelConfig.t_one_ctc": 128,

		"sizeof SherpaOnnxFeatureConfig": 8, "SherpaOnnxFeatureConfig.sample_rate": 0, "SherpaOnnxFeatureConfig.feature_dim": 4,
		"sizeof SherpaOnnxOnlineCtcFstDecoderConfig": 16, "SherpaOnnxOnlineCtcFstDecoderConfig.graph": 0,
		"SherpaOnnxOnlineCtcFstDecoderConfig.max_active": 8,
		"sizeof SherpaOnnxHomophoneReplacerConfig":       24, "SherpaOnnxHomophoneReplacerConfig.dict_dir": 0,
		"SherpaOnnxHomophoneReplacerConfig.lexicon": 8, "SherpaOnnxHomophoneReplacerConfig.rule_fsts": 16,

		"sizeof SherpaOnnxOnlineRecognizerConfig": 272, "SherpaOnnxOnlineRecognizerConfig.feat_config": 0,
		"SherpaOnnxOnlineRecognizerConfig.model_config": 8, "SherpaOnnxOnlineRecognizerConfig.decoding_method": 144,
		"SherpaOnnxOnlineRecognizerConfig.max_active_paths": 152, "SherpaOnnxOnlineRecognizerConfig.enable_endpoint": 156,
		"SherpaOnnxOnlineRecognizerConfig.rule1_min_trailing_silence": 160,
		"SherpaOnnxOnlineRecognizerConfig.rule2_min_trailing_silence": 164,
		"SherpaOnnxOnlineRecognizerConfig.rule3_min_utterance_length": 168,
		"SherpaOnnxOnlineRecognizerConfig.hotwords_file":              176, "SherpaOnnxOnlineRecognizerConfig.hotwords_score": 184,
		"SherpaOnnxOnlineRecognizerConfig.ctc_fst_decoder_config": 192, "SherpaOnnxOnlineRecognizerConfig.rule_fsts": 208,
		"SherpaOnnxOnlineRecognizerConfig.rule_fars": 216, "SherpaOnnxOnlineRecognizerConfig.blank_penalty": 224,
		"SherpaOnnxOnlineRecognizerConfig.hotwords_buf": 232, "SherpaOnnxOnlineRecognizerConfig.hotwords_buf_size": 240,
		"SherpaOnnxOnlineRecognizerConfig.hr": 248,

		"sizeof SherpaOnnxOnlineRecognizerResult": 48, "SherpaOnnxOnlineRecognizerResult.text": 0,
		"SherpaOnnxOnlineRecognizerResult.tokens": 8, "SherpaOnnxOnlineRecognizerResult.tokens_arr": 16,
		"SherpaOnnxOnlineRecognizerResult.timestamps": 24, "SherpaOnnxOnlineRecognizerResult.count": 32,
		"SherpaOnnxOnlineRecognizerResult.json": 40,
	}
	got := layout()
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s = %d, want %d", name, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d layout entries, %d expected", len(got), len(want))
	}
}

// TestLayoutMatchesHeader compiles a program against the c-api.h that
// ships beside the libraries and compares every size and offset the C
// compiler sees with the Go mirrors'.
func TestLayoutMatchesHeader(t *testing.T) {
	header := sherpatest.Header(t)
	if _, err := os.Stat(header); err != nil {
		t.Fatal(err)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal("gcc (Debian package gcc, in scripts/packages.txt) is needed to read c-api.h: ", err)
	}
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include \"c-api.h\"\nint main(void) {\n")
	for name := range layout() {
		if s, ok := strings.CutPrefix(name, "sizeof "); ok {
			fmt.Fprintf(&src, "  printf(\"%s %%zu\\n\", sizeof(%s));\n", name, s)
		} else {
			typ, field, _ := strings.Cut(name, ".")
			fmt.Fprintf(&src, "  printf(\"%s %%zu\\n\", offsetof(%s, %s));\n", name, typ, field)
		}
	}
	src.WriteString("  return 0;\n}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "layout.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "layout")
	if out, err := exec.Command(gcc, "-w", "-I", filepath.Dir(header), "-o", bin, filepath.Join(dir, "layout.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := layout()
	seen := 0
	for line := range strings.Lines(string(out)) {
		i := strings.LastIndexByte(line, ' ')
		name := line[:i]
		c, err := strconv.ParseUint(strings.TrimSpace(line[i+1:]), 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		seen++
		if got[name] != uintptr(c) {
			t.Errorf("%s: C says %d, the Go mirror %d", name, c, got[name])
		}
	}
	if seen != len(got) {
		t.Errorf("compared %d of %d", seen, len(got))
	}
}
