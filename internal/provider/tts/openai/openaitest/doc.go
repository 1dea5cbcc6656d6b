// Package openaitest owns a fake OpenAI speech server for tests: an
// httptest server on loopback that speaks the real wire protocol, so the
// tts/openai client is tested through its real HTTP, JSON and streaming
// code.
//
// POST /v1/audio/speech takes the API's JSON body {model, input, voice,
// response_format, speed, instructions} and validates what OpenAI
// validates, with OpenAI's error body {"error":{"message","type","param",
// "code"}}: model, input and voice are required, input is at most 4096
// characters, voice is one of OpenAI's built-in voices ([Voices]) and
// speed within 0.25..4.0. response_format "pcm" and "wav" are served
// (anything else is refused with 400, as the fake cannot encode mp3).
// speaches' sample_rate field is recorded and left to the script, as
// Kokoro-FastAPI ignores it; with [Strict] every field the API does not
// define is refused instead. A valid request is answered from a script, a
// function from the decoded [Request] to a [Reply]: 200 with mono 16-bit
// little-endian PCM at Reply.Rate (24 kHz by default), raw (audio/pcm) or
// after a streaming encoder's WAV header (audio/wav: sizes 0xFFFFFFFF, a
// LIST chunk before the data), written in chunks of Reply.ChunkBytes and
// flushed one by one (chunked transfer, as the API streams). The audio is
// Reply.PCM, by default [Speech] of the input: a 440 Hz tone as long as
// the text would take to say. Reply.Format plays a server that ignores the
// format asked for. A non-200 Reply.Status answers with the error body;
// Delay, ChunkGap and Hang shape the timing, for timeout tests.
package openaitest
