// Package openai owns Parley's text-to-speech client for OpenAI's speech
// API and the servers that copy it (a local speaches or Kokoro server,
// LocalAI, ...). [Synthesizer] implements tts.Synthesizer with one plain
// HTTP request per utterance whose answer is streamed: no SDK, so no
// OPENAI_* environment variable can change where the text goes or which
// key is sent, and the body is read as it arrives.
//
// # The request
//
// Synthesize(ctx, r, rate, out) sends
//
//	POST {BaseURL}/audio/speech
//	Authorization: Bearer {APIKey}          (omitted when APIKey is "")
//	Content-Type: application/json
//
//	{"model":           Config.Model (default gpt-4o-mini-tts),
//	 "input":           r.Text,
//	 "voice":           r.Voice, or Config.Voice (default alloy) when "",
//	 "response_format": Config.Format: "wav" (default) or "pcm",
//	 "sample_rate":     with wav, the rate the line plays (rate); with
//	                    pcm, Config.PCMRate when set; else left out,
//	 "speed":           r.Speed clamped to the API's 0.25..4.0;
//	                    left out when 0 (or NaN): the server's 1.0}
//
// r.Language is not sent: OpenAI's voices speak the language of the text.
// r.Temperature is ignored: the API has no such knob (instructions, which
// steer the style of gpt-4o-mini-tts in words, are not sent either).
//
// # The sample rate
//
// Servers answer at different rates: OpenAI and Kokoro-FastAPI at 24 kHz
// (OpenAI's API offers no other rate: its pcm is 24 kHz and it has no
// sample_rate parameter, so its voices are always converted for the line,
// an 8 kHz G.711 line by audio.Resampler's exact 3:1 decimator),
// speaches at its model's rate (22,050 Hz for most Piper voices) unless
// asked for another with sample_rate, which speaches honours and
// Kokoro-FastAPI ignores. So the rate is asked for and then read from the
// answer, never assumed: a WAV's header says the rate and encoding of what
// follows (16-bit PCM or 32-bit float, channels averaged to mono; a
// streaming encoder's placeholder sizes mean "to the end", and a LIST or
// other chunk before the data is skipped), and is believed over what was
// asked. A server that refuses sample_rate (400 or 422 naming it, as a
// strict API does for a field it does not define) is asked again without
// it, and never again with it (logged once).
//
// A raw answer is read at the rate its Content-Type names (";rate=22050"),
// else, when pcm was asked for, at Config.PCMRate (default [Rate], OpenAI's
// 24 kHz). What cannot be resolved is refused with tts.ErrUnavailable and a
// message saying what to set: raw samples of no stated rate when a WAV was
// asked for (the server ignored response_format), a WAV Content-Type
// without a header, a WAV of another encoding (8- or 24-bit, mu-law), and
// compressed audio (mp3, ogg, ...).
//
// # Audio
//
// The audio is sent as it is generated, read as it arrives, and every read
// goes to out at once, resampled from the answer's rate to rate with
// audio.Resampler; a frame split between reads is joined, and an
// incomplete last frame dropped. The next read waits until out returns.
// Stats.Characters is the runes of r.Text, Stats.Audio the audio handed to
// out. Text of nothing but white space gives no audio and no error,
// without a request.
//
// # Limits, timeouts and errors
//
// Text over [MaxText] (4096) characters is tts.ErrTextTooLong without a
// request, as is a 400 or 422 answer about the input's length. A 400, 404
// or 422 answer that names the voice (in its message, or as its "param",
// as OpenAI does: "Invalid value: 'bob'. Supported values are: ...") is
// tts.ErrUnknownVoice. Everything else wraps tts.ErrUnavailable: no
// connection, 401 and 403 ("key refused"; the key, and anything in the
// server's message that looks like one, never appear in the error), 429,
// 5xx, other refusals, an answer of text or JSON instead of audio, an
// answer without audio, a stream that breaks off, and the timeouts: the
// first audio must arrive within Config.FirstAudioTimeout (default 10 s)
// of sending the request, and after that no read may wait longer than
// Config.StallTimeout (default 5 s). Time spent in out does not count:
// a caller that paces playback is not a stalled server. The server's
// message is kept in the error text. Nothing is retried, since audio may
// already have been played.
//
// An error from out stops the read and is returned as it is. Canceling ctx
// stops the read at once and returns an error wrapping ctx.Err() and no
// kind; no audio is handed to out after that.
package openai
