// Package voicemail is Parley's answering-machine detector: in the first
// seconds of an outbound call it tells, 20 ms frame by frame, whether a
// person or a machine (voicemail, answering machine, IVR) answered, and once
// it is a machine, when to leave the message: after the beep, or after the
// greeting when there is no beep. It owns the decision and the beep detector;
// the engine owns what follows (hang up with VOICEMAIL_DETECTED, or wait and
// speak). It is pure Go, takes mono 16-bit PCM at 8000 or 16000 Hz, and
// allocates nothing per frame.
//
// # Method
//
// Three kinds of evidence, checked on every frame:
//
//   - The greeting's shape, as Asterisk's app_amd judges it, over the
//     utterances of a voice activity detector (package vad, default
//     settings: speech starts after 60 ms, ends after 300 ms of silence).
//     The greeting runs from the first utterance's first speech frame to
//     the latest speech frame. A person says something short ("Hello?",
//     under a second; "Hello, this is Ada speaking." 1.7 s) and waits for
//     the caller; a machine speaks on ("Hi, you have reached ..., please
//     leave a message after the tone", 4-10 s). So:
//     a greeting spanning more than LongGreeting (2.5 s) is Machine, with
//     room above the 1.5 s or so of a person's greeting;
//     one of more than MaxWords (5) words is Machine, a word being at
//     least 100 ms of speech ended by 100 ms of silence (a person's greeting
//     has one to four, "Yeah, hello? Who is this?" three);
//     AfterGreeting (800 ms, as app_amd) of silence after a greeting
//     within both limits is Human. The pauses inside a machine's greeting,
//     at commas and full stops, are shorter (200-500 ms; espeak-ng's about
//     300).
//   - The transcript: while undecided, a phrase from Config.Phrases
//     (DefaultPhrases: "leave a message", "not available", "after the
//     tone", "voicemail", "you have reached", ...) in the text the engine
//     recognises is Machine at once, which can be before the greeting's
//     length decides (and decides a greeting broken by long pauses). Phrases are matched on whole words,
//     ignoring case, punctuation and apostrophes, across the pieces of text
//     given. After a Human verdict phrases are ignored: the person may well
//     say "she's not available".
//   - A beep, at any time, even after a Human verdict (a machine with a
//     short greeting and a late beep), is Machine.
//
// Dead air, no speech at all, stays Undecided for the Window (6 s) and is
// then Human, "no speech in 6s (dead air)": app_amd calls a long initial
// silence a machine, but a person who answers and waits for the caller to
// speak first is common on outbound calls, and speaking to a silent
// recorder costs little more than a voicemail. Likewise anything still
// undecided at the Window (speech that began late) is Human.
//
// Verdicts are final but for the beep. After Machine the detector watches
// for the end of the greeting: Beep is set on the frames of a beep, from
// MinBeep into it to its end, and AfterBeep from the frame after it (the
// machine is recording: speak); with no beep, GreetingDone is set once
// GreetingPause (2 s) of silence has followed the last speech, beeps coming
// 0.2-1 s after the greeting. A tone that has begun but is not yet a beep
// holds GreetingDone back.
//
// # Beeps
//
// A beep is a steady, nearly pure tone in 400-2600 Hz (answering machines use
// 1000, 1400 or 850 Hz for 0.2-1 s); its frequency is not known in advance.
// Each 20 ms block is Hann-windowed, zero-padded to 512 samples at 16 kHz
// (256 at 8 kHz: bins 31.25 Hz apart at both) and transformed (a 256- or
// 128-point complex FFT of the packed real block). The strongest bin in
// 400-2600 Hz is the candidate; its purity is the share of the block's
// energy within the Hann main lobe around it, ±3 bins (±94 Hz). Before all
// this a 4th-order Butterworth high-pass at 200 Hz removes DC and mains hum
// (50/60 Hz are 40 dB down), which are no part of a beep but would spoil its
// purity and envelope. A block is a tone block when:
//
//   - its level is at least BeepLevel (-55 dBFS RMS; real beeps are -10 to
//     -25);
//   - purity is at least BeepPurity (0.9). A clean tone gives 0.999, one 10
//     dB above white noise about 0.9; a DTMF digit splits its energy between
//     two tones a row and a column apart (0.5 at equal levels, 0.86 with the
//     low tone 8 dB louder, the most twist DTMF receivers accept); a vowel
//     spreads over harmonics 100-250 Hz apart (median 0.3-0.5 on espeak-ng,
//     single blocks up to 0.92);
//   - its envelope is flat: the energies of its four quarters are within
//     1.5 dB of each other. Two tones closer than the 50 Hz a 20 ms block
//     resolves (ringback 440+480 Hz, 400+450 Hz) look pure but beat.
//     Within 20 ms a clean tone's quarters differ by under 1 dB.
//
// Consecutive tone blocks whose frequency stays within 25 Hz of the first
// one's (the frequency is interpolated between bins on the log power, to
// within 3 Hz for a clean tone; a glide is not a beep) form a run; a run of MinBeep (120 ms, six blocks) is
// a beep, so that a beep of 150 ms or more is heard however it falls on the
// blocks (its first and last blocks are partial). Speech does not hold one
// frequency, purity and level for six blocks. Tones between 2.6 and 3.4
// kHz, beeps with strong harmonics (square waves) and beeps less than 10 dB
// above the noise are missed.
//
// Reason gives the beep's frequency to the nearest 10 Hz (few values for a
// metric label); BeepHz to 1 Hz.
//
// # Cost
//
// Per 20 ms frame: the VAD (two biquads and a 4×4 solve), two more biquads
// and one 256-point complex FFT at 16 kHz (128 at 8 kHz). BenchmarkFrame
// measures 8 µs a frame at 16 kHz and 5 µs at 8 kHz (up to 22 and 9 on a
// busy 2-core machine): under 0.1% of a core per call, the VAD a third of
// it, with no allocations. A Detector is for one call and is not safe for concurrent
// use.
package voicemail
