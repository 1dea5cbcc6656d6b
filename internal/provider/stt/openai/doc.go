// Package openai owns Parley's speech-to-text client for OpenAI's audio
// transcription API and the servers that copy it (a local speaches or
// faster-whisper server, whisper.cpp's server, LocalAI, Groq, ...).
// [Recognizer] implements stt.Recognizer with one plain HTTP request per
// utterance: the form is small enough to build by hand, and no SDK means
// no OPENAI_* environment variable can change where the caller's speech
// goes or which key is sent. [Streamer] adds stt.Streamer over the
// Realtime API's transcription sessions, where the server offers them.
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
//
// # Streaming
//
// A Streamer's Open (Config.Streaming auto or realtime) opens a WebSocket
// to {BaseURL}/realtime?intent=transcription (https becomes wss; servers
// other than api.openai.com, speaches among them, also get &model=, which
// they take from the URL; the Authorization header as above). The
// session's first event tells its dialect: OpenAI's current API
// (session.created of a session of type "transcription"), its beta shape
// as speaches speaks it (session.created with input_audio_transcription
// at the top), or the beta's transcription_session.created. Parley answers
// in that dialect with the model, the language's ISO-639-1 code, pcm16 at
// 24 kHz, and the server's VAD cutting the speech into segments at pauses
// of Config.SegmentSilence (default 200 ms) without ever answering, and
// waits for the update to be confirmed: all within Config.DialTimeout
// (default 5 s).
//
// Write resamples the line's audio to 24 kHz and sends it in
// input_audio_buffer.append events. The server commits a segment at each
// pause and transcribes it while the caller goes on, so the stream's
// Partial (stt.Partial) has the completed segments and the delta events
// of the one in progress (or speaches' partial transcripts) before the
// caller has finished. Close commits what is left (a commit refused as
// empty, the VAD having taken everything, is no error), waits up to
// Config.FinalTimeout (default 10 s) for every committed segment's
// completed event, and joins their texts in order. A failed segment, an
// error event, the session's end or the timeout are stt.ErrUnavailable;
// the Result still holds the text that came.
//
// With Streaming auto, a server that refuses the session (an HTTP answer
// to the upgrade such as whisper.cpp's 404, an error event, another first
// event) is remembered, logged once, and every utterance goes whole from
// then on: the stream gathers the audio and Close sends one request as
// Transcribe does. A session that could not open for another reason (no
// connection, a timeout) sends that one utterance whole. With Streaming
// realtime, Open fails instead; with off, every utterance goes whole.
package openai
