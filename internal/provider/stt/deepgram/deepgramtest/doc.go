// Package deepgramtest owns a fake of Deepgram's live-streaming
// speech-to-text API for tests: an httptest server on 127.0.0.1 that
// speaks the real WebSocket protocol, so the deepgram client, and the
// engines built on it, are tested through their real handshake, framing
// and JSON.
//
// GET /v1/listen checks "Authorization: Token <key>" (401 otherwise),
// records the query and headers, and upgrades to a WebSocket. Binary
// messages are audio (little-endian int16, recorded in order); text
// messages are control messages (KeepAlive, Finalize, CloseStream),
// recorded by type. Every response carries a dg-request-id header; a
// refusal also carries dg-error and Deepgram's JSON error body
// {"err_code","err_msg","request_id"}.
//
// A stream's text comes from Options.Transcript, cut into sentences: each
// is one Results message with "is_final": true (preceded by an interim one
// when the client asked for interim_results=true), with word timings
// spread over the audio received. Finalize sends the results not sent yet,
// the last one marked from_finalize. CloseStream sends the remaining
// results, an empty final (Deepgram's answer for trailing silence) and a
// Metadata message, then closes the connection normally (1000). An empty
// binary message is taken as CloseStream, as Deepgram does; audio on a
// stream without encoding= is closed with 1008 "DATA-0000".
//
// Options inject failures: refused handshakes (RefuseStatus, an unknown
// language in Languages), error closes after some audio (CloseCode,
// CloseReason, CloseAfter), slow answers (FinalDelay), a server that never
// answers (Hang) and Deepgram's idle close (IdleTimeout, 1011 NET-0001).
// [Server.Streams] tells what the server saw.
//
// Typical use, in a test of code that takes an stt.Streamer:
//
//	srv := deepgramtest.New(t, deepgramtest.Options{
//		Transcript: func(deepgramtest.StreamInfo) string { return "I'd like to book a table." },
//	})
//	rec := deepgram.New(deepgram.Config{BaseURL: srv.URL, APIKey: deepgramtest.DefaultAPIKey})
//	// ... run the code under test with rec, then:
//	got := srv.Streams()[0] // Query, Audio, Controls, End, ...
package deepgramtest
