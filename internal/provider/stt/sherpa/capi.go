package sherpa

// The structs below mirror sherpa-onnx's C API (c-api.h of version
// [LayoutVersion], shipped in the Go module [LibraryModule]) field for
// field, on 64-bit platforms (LP64: pointers 8 bytes, int32_t and float 4,
// natural alignment, which Go's layout matches). They are handed to the
// library by pointer, so a field out of place corrupts the call:
// TestLayout asserts every offset written here and TestLayoutMatchesHeader
// compiles the header with gcc and compares. Strings are NUL-terminated
// bytes in Go memory, kept alive across the call; nil means "the library's
// default".

// transducerConfig is SherpaOnnxOnlineTransducerModelConfig (24 bytes).
type transducerConfig struct {
	encoder *byte // 0
	decoder *byte // 8
	joiner  *byte // 16
}

// paraformerConfig is SherpaOnnxOnlineParaformerModelConfig (16 bytes).
type paraformerConfig struct {
	encoder *byte // 0
	decoder *byte // 8
}

// singleModelConfig is each of SherpaOnnxOnlineZipformer2CtcModelConfig,
// SherpaOnnxOnlineNemoCtcModelConfig and SherpaOnnxOnlineToneCtcModelConfig
// (8 bytes: one path).
type singleModelConfig struct {
	model *byte // 0
}

// modelConfig is SherpaOnnxOnlineModelConfig (136 bytes).
type modelConfig struct {
	transducer    transducerConfig  // 0
	paraformer    paraformerConfig  // 24
	zipformer2CTC singleModelConfig // 40
	tokens        *byte             // 48
	numThreads    int32             // 56
	_             [4]byte           // 60: padding before a pointer
	provider      *byte             // 64
	debug         int32             // 72
	_             [4]byte           // 76
	modelType     *byte             // 80
	modelingUnit  *byte             // 88
	bpeVocab      *byte             // 96
	tokensBuf     *byte             // 104
	tokensBufSize int32             // 112
	_             [4]byte           // 116
	nemoCTC       singleModelConfig // 120
	toneCTC       singleModelConfig // 128
}

// featureConfig is SherpaOnnxFeatureConfig (8 bytes).
type featureConfig struct {
	sampleRate int32 // 0
	featureDim int32 // 4
}

// ctcFSTDecoderConfig is SherpaOnnxOnlineCtcFstDecoderConfig (16 bytes).
type ctcFSTDecoderConfig struct {
	graph     *byte // 0
	maxActive int32 // 8
	_         [4]byte
}

// homophoneReplacerConfig is SherpaOnnxHomophoneReplacerConfig (24 bytes).
type homophoneReplacerConfig struct {
	dictDir  *byte // 0 (unused by the library)
	lexicon  *byte // 8
	ruleFSTs *byte // 16
}

// recognizerConfig is SherpaOnnxOnlineRecognizerConfig (272 bytes).
type recognizerConfig struct {
	feat                    featureConfig           // 0
	model                   modelConfig             // 8
	decodingMethod          *byte                   // 144
	maxActivePaths          int32                   // 152
	enableEndpoint          int32                   // 156
	rule1MinTrailingSilence float32                 // 160
	rule2MinTrailingSilence float32                 // 164
	rule3MinUtteranceLength float32                 // 168
	_                       [4]byte                 // 172
	hotwordsFile            *byte                   // 176
	hotwordsScore           float32                 // 184
	_                       [4]byte                 // 188
	ctcFSTDecoder           ctcFSTDecoderConfig     // 192
	ruleFSTs                *byte                   // 208
	ruleFARs                *byte                   // 216
	blankPenalty            float32                 // 224
	_                       [4]byte                 // 228
	hotwordsBuf             *byte                   // 232
	hotwordsBufSize         int32                   // 240
	_                       [4]byte                 // 244
	hr                      homophoneReplacerConfig // 248
}

// recognizerResult is SherpaOnnxOnlineRecognizerResult (48 bytes). The
// library allocates it; Parley reads text only and hands it back to
// SherpaOnnxDestroyOnlineRecognizerResult.
type recognizerResult struct {
	text       *byte    // 0: NUL-terminated UTF-8
	tokens     *byte    // 8
	tokensArr  **byte   // 16
	timestamps *float32 // 24
	count      int32    // 32
	_          [4]byte  // 36
	json       *byte    // 40
}
