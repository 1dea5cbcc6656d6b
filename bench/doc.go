// Package bench holds load harnesses that run the real parley binary from
// the outside, the way a carrier and callers reach it, and are run only by
// `make bench` (benchmarks, never part of `go test ./...` without -bench).
//
// BenchmarkCallsWithAudio (calls_test.go) builds and starts `parley serve`
// with SIP on 127.0.0.1, the conversation engine on, and its providers
// behind their real clients against the loopback fakes of their vendors'
// wire protocols (llmtest for the model, deepgramtest for streamed speech
// recognition, tts/openai/openaitest for speech synthesis). SIPp
// (internal/siptest's uac_talk scenario) then calls one agent's number
// PARLEY_BENCH_LOAD_CALLS times at once, each caller streaming the same
// espeak-ng speech with pauses (so the agent hears turns, answers them, and
// is talked over: barge-ins) for PARLEY_BENCH_LOAD_HOLD, then hangs up. The
// run fails if the server dies, a call fails on either side, not every
// call was up at once, a call record lacks its post-call outcome, or legs
// and live calls do not come back to zero; it reports CPU, memory,
// goroutines, turns, interruptions and turn latency under load.
//
// BenchmarkAdmissions (admissions_test.go) starts `parley serve` with the
// simulated dialer on SQLite, and on PostgreSQL in a fresh schema when a
// database URL is set, and POSTs /v1/calls from many keep-alive clients for
// a fixed time (each admitted call rings, is answered and ends by itself a
// second later) while another client lists calls; it reports admissions
// per second, latency, errors and the server's CPU per 1,000 admissions.
//
// Results and the commands that produced them are in docs/benchmarks.md.
package bench
