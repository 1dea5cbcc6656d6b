// Package openaitest owns a fake OpenAI audio-transcription server for
// tests: an httptest server on loopback that speaks the real wire protocol,
// so the stt/openai client is tested through its real HTTP, multipart and
// WAV code.
//
// POST /v1/audio/transcriptions is parsed as the API does: a multipart form
// with the audio in "file" (decoded here as a 16-bit PCM WAV: the rate and
// samples are recorded) and the fields model, language, response_format,
// prompt and temperature. It validates what OpenAI validates, with OpenAI's
// error body {"error":{"message","type","param","code"}}: model and file
// are required, language must be two lower-case letters (ISO-639-1), and
// response_format one of json (the default), text and verbose_json. A
// valid request is answered from a script, a function from the decoded
// [Request] to a [Reply]: {"text": ..., "usage": {...}} for json, the bare
// text for text. A non-200 Reply.Status answers with the error body;
// Delay and Hang shape the timing, for timeout tests.
//
// With the [Realtime] option the server also offers the Realtime API's
// transcription sessions (GET /v1/realtime?intent=transcription, a
// WebSocket) in one [Dialect]: OpenAI's current API, its beta shape as
// speaches speaks it (the model in the URL), or the beta's
// transcription_session events. A session starts with its created event,
// takes an update in its dialect (refusing, with an error event, what that
// dialect refuses: the other dialect's fields, a language that is not
// ISO-639-1), buffers appended pcm16 at 24 kHz and commits it as an item
// on the client's commit (an error for less than 100 ms, with OpenAI's
// code and event id, or speaches' bare message) or, with server VAD on,
// after a pause of the configured silence following speech
// (speech_started, speech_stopped, committed). Each item is answered in
// commit order from the same script, its Request holding the item's audio
// at 24 kHz: the text word by word in delta events, then completed; a
// non-200 Status sends failed; Delay and Hang as above. [Server.Sessions]
// records what every connection did.
package openaitest
