package main

import (
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/parley-voice/parley/internal/media/audio"
)

// How the response gap is read from a recording (docs/benchmarks.md,
// "Response gap"): a call's recording is stereo, the caller on the left as
// the agent's leg received it and the agent on the right as it was sent.
// Speech is a 20 ms frame above speechDBFS; spans closer than joinGap are
// one turn (the pauses between sentences of one line); spans shorter than
// minSpan are clicks. A response gap is the time from the end of one
// side's turn to the start of the other side's next turn, when the other
// side answers before the first speaks again.
const (
	spanFrame  = 20 * time.Millisecond
	speechDBFS = -45.0
	joinGap    = 700 * time.Millisecond
	minSpan    = 150 * time.Millisecond
)

// span is one stretch of speech in a channel, from the start of the audio.
type span struct{ start, end time.Duration }

// speechSpans are the turns of speech in one channel at rate.
func speechSpans(pcm []int16, rate int) []span {
	n := int(spanFrame * time.Duration(rate) / time.Second)
	var out []span
	for i := 0; i+n <= len(pcm); i += n {
		rms := audio.RMS(pcm[i : i+n])
		if rms <= 0 || 20*math.Log10(rms) < speechDBFS {
			continue
		}
		at := time.Duration(i) * time.Second / time.Duration(rate)
		if k := len(out) - 1; k >= 0 && at-out[k].end <= joinGap {
			out[k].end = at + spanFrame
			continue
		}
		out = append(out, span{at, at + spanFrame})
	}
	return slices.DeleteFunc(out, func(s span) bool { return s.end-s.start < minSpan })
}

// responseGaps are the gaps from each turn of from to the answering turn
// of to: to's first span that starts after from's turn ended and before
// from's next turn starts. Overlaps (an interruption) are not gaps.
func responseGaps(from, to []span) []time.Duration {
	var out []time.Duration
	for i, f := range from {
		next := time.Duration(math.MaxInt64)
		if i+1 < len(from) {
			next = from[i+1].start
		}
		for _, t := range to {
			if t.start >= f.end && t.start < next {
				out = append(out, t.start-f.end)
				break
			}
		}
	}
	return out
}

// median of ds (0 when empty).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// words are text's words as a recognizer writes them: lower case, no
// punctuation but word-internal apostrophes.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

// wordErrors are the substitutions, deletions and insertions that turn
// ref into hyp (the edit distance over words sclite reports as errors).
func wordErrors(ref, hyp []string) int {
	prev := make([]int, len(hyp)+1)
	cur := make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			sub := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(hyp)]
}

// wordAccuracy is 1 - WER of hyp against ref (0 when ref is empty).
func wordAccuracy(ref, hyp string) float64 {
	r := words(ref)
	if len(r) == 0 {
		return 0
	}
	return 1 - float64(wordErrors(r, words(hyp)))/float64(len(r))
}
