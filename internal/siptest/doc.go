// Package siptest runs real SIP peers on 127.0.0.1 for integration tests:
// SIPp (Debian package sip-tester) playing the scenarios embedded from
// scenarios/, and baresip (Debian package baresip-core) as an auto-answering
// phone that reports the RFC 4733 keypad digits it receives.
//
// A test starts a peer, points the code under test at it, and asserts on the
// peer's verdict and on what it saw:
//
//	trunk := siptest.UAS(t, "uas_answer_bye", siptest.Options{Keys: map[string]string{"hold": "500"}})
//	// ... place a call to "sip:bob@" + trunk.Addr() ...
//	if err := trunk.Wait(); err != nil {
//		t.Fatal(err)
//	}
//
// Every process is killed at t.Cleanup if it is still running, so nothing is
// left running or listening after the test. Ports are picked free on
// 127.0.0.1 and a start that loses a port race is retried on new ones.
//
// # Scenarios
//
// Each scenario's XML comment says its flow and the -key values it reads
// ([name] in the XML, set through Options.Keys; see Options for the
// defaults). Server side (UAS): uas_answer_bye, uas_answer_wait_bye,
// uas_answer_late (answers after ringing, a CANCEL crossing its 200 or
// not), uas_answer_many, uas_auth (407), uas_auth401, uas_busy,
// uas_by_number (answers, is busy or rings by the dialed number's last
// digit: a carrier for a calling list), uas_reject,
// uas_ring_forever, uas_refer, uas_talk (a callee streaming speech, as
// uac_talk below). Client side (UAC): uac_call,
// uac_call_wait_bye, uac_reject, uac_digest, uac_cancel, uac_refer,
// uac_dtmf, uac_talk (a caller streaming speech: Options.Files["speech.wav"],
// made with ULawWAV; for load runs, see bench/). Counts reads SIPp's own
// successful and failed call totals after a run; Dialed, the Call-IDs a
// UAS got per dialed number.
//
// # SIPp 3.6.1 quirks the scenarios work around
//
//   - pause milliseconds, recv response and ereg regexp take no
//     keywords, and a sent response's status code must be literal: hold
//     times go through assignstr/todouble and pause variable, uac_reject
//     lists 40 common 4xx-6xx codes and compares the one it got with [code],
//     uas_reject has one response per code and picks [code]'s, uas_refer
//     compares the Refer-To URI with strcmp.
//   - verifyauth reads only the Authorization header, never
//     Proxy-Authorization: uas_auth (407) checks the username and realm in
//     the scenario and Wait verifies the digest response from the message log.
//   - [authentication username=[user] ...] does not expand nested keywords:
//     the helper passes Keys user and pass as -au and -ap, and -auth_uri so
//     the digest uri is the INVITE's Request-URI.
//   - every variable must be used at least twice; <error> ends the whole
//     SIPp process at once (exit 255), which is how scenarios fail loudly;
//     condexec does not gate actions, so optional steps are nop test jumps.
//   - rtp_stream files are loaded when the scenario is, even if never played:
//     the helper writes tone.wav next to every scenario that names it.
//   - rtp_stream plays the whole file, its WAV header included (46 bytes,
//     about 6 ms of noise per loop), and every call's stream leaves from
//     the one media socket (-mp) with its own SSRC; there are no per-call
//     RTP ports in 3.6.1.
//   - SIPp binds -mp and -mp+2 (audio and video) and a control port (8888 by
//     default, on all addresses): the helper picks all of them on 127.0.0.1.
//   - play_pcap_audio (uac_dtmf) sends through a raw socket, so it needs root
//     or CAP_NET_RAW; its source port is [media_port] only when the m=audio
//     line uses the [media_port] keyword.
package siptest
