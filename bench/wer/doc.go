// Package wer measures how well a speech recognizer (any stt.Recognizer)
// hears callers: word error rate on labelled speech carried the way
// Parley carries a call, scored by NIST sclite. BenchmarkRecognition
// (bench/recognition_test.go, `make bench-stt`) runs it; the method and
// results are in docs/benchmarks.md.
//
// It owns:
//
//   - the labelled sets ([Set]): Asterisk's English prompts, real human
//     recordings from Debian's asterisk-core-sounds-en-wav with the
//     transcript asterisk-core-sounds-en ships ([AsteriskSet],
//     [ParseTranscript]); and sentences a dental clinic's callers say
//     ([DentalCallers], in the domain of the bench agent whose texts are
//     [DentalDomain]) or anyone says ([Everyday]), spoken by synthetic
//     voices other than the agent's (flite, festival) and by the agent's
//     own espeak-ng ([Voices], [SentenceSet]);
//   - the reference text's normalisation ([Normalise]): notes of
//     non-speech out, numbers as words, punctuation out, lower case,
//     applied to references and recognizers' texts alike;
//   - the phone line ([Line]): two of Parley's SIP user agents
//     (internal/media/sipua) on 127.0.0.1, a call per utterance, so
//     resampling to the line's rate, the codec, RTP packetisation, pacing,
//     the leg's jitter handling and decoding are the ones a call has; an
//     utterance the line damaged (a machine short of CPU delays packets)
//     is called again;
//   - recognition ([Transcribe] one-piece at the end of the utterance,
//     [Stream] frame by frame in real time for an stt.Streamer), with the
//     CPU it costs (this process and the recognizer's processes) and the
//     time from the end of the speech to the final text;
//   - scoring ([ScoreTranscripts]: trn files, sclite, its raw summary
//     parsed by [ParseSummary]) and the report ([Bench.Run], [Markdown]).
package wer
