// Package espeak is Parley's local, offline text-to-speech: espeak-ng (the
// Debian package espeak-ng) run as a subprocess, one per utterance. It
// implements tts.Synthesizer.
//
// # The process
//
// Each Synthesize runs
//
//	espeak-ng --stdout -b 1 -v VOICE -s WPM --stdin
//
// and writes the text to its stdin, so text is never an argument: text that
// starts with "-" or reads "--help" is spoken like any other, and length is
// no concern of the command line. Before that the text is cleaned (Clean):
// invalid UTF-8 is dropped, line breaks and tabs become spaces, other
// control characters are removed, and surrounding space is trimmed. Over
// MaxText (5000) characters after cleaning is tts.ErrTextTooLong; split long
// replies into sentences anyway, for latency. Text that cleans to nothing
// gives no audio and no error, without starting a process, so a caller can
// hand over whatever a language model produced. espeak-ng reads [[...]] as
// phoneme mnemonics; SSML is not enabled.
//
// Canceling the context kills the process; Synthesize always waits for it,
// so none is left behind, and returns ctx.Err(). An error from out does the
// same and is returned as it is.
//
// # Audio
//
// espeak-ng writes a WAV stream to stdout: a 44-byte header and mono 16-bit
// PCM at 22050 Hz. Writing to a pipe it cannot go back to fill in the sizes,
// so the RIFF and data sizes are placeholders (0x7ffff000 from espeak-ng
// 1.51); a data size of 0x7f000000 or more is taken as unknown, and samples
// are read until EOF. The rate is taken from the header, not assumed
// (espeak-ng has no option to ask for another: its voices speak at their
// own rate). The samples are resampled to the rate asked for (audio.Resampler, so there is
// no aliasing at 8 kHz) and handed to out 20 ms at a time as they arrive:
// the first chunk goes out while espeak-ng is still speaking the rest, and
// the next is read only once out returns. Stats.Audio is the audio given to
// out; Stats.Characters the characters of cleaned text.
//
// # Speed
//
// Request.Speed scales Config.WordsPerMinute (default 175, espeak-ng's own):
// -s is round(WordsPerMinute × Speed), Speed 0 meaning 1.0 and other values
// clamped to 0.5..1.5, so by default 88 (0.5) to 263 (1.5) words per minute,
// and never below espeak-ng's floor of 80.
//
// # Voices and languages
//
// A Request.Voice is passed to -v as it is: an espeak-ng voice name,
// language or file, with a variant if wanted ("en-us", "en-us+f3",
// "gmw/en-US"). Anything that could be read as an option, and a voice
// espeak-ng does not have, is tts.ErrUnknownVoice.
//
// Without a Voice, Request.Language (BCP 47, "" meaning "en") picks one
// from `espeak-ng --voices`, read once per Synthesizer: the tag is lowered
// and then it and ever shorter prefixes of it ("pt-BR", then "pt") are looked
// up among the voices' languages and their other languages ("zh" → cmn,
// "no" → nb). A few preferences override espeak-ng's own ranking: "en" is
// en-us (espeak-ng would pick en-gb), en-AU, en-NZ, en-IE, en-ZA and en-IN
// are en-gb, "fr" is fr-fr, "zh" cmn and zh-HK yue. A language with no voice
// falls back to en-us, with a warning logged once per language, rather than
// failing the call.
//
// Available checks that the binary runs; a missing binary (or one that
// crashes) makes Synthesize fail with an error wrapping tts.ErrUnavailable
// that names the package.
package espeak
