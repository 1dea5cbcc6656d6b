package apierr

import (
	"context"
	"errors"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// MinSecretLen is the shortest secret, in characters, that Redact cuts
// out of text. A shorter one turns up by chance inside ordinary words ("t"
// in "operator"): replacing it garbles the text, and where the marks fall
// spells the secret out; even text shown untouched tells the reader which
// letters the secret is not. From eight characters on, a secret that is
// not an ordinary word does not occur in an error message by chance (an
// 8-character run of letters and digits matches one given run once in
// about 2·10¹⁴), so a match is an echo, and replacing it whole hides it.
// Real credentials are far longer: Twilio's auth tokens have 32
// characters, OpenAI's, Deepgram's and ElevenLabs' keys 32 to over 100.
const MinSecretLen = 8

// redacted stands in for a secret or a key in an error message.
const redacted = "[redacted]"

// keyLike finds an OpenAI-style key in a word: "sk-" not inside another
// word ("sk-proj-...", "'sk-...", "key:sk-..."; not "task-based").
var keyLike = regexp.MustCompile(`(^|[^A-Za-z0-9])sk-`)

// Redact returns text from the far end of a request that carried secret
// (an answer, an error event, a close reason) as an error message may
// quote it: one line, every occurrence of secret replaced whole by
// "[redacted]", and any word that looks like an API key too (OpenAI's 401
// message quotes the start of the key it got), then shortened as Shorten
// does, after the cut so that no part of a secret survives it.
//
// ok is false, and shown "", when the text cannot be shown without giving
// something of secret away: secret is shorter than MinSecretLen, or it
// occurs inside a longer word or overlapping itself. The caller then words
// the failure itself (the status, what was refused) without the far end's
// text. An empty secret (none was sent) hides nothing and refuses nothing.
func Redact(text, secret string) (shown string, ok bool) {
	text, s := fold(text), fold(secret)
	if secret != "" {
		if utf8.RuneCountInString(s) < MinSecretLen {
			return "", false
		}
		if text, ok = cutOut(text, s); !ok {
			return "", false
		}
	}
	words := strings.Fields(text)
	for i, w := range words {
		if keyLike.MatchString(w) {
			words[i] = redacted
		}
	}
	shown = Shorten(strings.Join(words, " "))
	if secret != "" && strings.Contains(shown, s) {
		return "", false // a secret spelt by the marks themselves ("[redacted]")
	}
	return shown, true
}

// Quote is ": " and text as Redact shows it with secret, for an error
// message that names the failure first ("the answer is not JSON"); "" when
// Redact shows nothing, so that the naming stands alone.
func Quote(text, secret string) string {
	if shown, _ := Redact(text, secret); shown != "" {
		return ": " + shown
	}
	return ""
}

// fold makes s valid UTF-8 with its white space folded to single spaces,
// as error messages show text; a secret is matched in that form too.
func fold(s string) string {
	return strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
}

// cutOut replaces every occurrence of secret in text by redacted; false
// when one is part of a longer word (a letter or digit right before or
// after it) or overlaps another, where the mark would show where the
// secret's letters were.
func cutOut(text, secret string) (string, bool) {
	var b strings.Builder
	from := 0 // text[:from] is written
	for {
		i := strings.Index(text[from:], secret)
		if i < 0 {
			b.WriteString(text[from:])
			return b.String(), true
		}
		start, end := from+i, from+i+len(secret)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if inWord(before) || inWord(after) {
			return "", false
		}
		if j := strings.Index(text[start+1:], secret); j >= 0 && start+1+j < end {
			return "", false
		}
		b.WriteString(text[from:start])
		b.WriteString(redacted)
		from = end
	}
}

func inWord(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// Trace returns ctx with a client trace that notes when a request's
// headers, which carry the key, have been written, and sent, which reports
// whether they have. Until then the far end has not seen the key, so
// nothing it said can quote it (see Unanswered).
func Trace(ctx context.Context) (traced context.Context, sent func() bool) {
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }}
	return httptrace.WithClientTrace(ctx, trace), wrote.Load
}

// Unanswered words err, the error of a request that got no answer (no
// connection, a broken one, a malformed answer), for an error message:
// without the URL (the configured endpoint: it says what failed, not
// where), and as Redact has it with secret when sent, that is, once the
// request's headers had gone out (Trace): the text of a broken or
// malformed answer quotes the far end. Before that it is shown whole (the
// private-address refusal of the SSRF guard, a refused connection, a
// name that does not resolve), whatever the secret.
func Unanswered(err error, secret string, sent bool) (shown string, ok bool) {
	if ue, isURL := errors.AsType[*url.Error](err); isURL {
		err = ue.Err
	}
	if !sent {
		secret = "" // the far end never had it
	}
	return Redact(err.Error(), secret)
}
