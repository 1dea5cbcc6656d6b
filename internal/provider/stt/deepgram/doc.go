// Package deepgram owns Parley's client for Deepgram's live-streaming
// speech-to-text API. [Client] implements stt.Streamer (and so
// stt.Recognizer): each utterance is one WebSocket connection to
// GET {BaseURL}/v1/listen, opened when the caller starts speaking, so the
// text is ready moments after the end of the turn.
//
// # Request
//
// Parley's request maps to Deepgram's query parameters:
//
//	Open(ctx, rate, language)   GET /v1/listen?...
//	  Config.Model              model=<Model>          (default nova-3)
//	  language                  language=<BCP 47 tag, as given; "" → en>
//	  audio format              encoding=linear16 channels=1
//	  rate                      sample_rate=<rate>
//	  the text so far           interim_results=true
//	  text for an LLM           punctuate=true smart_format=true
//	  Config.APIKey             header Authorization: Token <key>
//
// Audio goes as binary messages of little-endian 16-bit samples (at most
// 8000 samples each; empty writes send nothing, as Deepgram reads an empty
// message as the end of the stream). When no audio was sent for
// Config.KeepAlive (3 s) a {"type":"KeepAlive"} text message is sent, since
// Deepgram closes a stream that hears nothing for 10 s (NET-0001).
//
// Close sends {"type":"CloseStream"}: the server transcribes what audio it
// still holds, sends the last results and a Metadata message, and closes
// the connection normally. The transcripts of every Results message with
// "is_final": true, in order, joined with single spaces, are the text
// (empty ones, for silence, are dropped). Metadata, SpeechStarted and
// UtteranceEnd messages are ignored. While the stream runs, its Partial
// (stt.Partial) is the final results so far and the latest interim result
// ("is_final": false) after them, which the conversation uses to judge the
// end of the caller's turn and whether they said real words. Result.Language is the language asked
// ("en" for ""); Result.Audio is the audio written.
//
// # Errors
//
// Failures wrap stt.ErrUnavailable: no connection or handshake within
// Config.DialTimeout; a handshake refused with 401 or 403 ("refused the API
// key"; the key itself is never in an error) or any other status; a close
// with an error code, whose reason (DATA-0000, NET-0001, ...) is in the
// text; no normal close within Config.FinalTimeout after CloseStream. A 400
// whose message (dg-error header or err_msg) mentions the language, like
// "No such model/language/tier combination found.", wraps stt.ErrLanguage.
// Errors carry Deepgram's request id when known. Canceling the ctx given to
// Open closes the connection at once; Close then returns ctx.Err(). Close
// returns the text received so far along with any error.
//
// Package deepgramtest is a fake of the protocol on loopback, for tests.
package deepgram
