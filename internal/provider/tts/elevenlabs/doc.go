// Package elevenlabs owns Parley's client for ElevenLabs streaming
// text-to-speech over WebSocket. [Synthesizer] implements tts.Synthesizer;
// package elevenlabstest is a loopback fake of the protocol for tests.
//
// # The session
//
// Each Synthesize opens one WebSocket,
//
//	GET {BaseURL}/v1/text-to-speech/{voice_id}/stream-input
//	    ?model_id=...&output_format=pcm_RATE[&language_code=xx]
//	xi-api-key: <key>
//
// sends three JSON messages at once,
//
//	{"text":" ","voice_settings":{"stability":S,"similarity_boost":0.75,"speed":V}}
//	{"text":"Hello there. ","flush":true}
//	{"text":""}
//
// (BOS, the whole text ending in a space as the API asks, and EOS), and
// reads {"audio":"<base64 s16le PCM>","isFinal":null,...} messages until
// {"isFinal":true}, after which the server closes the socket. The audio of
// each message goes to out as soon as it is decoded and resampled; out
// runs on the reading goroutine, so the next message is read once it
// returns. An error from out closes the socket and is returned as it is;
// canceling ctx closes the socket at once and returns ctx.Err().
//
// Opening a socket per utterance costs a TLS handshake (some 100-200 ms
// to the API). Keeping one open per call and speaking each utterance in a
// context of the multi-context endpoint (/multi-stream-input) would save
// it; that is left for when latency measurements ask for it.
//
// # Mapping of tts.Request
//
//   - Voice is the voice_id (default Config.Voice, itself defaulting to
//     DefaultVoice); one that cannot be an ElevenLabs voice id (anything
//     but letters, digits, "_" and "-") is tts.ErrUnknownVoice without a
//     connection.
//   - Speed is voice_settings.speed, 0 meaning 1.0, clamped to the API's
//     0.7..1.2.
//   - Temperature (0..2) sets voice_settings.stability = 1 - T/2, clamped
//     to 0..1: more temperature, a less stable, more varied voice. nil
//     sends the API's default stability, 0.5 (as T = 1 would).
//     similarity_boost is always the API's default, 0.75.
//   - Language is sent as language_code, its primary subtag lowered
//     ("pt-BR" → "pt", "nb" → "no"), only to models that take one (the
//     v2.5 models, eleven_flash_v2_5 and eleven_turbo_v2_5; the API
//     rejects language_code for the others) and only when the model
//     speaks it; otherwise it is left out, the model reads the language
//     from the text, and a warning is logged once per language.
//
// # Text
//
// The text is cleaned as for espeak: invalid UTF-8 dropped, line breaks
// and tabs made spaces, other control characters removed, surrounding
// space trimmed. Text that cleans to nothing gives no audio and no error,
// without a connection. More than MaxText (5000) characters is
// tts.ErrTextTooLong, without a connection: 5000 is the smallest
// per-request limit among ElevenLabs' speech models (eleven_v3; the v2.5
// models take 40,000, the multilingual ones 10,000) and the same as
// espeak's, so a caller that splits for one engine splits for both.
//
// # Audio
//
// output_format is the lowest of pcm_8000, pcm_16000, pcm_22050,
// pcm_24000 and pcm_44100 at or above the rate asked for (pcm_44100 above
// it, which the API reserves for its Pro tier): the engine asks for the
// line's rate, so a G.711 line gets pcm_8000 and a G.722 line pcm_16000,
// with nothing to resample. Otherwise audio.Resampler converts it to
// exactly the rate asked for. Stats.Characters is the runes of cleaned
// text once it is sent (what the API bills), 0 before; Stats.Audio the
// audio handed to out.
//
// # Errors
//
// Every failure of the service wraps tts.ErrUnavailable, with the reason
// ElevenLabs gave and never the key: a handshake answered 401 or 403, or
// an error message or close frame about the API key; quota and rate
// limits (429, quota_exceeded), 5xx, a connection that fails, no
// handshake within Config.DialTimeout, no audio within
// Config.FirstAudioTimeout of connecting, a gap between messages over
// Config.StallTimeout, a socket closed before isFinal, a message that is
// not the API's JSON. An error message or close frame saying the voice
// does not exist ("voice_not_found") wraps tts.ErrUnknownVoice instead.
// Errors arrive as {"message":...,"error":...,"code":1008} messages,
// close frames with code 1008 and the message as reason, or both; the
// first one read decides.
package elevenlabs
