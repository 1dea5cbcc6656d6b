// Package bench holds load harnesses that run the real parley binary from
// the outside, the way a carrier and callers reach it, and are run only by
// `make bench` and `make bench-calls` (benchmarks, never part of
// `go test ./...` without -bench; the tests here check the harness's own
// pcap, RTP and bencode readers).
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
// BenchmarkCallsHeld (held_test.go; `make bench-calls`) measures calls held
// from the wire: for each N it has SIPp call the agent (and Parley call
// SIPp callees through POST /v1/calls), captures the RTP with dumpcap and
// reads the pcap itself (pcap_test.go, wire_test.go) for late and lost
// frames and each turn on the wire, split into the silence the turn-taking
// policy chose for it (matched to the engine's own record of the turn,
// turns_test.go) and the rest, takes the server's
// CPU, RSS and goroutines per call from /proc and /metrics, profiles it
// with perf at each N's plateau (results/calls-N.perf), and has rtpengine
// relay the same streams, their send phases spread over the 20 ms as
// SIPp's are, as the CPU baseline (rtpengine_test.go, over its bencoded ng
// protocol). SIPp calls from 127.0.0.1, which the server is told to exempt
// from its per-source INVITE limit (--sip-invite-exempt), as an operator
// exempts a carrier's SBC. It writes results/calls-N.json and prints the
// markdown table and each N's figures beside issue 32's goals; a run whose
// figures would mean nothing (calls not all up, calls failed, no profile,
// packets the capture dropped, a saturated machine) prints INVALID and why,
// and fails.
//
// BenchmarkAdmissions (admissions_test.go) starts `parley serve` with the
// simulated dialer on SQLite, and on PostgreSQL in a fresh schema when a
// database URL is set, and POSTs /v1/calls from many keep-alive clients for
// a fixed time (each admitted call rings, is answered and ends by itself a
// second later) while another client lists calls; it reports admissions
// per second, latency, errors and the server's CPU per 1,000 admissions.
//
// BenchmarkCampaignUpload and BenchmarkCampaignDispatch (campaigns_test.go)
// start `parley serve` on SQLite, and on PostgreSQL in a fresh schema when
// a database URL is set. The first POSTs one CSV of 100,000 recipients and
// reports its wall time, rows per second, the server's peak RSS and CPU;
// the second runs a campaign of 100,000 pending recipients at 1,000 calls a
// minute on the simulated dialer (all in their window, or half outside it)
// and reports dials a minute and, net of an idle baseline, the server's
// CPU, database time (parley_store_transaction_seconds) and round trips
// per dial.
//
// BenchmarkRecognition (recognition_test.go; `make bench-stt`, part of
// `make bench`) scores the local recognizer's word error rate with NIST
// sclite on labelled speech (Asterisk's human prompts; dental and everyday
// sentences in flite, festival and espeak-ng voices), each utterance
// carried over a real SIP/RTP call on 127.0.0.1 (package bench/wer),
// generic and adapted to the bench agent's domain, one-piece and
// streamed; PARLEY_BENCH_STT_* select sets, voices, codecs and limits.
//
// Results and the commands that produced them are in docs/benchmarks.md.
package bench
