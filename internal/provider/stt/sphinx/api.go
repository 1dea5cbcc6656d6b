package sphinx

// api is the part of pocketsphinx's and sphinxbase's C API (Debian's
// 0.8+5prealpha: libpocketsphinx.so.3, libsphinxbase.so.3) Parley calls.
// Handles are the libraries' opaque pointers, kept as uintptr: Go never
// reads through them. int32 and int are 32 bits, size_t 64 (LP64).
type api struct {
	// ps_args: the decoder's option definitions (static storage).
	args func() uintptr
	// cmd_ln_parse_r(NULL, defn, argc, argv, strict): a new option set,
	// or NULL when an option is unknown or malformed.
	parseArgs func(inout, defn uintptr, argc int32, argv **byte, strict int32) uintptr
	freeArgs  func(config uintptr) int32 // cmd_ln_free_r
	// ps_init: a decoder loading every model the options name; NULL on
	// failure. It keeps its own reference to config.
	initDecoder func(config uintptr) uintptr
	freeDecoder func(ps uintptr) int32 // ps_free
	startUtt    func(ps uintptr) int32 // ps_start_utt
	// ps_process_raw(ps, data, n, no_search, full_utt): frames searched,
	// negative on error. The samples are copied before it returns.
	processRaw func(ps uintptr, data *int16, n uint64, noSearch, fullUtt int32) int32
	endUtt     func(ps uintptr) int32 // ps_end_utt
	// ps_get_hyp: the best hypothesis so far (during an utterance) or of
	// the utterance (after ps_end_utt); storage owned by the decoder, so
	// it is copied (purego copies a string result).
	hyp func(ps uintptr, score *int32) string
	// ps_get_config and ps_get_logmath: the decoder's options and its
	// log table, which a language model read for it must share.
	getConfig  func(ps uintptr) uintptr
	getLogmath func(ps uintptr) uintptr
	// ps_set_lm(ps, name, lm) adds an n-gram search named name (taking its
	// own reference to lm); ps_set_search makes a search the one decoded
	// with. Both negative on failure.
	setLM     func(ps uintptr, name string, lm uintptr) int32
	setSearch func(ps uintptr, name string) int32
	// ngram_model_read(config, path, NGRAM_AUTO, lmath): a language model
	// (ARPA or binary), NULL on failure.
	readLM func(config uintptr, path string, fileType int32, lmath uintptr) uintptr
	// ngram_model_set_init(config, models, names, weights, n): the
	// models interpolated with weights, NULL on failure.
	lmSet  func(config uintptr, models *uintptr, names **byte, weights *float32, n int32) uintptr
	freeLM func(lm uintptr) int32 // ngram_model_free: drops a reference
	// err_set_logfp(NULL) turns the libraries' log off, process-wide.
	setLogFP func(fp uintptr)
}

// symbols binds each api field to its C function, by library.
func (a *api) symbols() (pocketsphinx, sphinxbase map[string]any) {
	return map[string]any{
			"ps_args":        &a.args,
			"ps_init":        &a.initDecoder,
			"ps_free":        &a.freeDecoder,
			"ps_start_utt":   &a.startUtt,
			"ps_process_raw": &a.processRaw,
			"ps_end_utt":     &a.endUtt,
			"ps_get_hyp":     &a.hyp,
			"ps_get_config":  &a.getConfig,
			"ps_get_logmath": &a.getLogmath,
			"ps_set_lm":      &a.setLM,
			"ps_set_search":  &a.setSearch,
		}, map[string]any{
			"cmd_ln_parse_r":       &a.parseArgs,
			"cmd_ln_free_r":        &a.freeArgs,
			"err_set_logfp":        &a.setLogFP,
			"ngram_model_read":     &a.readLM,
			"ngram_model_set_init": &a.lmSet,
			"ngram_model_free":     &a.freeLM,
		}
}
