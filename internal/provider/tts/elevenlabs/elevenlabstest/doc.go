// Package elevenlabstest owns a fake of the ElevenLabs text-to-speech
// WebSocket API (GET /v1/text-to-speech/{voice_id}/stream-input) for tests:
// a loopback server that speaks the real wire protocol, so a client is
// tested through its real WebSocket, JSON and base64 code.
//
// # The protocol, as the fake plays it
//
// The handshake checks the path, the xi-api-key header (or the "xi-api-key"
// field of the first message, which the API also takes) and the query:
// model_id, output_format (only the PCM formats pcm_8000, pcm_16000,
// pcm_22050, pcm_24000 and pcm_44100; the fake speaks no MP3, μ-law or
// Opus, and the API's default output_format is MP3, so a client must ask)
// and language_code, which only the v2.5 models (eleven_flash_v2_5,
// eleven_turbo_v2_5) accept.
//
// The client then sends JSON text messages: first {"text":" ", ...} with
// optional voice_settings (BOS), then text chunks {"text":"Hello ",
// "flush":true} (or "try_trigger_generation"), then {"text":""} (EOS).
// Every message is parsed and recorded in a [Session] ([Server.Sessions];
// handshakes the server refuses leave none).
// Text is generated when a chunk carries flush or at EOS. The server
// answers with
//
//	{"audio":"<base64 s16le mono PCM>","isFinal":null,
//	 "normalizedAlignment":{...},"alignment":{...}}
//
// messages, each carrying Reply.Chunk of audio (the last one shorter), at
// the output_format rate; after EOS it sends {"isFinal":true} and closes
// with 1000. The default audio is a tone (Reply.ToneHz) lasting
// Reply.PerChar per character of text, so tests can check pitch and
// duration after resampling.
//
// # Errors, as the API reports them
//
// A wrong or missing key closes the socket with 1008 "Invalid API key"
// after the first message, or with Options.RejectKey answers the handshake
// 401 with the API's {"detail":{"status":"invalid_api_key",...}} body. An
// unknown voice sends {"message":"A voice for the voice_id ... was not
// found.","error":"voice_not_found","code":1008} and closes with 1008 and
// the same reason. Options.HandshakeStatus answers every handshake with
// that HTTP status (429, 503, ...). Reply.Fail reports an error after some
// audio chunks (a JSON error message, a close frame, or both),
// Reply.FirstDelay and Reply.Gap shape the timing, and Reply.Hang stops
// sending and holds the socket open until the client leaves.
package elevenlabstest
