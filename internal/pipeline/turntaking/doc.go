// Package turntaking owns how an agent takes turns on the phone: the
// documented keys of its runtimeConfig (endpointing, interruption, filler)
// with their defaults and limits, and the word rules the conversation
// engine applies with them. The agent package checks the keys when an
// agent is created or updated; internal/pipeline reads them at the start
// of each call and applies the rules.
//
// # End of turn
//
// The caller's turn ends after a silence whose length depends on the words
// recognised so far (a streaming recognizer's partial text, [Judge]):
//
//   - Complete (the words end with ".", "?" or "!", are a whole short reply
//     such as "yes", "no thanks" or "that's right", end with a word that
//     closes sentences such as "please", "today", "me" or "though" (the
//     adverb: "that's a bit late though"), end with "by" as a particle
//     ("can I come by") or as "bye" ("okay by"), or form a question of
//     four words or more): MinSilence.
//   - Unfinished (they end with ",", ";", ":", a dash or "...", with a
//     filler such as "um" or "you know", or with a word that needs another
//     after it: a conjunction, preposition, article, possessive, auxiliary
//     or subject pronoun such as "and", "because", "even though", "to",
//     "the", "my", "is", "I"): MaxSilence.
//   - Otherwise, nothing recognised yet included: a quarter of the way from
//     MinSilence to MaxSilence (525 ms with the defaults). Most such
//     sentences are finished; a longer wait would cost every turn.
//
// A recognizer without partial text gets MinSilence every time: the words
// cannot tell, and that is the fixed hangover Parley always used.
//
// The engine counts silence in 20 ms frames and ends a wait that falls
// between two frame ends on the nearer one, so the grid adds nothing to
// the wait on average.
//
// # Interruptions
//
// Caller speech stops the agent once it is longer than the agent's
// interruptionThresholdMs and, when partial text is available, holds at
// least MinWords real words ([RealWords]): words that are not backchannels
// ("uh-huh", "mm-hm", "yeah", "yes", "okay", "right", "sure", "I see",
// "got it", ...) nor fillers ("um", "uh", ...).
package turntaking
