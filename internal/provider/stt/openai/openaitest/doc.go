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
package openaitest
