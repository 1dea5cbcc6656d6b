// Package vad is Parley's voice activity detector: it tells, 20 ms frame by
// frame, whether the caller is talking, for barge-in (the caller starts
// talking over the agent), endpointing (the caller has stopped) and telling
// backchannels ("mm-hm", shorter than an interruption threshold) from real
// interruptions. It takes mono 16-bit PCM at 8000 or 16000 Hz, the frames
// media delivers, is pure Go and allocates nothing per frame.
//
// # Method
//
// Each frame goes through a 4th-order Butterworth high-pass at 250 Hz
// (two biquads). Speech on the phone lives in 300-3400 Hz; the filter
// removes DC and mains hum (50/60 Hz are 50 dB down) and the fundamental's
// low rumble, so everything below is measured in the speech band. In the
// same pass the detector measures:
//
//   - Level: the filtered frame's energy in dBFS (0 dBFS is a full-scale
//     square wave; digital silence is -100, the lowest Level reported).
//   - the zero-crossing rate of the filtered frame;
//   - the first row of its covariance matrix (lags 0-4), from which the
//     gain of the best 4th-order linear predictor (covariance method,
//     Cholesky solve with 1e-6 diagonal loading, capped at 60 dB) and the
//     normalised correlations at lags 1-4 follow.
//
// The noise floor is a minimum tracker (minimum statistics): the lowest
// Level over the last eight 200 ms sub-windows plus the current one, 1.6-1.8
// s in all. It falls at once when the background gets quieter and rises, in
// a step, once the quieter past has left the window: after the background
// gets 20 dB louder it calls the new noise speech for at most about 1.8 s.
// The window must outlast the longest stretch of speech without a dip
// between syllables (speech has them every 200-300 ms), which 1.6 s does.
//
// A frame is speech when all hold:
//
//   - Level is above -55 dBFS (quieter is line noise whatever the floor);
//   - Level is above Floor by the margin: 12 dB at Sensitivity 0 down to 3
//     dB at 1, 7.5 dB at the default 0.5; inside an utterance 3 dB less (2
//     dB at least), so soft syllables do not end it early;
//   - it is not tonal: its prediction gain is below 25 dB, and it is not a
//     repeat of the frame before with a gain of 10 dB or more. A steady tone
//     (dial, ringback, DTMF, a 1 kHz test tone, the harmonics of hum) is a
//     sum of one or two sinusoids, which four predictor taps predict almost
//     exactly: a clean tone scores 40-60 dB, a tone 20 dB above noise
//     about 20 dB. Voiced speech is a pulse train through moving formants,
//     which four taps predict poorly (under 10 dB on the synthetic speech of
//     the tests; real vowels reach the low teens); noise scores 0-2 dB.
//     "Repeats" means Level within 1 dB and the lag 1-4 correlations within
//     0.05 of the frame before: a tone's envelope and spectrum stand still,
//     speech's do not. That catches tones 10-25 dB above the noise from their
//     second frame;
//   - the zero-crossing rate is 150-6000 per second: below is hum or
//     rumble that survived the filter, above is hiss.
//
// # Hysteresis
//
// Speech frames adding up to StartAfter (default 60 ms: three frames),
// where gaps of up to 40 ms of non-speech do not break the run, start an
// utterance. Start is reported on the frame that completes the run, which
// is as soon as a causal detector can know; the utterance counts from the
// run's first speech frame. Hangover (default 300 ms) of non-speech ends it:
// End is reported on the frame that completes the hangover, with Talking
// already false. Length is the utterance's span from its first speech frame
// to the end of its latest speech frame, so it does not grow through the
// trailing silence: a 150 ms "mm-hm" ends with Length about 150 ms, which a
// consumer can compare with its interruption threshold. Outside an utterance
// (and before Start) Length is 0.
//
// Silence is the non-speech since the utterance's latest speech frame, so a
// consumer can end the utterance sooner than the hangover (EndUtterance)
// when it knows more, such as the words said: the conversation engine runs
// the detector with its longest wait as the hangover and ends turns itself.
//
// On the synthetic speech of the tests (glottal pulses through three formant
// resonators with a 4 Hz syllable envelope, in white noise) Start comes
// 60-100 ms after onset at 20 and 10 dB SNR, and End 280-300 ms after the
// speech stops.
//
// Process accepts frames of any length; time advances by the samples given,
// and an empty frame changes nothing. A Detector is for one stream and is
// not safe for concurrent use.
package vad
