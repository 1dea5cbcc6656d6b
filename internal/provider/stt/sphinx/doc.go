// Package sphinx is Parley's local, offline speech-to-text: a
// [stt.Recognizer] that runs CMU pocketsphinx (Debian packages pocketsphinx
// and pocketsphinx-en-us, 0.8+5prealpha) as one subprocess per utterance.
//
// # Method
//
// Transcribe resamples the utterance to 16 kHz (what the en-us acoustic
// model was trained on; 8 kHz phone audio is upsampled, which adds no
// information but is what the model's front end expects), pads it with
// 300 ms of silence either side (pocketsphinx_continuous segments its input
// with its own voice-activity detector and drops speech touching the edges),
// writes it to a temporary mono 16-bit WAV file and runs
//
//	pocketsphinx_continuous -infile <tmp>.wav \
//	    -hmm  /usr/share/pocketsphinx/model/en-us/en-us \
//	    -lm   /usr/share/pocketsphinx/model/en-us/en-us.lm.bin \
//	    -dict /usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict
//
// The tool prints one hypothesis line on stdout per speech segment it
// finds; the lines are joined with spaces. Its log (stderr) is kept, capped,
// only to explain a failure. The temporary file is removed afterwards.
//
// # Models
//
// [Config.ModelDir] (default /usr/share/pocketsphinx/model/en-us, from
// pocketsphinx-en-us) must hold the acoustic model directory en-us/, the
// trigram language model en-us.lm.bin and the dictionary
// cmudict-en-us.dict. Only English is served: language "", "en" or any
// "en-*" tag; anything else is [stt.ErrLanguage]. The Debian package has no
// command to show it is installed, so [Available] checks those files.
//
// # Limits
//
// One process per call, loading the model and its 134,000-word dictionary
// each time: about 1.4 s before any audio is decoded, so a 3.3 s utterance
// takes 1.8 s (real-time factor 1.8 on 2 vCPUs, BenchmarkTranscribe). A
// Recognizer holds no state and is safe for concurrent use.
//
// The model is for 16 kHz audio; 8 kHz phone audio (nothing above 4 kHz,
// where the model's filterbank reaches 6.8 kHz) is heard as speech but few
// words come out right. Loud input is normalised to -30 dBFS RMS first:
// full-scale speech throws the model's initial cepstral mean off. Utterances over [MaxAudio] are refused with
// [stt.ErrAudioTooLong]; a run over [Config.Timeout] (default 10 s) is
// killed. Canceling ctx kills the process and waits for it: no zombies, no
// leaked goroutines. Accuracy on clean speech with common words is fair
// and on unusual words and names poor: it is a fallback and a test engine,
// not a substitute for a modern recognizer.
package sphinx
