// Package openai owns Parley's speech-to-text client for OpenAI's audio
// transcription API and the servers that copy it (a local speaches or
// faster-whisper server, LocalAI, Groq, ...). [Recognizer] implements
// stt.Recognizer with one plain HTTP request per utterance: the form is
// small enough to build by hand, and no SDK means no OPENAI_* environment
// variable can change where the caller's speech goes or which key is sent.
//
// # The request
//
// Transcribe(ctx, pcm, rate, language) sends
//
//	POST {BaseURL}/audio/transcriptions
//	Authorization: Bearer {APIKey}          (omitted when APIKey is "")
//	Content-Type: multipart/form-data
//
//	file            = utterance.wav: pcm as a mono 16-bit PCM WAV at rate,
//	                  unchanged (the server resamples as its model needs)
//	model           = Config.Model (default gpt-4o-mini-transcribe)
//	language        = the ISO-639-1 code of the BCP 47 language tag: its
//	                  primary subtag, lower-cased ("en-US" → "en"); the
//	                  field is omitted for "" (the model detects it)
//	response_format = json
//
// and reads the answer {"text": "..."}. The Result's Text is trimmed, its
// Language is the tag asked for (the json format does not say what was
// detected) and Audio the length of pcm. Empty pcm gives an empty Result
// without a request.
//
// # Limits and errors
//
// The API takes at most 25 MiB per request, so a WAV over [MaxWAV] (about
// 13½ minutes at 16 kHz) is stt.ErrAudioTooLong without a request, as is a
// 413 answer. A language tag whose primary subtag is not two or three
// letters is stt.ErrLanguage without a request, as is a 400 or 422 answer
// about the language (OpenAI's "Invalid language ... ISO-639-1 format").
// Everything else wraps stt.ErrUnavailable: no connection, 401 and 403
// ("key refused"; the key, and anything in the server's message that looks
// like one, never appear in the error), 404 (no such model), 429, 5xx,
// other refusals, an answer that is not the expected JSON, and
// Config.Timeout (default 15 s) running out for the whole exchange. The
// server's message is kept in the error text. Nothing is retried: the
// caller is on a live call and decides. Canceling ctx returns an error
// wrapping ctx.Err() and no kind.
package openai
