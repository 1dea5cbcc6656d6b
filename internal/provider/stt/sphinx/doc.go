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
// One process per call, loading the ~50 MB model each time (about half a
// second of start-up), so a Recognizer is safe for concurrent use and holds
// no state. Utterances over [MaxAudio] are refused with
// [stt.ErrAudioTooLong]; a run over [Config.Timeout] (default 10 s) is
// killed. Canceling ctx kills the process and waits for it: no zombies, no
// leaked goroutines. Accuracy on clean speech with common words is fair
// and on unusual words and names poor: it is a fallback and a test engine,
// not a substitute for a modern recognizer.
package sphinx
