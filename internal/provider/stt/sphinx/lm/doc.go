// Package lm builds what the offline recognizer (stt/sphinx, pocketsphinx
// 0.8) decodes one agent's calls with: a trigram language model in the
// ARPA text format (pocketsphinx -lm) and a pronunciation dictionary
// (-dict), from the texts the conversation is about (the agent's prompt,
// first message, flow nodes, transfer conditions, knowledge). [Build]
// writes both; it is pure Go apart from running espeak-ng, and the same
// inputs give the same bytes, so a cache keyed by the texts is exact.
//
// # Text
//
// [Sentences] turns written text into what a caller would say: lower
// case; sentences end at . ? ! ; and a colon before a space, at line
// breaks, bullets and parentheses; {{variables}}, HTML tags and link
// targets are dropped; URLs and e-mail addresses are said by host ("acme
// dot com"); numbers are words, worded by package spoken, which the
// benchmark's normaliser (bench/wer) uses too:
// "9:30" nine thirty, "$40" forty dollars, "2nd" second, "20%" twenty
// percent, four or more digits one by one (PINs, extensions), "(555)
// 123-4567" digit by digit; plus years after a month or a cue such as "in"
// or "since" (1985 nineteen eighty five, 2019 twenty nineteen), a day
// after a month as an ordinal ("March 3" third), "9am" nine a m, "10-15"
// ten to fifteen, and titles and common abbreviations spelled out ("Dr."
// doctor).
//
// # Model
//
// Two trigram models are estimated with interpolated Witten-Bell
// discounting (a context seen c times with t distinct followers keeps
// t/(c+t) for the lower order; unigrams are add-one over their own
// words), each over sentences framed by <s> and </s>: the domain model
// from the texts, and the conversation model from an embedded corpus
// (conversation.txt: 4,324 short sentences written for this package: 1,536
// that callers say to any business (greetings, yes and no and their
// variants, booking, cancelling and rescheduling, prices, hours,
// addresses, spelling names, dates, times, numbers, phone numbers digit
// by digit, complaints, thanks and goodbyes, asking for a person or a
// repeat, fillers), then what callers say to businesses of five kinds:
// hospitality, health care, homes and cars, accounts and offices, dental
// offices, about 550 each). An agent's texts are in the agent's voice;
// these give the model the way its callers put things. The dental
// section took the recognition benchmark's dental callers over G.711 from
// 64.9 / 65.6 % to 66.6 / 69.0 % (flite slt, one-piece / streamed) and
// 76.2 / 74.9 % to 78.4 / 78.6 % (festival kal), and `adapt tune` from
// 73.0 % to 77.0 %; the four others moved neither the dental nor the
// everyday set past the spread between runs (docs/benchmarks.md). They
// are mixed linearly, P = λ·P_domain + (1-λ)·P_conversation,
// for every n-gram either holds, over the union of their vocabularies, and
// each context's back-off weight is recomputed from the mixture so its
// distribution sums to 1 (as SRILM's static interpolation does).
// Interpolated modified Kneser-Ney, tried in Witten-Bell's place, gave the
// same in-domain perplexity on the test agent (65.3 against 65.2) and a
// worse general one (32.4 against 27.2): its continuation counts want
// more text than an agent has.
//
// A third, unigram model of common words is mixed in with a small weight
// (Weights.Common, default 0.1 against 0.3 and 0.7, so 9 % of the mass):
// the 10,000 most probable words of the generic en-us trigram model that
// its dictionary has (common.txt, with their probabilities). It brings
// words no agent text and no corpus sentence uses into the vocabulary, so
// a caller's "toothache" or "wedding" can be heard as itself instead of
// the nearest domain word: 5.8 % of the benchmark callers' words are
// outside the model without it. On held-out dental sentences in the phone
// transform's training voices over G.711 (adapt tune), word accuracy went
// from 62.1 % to 65.8 % with 10,000 words at 0.1 (64.4 % at 0.05, 65.3 %
// at 0.2; 20,000 words at 0.05: 64.4 %; 3,000 at 0.02: 63.5 %).
//
// The default domain weight λ is 0.3. Measured on the test agent
// (testdata/clinic.txt, a dental front desk with invented names), the
// perplexity of 20 things its callers say was lowest at 0.3 to 0.4 (65.2
// at 0.3; 66.3 at 0.5, 91.0 at 0.8), while 10 things callers say to any
// business went from 24.4 at 0.1 to 27.2 at 0.3 and 33.4 at 0.5
// (TestDefaultWeights); in pocketsphinx, ten sentences spoken by
// espeak-ng had the fewest word errors at 0.3 (55% against 57% at 0.1,
// 62% at 0.5, 59% at 0.7, 71% at 0.9; the generic en-us model 80%). An
// agent's texts are written in the agent's voice, callers speak in
// theirs: the domain brings the words and names, the conversation corpus
// the way callers put them.
//
// # Dictionary
//
// Every word of the model gets its pronunciations from the base
// dictionary (Debian's cmudict-en-us.dict by default, variants as
// "word(2)"); a word it lacks is said by espeak-ng's en-us voice (all
// such words in one run, one a line: `espeak-ng -q -x --sep=_ -v en-us`)
// and its phonemes mapped to the acoustic model's 39 CMU phones. On 1,870
// CMUdict words the guesses agree with CMUdict on 89.7% of phones (58.5%
// of words exactly; TestGuessAgreesWithCMUdict). A word that cannot be
// guessed (another script, said as two words, an unknown phoneme) is left
// out, and the sentences around it are cut there, so the model never
// holds a word the dictionary cannot say.
//
// # Limits
//
// English only (the en-us acoustic model). No pruning: 250 KB of
// knowledge gives a model of about 65,000 n-grams (2 MB of ARPA), built in
// about 0.75 s of CPU (BenchmarkBuild), which pocketsphinx loads and
// searches more slowly than a small one. No <unk>: the model only knows
// its own words, so a caller's other words come out as the nearest known
// ones. Text normalisation is rule-based and reads digits, not meaning
// ("1234" is four digits unless a year cue precedes it). Guessed
// pronunciations of names are espeak-ng's reading of the spelling, and
// often not how the name's owner says it.
package lm
