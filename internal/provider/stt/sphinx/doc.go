// Package sphinx is Parley's local, offline speech-to-text: CMU
// pocketsphinx (Debian's 0.8+5prealpha) decoding inside the server
// process. It owns the binding to the C libraries, the pool of loaded
// decoders, the conditioning of phone audio for the model (condition.go),
// and the cache of decoders adapted to an agent's domain. A [Recognizer]
// is an [stt.Recognizer], an [stt.Streamer] whose streams are
// [stt.Partial], and an [stt.Adaptable].
//
// # Method
//
// libpocketsphinx.so.3 and libsphinxbase.so.3 are loaded with purego
// (dlopen, no cgo: the binary still builds with CGO_ENABLED=0) the first
// time a decoder is needed or [Available] is asked; api.go lists the C
// functions used. A decoder is a ps_decoder_t made by ps_init from
// options as pocketsphinx_continuous takes them (-hmm, -lm, -dict,
// -samprate 16000, [Config.MLLR] as -mllr, the tuning below and
// [Config.Options] over it, [Config.NarrowbandOptions] over those for
// audio below 16 kHz); the
// libraries' log is off (err_set_logfp(NULL), once, process-wide: it is
// a global every decoder writes to), so failures are explained by
// Parley's own checks of the files, which run first.
//
// Decoders are pooled per Recognizer ([Config.Decoders], default one per
// CPU, at most [MaxDecoders]), loaded when first needed and kept: each
// utterance borrows one and gives it back at its end. An utterance that
// finds them all lent waits for one as long as its context allows: on a
// loaded machine recognition is late, never failed or killed.
//
// An utterance is a stream ([Recognizer.Open]; Transcribe writes its
// audio to one, a tenth of a second at a time, looking at ctx between
// writes). Open borrows a decoder and starts an utterance; each Write
// conditions the line's audio (any rate: 8 kHz G.711, 16 kHz G.722) to
// 16 kHz with a [Conditioner] and hands it to ps_process_raw, which
// decodes it before Write returns, on the caller's goroutine (the
// pipeline's recognizer goroutine, never the call's audio loop). 200 ms
// of conditioned silence go before the speech and after it. Partial reads
// ps_get_hyp, the best hypothesis so far, or while a Write is decoding
// the one read last (Write reads one every tenth of a second of audio):
// the call's loop asks for it and must not wait. Close ends the utterance
// (ps_end_utt), reads the final hypothesis and gives the decoder back; a
// canceled stream's Close ends the utterance without reading it and
// returns ctx.Err(). Every C call on a decoder is made under its stream's
// mutex, so Partial may come from any goroutine.
//
// # Domains
//
// [Recognizer.Adapt] gives a call a recognizer whose decoders use a
// language model and dictionary built from the agent's texts by
// [Config.Builder] (package stt/sphinx/lm's Build; without a Builder,
// Adapt returns the generic recognizer). Each domain is built once per
// [stt.Domain.Key], however many calls ask at once, in a new directory
// under [Config.CacheDir], then one decoder is loaded (so a model
// pocketsphinx refuses fails Adapt, and the call keeps the generic one).
// [Config.Domains] (default 8) are kept, least recently used dropped
// first: their decoders are freed (lent ones when given back), their
// files removed, and a call still holding a dropped domain's recognizer
// goes on with the generic model. Each domain has its own pool of
// [Config.DomainDecoders] (default 2).
//
// A domain decoder is a new ps_init with -lm and -dict: with a domain's
// vocabulary it loads in 40 ms of CPU and holds about 15 MB (the generic
// model: 0.45 s and 90 MB). It then searches with the domain's model
// blended with the generic en-us trigram model (blend.go,
// [Config.GenericWeight], default [DefaultGenericWeight]): both are read
// again with ngram_model_read and interpolated word by word by
// sphinxbase's ngram_model_set (ngram_model_set_init with weights), a
// search of its own made with ps_set_lm and chosen with ps_set_search.
// The domain brings its words and names, the generic model the order of
// general English the domain's texts and the conversation corpus are too
// small to hold ("how much is", "does the hygienist"). Each decoder reads
// its own copy, since a model caches the last history it scored: loading
// takes 0.19 s of CPU and the decoder holds about 63 MB. The set takes a
// reference to each model and the search one to the set, so Parley drops
// its own before returning and ps_free releases all of it. Loading the domain's model into a generic
// decoder instead (ps_set_lm_file and ps_set_search) was measured at
// 8.7 s of CPU: the search is rebuilt over the generic dictionary's
// 134,000 words.
//
// # Models
//
// [Config.ModelDir] (default /usr/share/pocketsphinx/model/en-us, from
// Debian's pocketsphinx-en-us) must hold the acoustic model en-us/, the
// trigram language model en-us.lm.bin and the dictionary
// cmudict-en-us.dict. The libraries come with Debian's pocketsphinx
// (libpocketsphinx3, libsphinxbase3). Only English is served: language
// "", "en" or any "en-*" tag; anything else is [stt.ErrLanguage].
//
// # Tuning
//
// pocketsphinx's defaults, but -fwdflat no: the second, flat-lexicon
// search pass, which runs at ps_end_utt over the whole utterance, is
// skipped. Measured on 24 dental front-desk sentences (espeak-ng, 8 kHz
// G.711 μ-law, conditioned), one decoder, a shared 2-core machine:
//
//	options              model    word accuracy  CPU s/audio s  Close CPU
//	defaults             generic  31.5%          0.79           434 ms
//	defaults             domain   85.6%          0.093           92 ms
//	-fwdflat no          generic  29.5%          0.61            65 ms
//	-fwdflat no          domain   87.0%          0.065            7 ms
//	-bestpath no         domain   87.0%          0.106          106 ms
//	-fwdflat no          generic  21.2%          0.72            15 ms
//	  -bestpath no       domain   81.5%          0.065            2 ms
//
// Close's CPU is the wait between the end of the caller's turn and the
// text on an idle core. The same sentences through the previous method
// (pocketsphinx_continuous per utterance, no conditioning) scored 3.4%
// with the generic model at 1.0 CPU s per audio s, model loading
// included. -remove_silence no lost 1 to 7 points; -maxhmmpf 3000 cut
// the generic model's CPU to 0.40 s per audio s but lost 5.5 points;
// -pl_window 5 changed neither accuracy nor CPU.
//
// With the phone transform and a domain model (30 held-out dental
// sentences in four of the transform's training voices over G.711, 1,008
// words, `adapt tune`, two decoders), no option moved word accuracy past
// the run-to-run spread of about a point: defaults 60.9 %, -lw 8 60.9 %,
// -lw 10 59.8 %, -wip 0.2 61.0 %, -remove_noise no 60.0 %, -topn 8
// 61.6 %, wider beams (-beam 1e-60 -wbeam 1e-50 -pbeam 1e-60) 61.6 %.
// Which decoder an utterance gets moves it too: the cepstral mean is
// live, carried from one utterance to the next (61.6 % with feat.params'
// -cmninit given explicitly, the same as the default); a -cmninit from
// conditioned phone speech (the mean cepstrum of the transform's 3 hours
// of training audio) changed nothing (65.8 % with and without, one
// decoder, with lm's common words). [Config.Options] and
// [Config.NarrowbandOptions] set any option for a deployment.
//
// The generic blend, on the same held-out set (adapt tune, with lm's
// common words): none 64.8 %; weight 0.2 71.9 %, 0.4 72.5 %, 0.6 71.9 %,
// 0.8 71.8 %; at 0.4 with -lw 5, 8, 10: 72.8, 72.1, 70.5 %; with the
// domain weight 0.15 or 0.5 instead of 0.3: 72.8, 72.7 %; with the
// common words at 0.02: 72.2 %. Decoding a whole utterance at once
// (full_utt, so feat.params' -cmn batch takes the utterance's own mean)
// instead of a stream gained 1.3 points on one-piece recognition only and
// is not used; neither is ps_start_stream before each utterance (resets
// the noise estimate: 70.6 against 71.9 %). Without the blend (65.1 %),
// none of -fwdflat yes, -silprob 0.05, -fillprob 1e-3, -pip 0.3 or 3,
// -pl_window 0, unbounded -maxhmmpf and -maxwpf, -topn 16 moved it past a
// point; -bestpath no lost 4.
//
// A decoder's live cepstral mean starts from -cmninit, and the model's
// feat.params sets that (to a mean of wideband speech) after the options
// are read, so a -cmninit option does nothing: the earlier -cmninit
// measurements above changed nothing for that reason. A new decoder
// therefore hears its first utterances of phone audio against the wrong
// mean: the held-out set decoded with a new decoder for every utterance
// read 67.9 % against 72.5 % on decoders that had heard the others. With
// -featparams naming a copy of feat.params whose -cmninit is the mean of
// the phone transform's training audio ([PhoneCMNInit],
// [WritePhoneFeatParams]; parley serve gives it to narrowband decoders
// with the builtin transform), the new decoders read 69.8 %, and decoders
// that had heard the others 72.5 % as before.
//
// # Limits
//
// Accuracy on an open vocabulary is poor (about 30% of words on phone
// speech): the generic model is a fallback; a domain model is what makes
// the recogniser usable, and it hears only the domain's words, the
// conversation corpus's and lm's 10,000 common ones. The
// generic model costs about 0.6 CPU seconds per second of speech, a
// domain model about 0.07. A stream holds its decoder from the first
// word to the end of the turn, decoding or not: a pool of N lets N
// callers speak at once, the next waits for a turn to end (its audio
// queues meanwhile and decodes faster than real time once it has a
// decoder). An utterance longer than [MaxAudio] is refused
// by Transcribe and cut there by a stream. Building with -tags nosphinx
// leaves the binding out (the binary can then be fully static): Available
// reports the engine unavailable.
package sphinx
