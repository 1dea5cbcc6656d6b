package wer

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// testdata holds the bench agent (a dental clinic's front desk) and the
// sentences its callers, and anyone else, say.
//
//go:embed testdata/dental/*.txt testdata/everyday.txt
var testdata embed.FS

// agentFiles are the bench agent's texts, in the order an agent gives
// them: prompt, first message, flow-node instructions, transfer
// conditions, knowledge. Paragraphs (blank-line separated) of a file are
// separate texts, as separate nodes and sources are.
var agentFiles = []string{"prompt.txt", "first-message.txt", "nodes.txt", "transfer-conditions.txt", "knowledge.txt"}

// DentalDomain is the bench agent's [stt.Domain]: what an adaptable
// recognizer is tuned to for the in-domain set. Its Key is a hash of the
// texts.
func DentalDomain() stt.Domain {
	var texts []string
	h := sha256.New()
	for _, name := range agentFiles {
		b, err := testdata.ReadFile("testdata/dental/" + name)
		if err != nil {
			panic(fmt.Sprintf("wer: embedded %s: %v", name, err)) // embedded at build time
		}
		for _, p := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n\n") {
			if p = strings.Join(strings.Fields(p), " "); p != "" {
				texts = append(texts, p)
				h.Write([]byte(p))
				h.Write([]byte{0})
			}
		}
	}
	return stt.Domain{Key: "wer-dental-" + hex.EncodeToString(h.Sum(nil))[:16], Texts: texts}
}

// DentalCallers are ~100 sentences callers say to the bench agent: in its
// domain, not copied from its texts.
func DentalCallers() []string { return lines("testdata/dental/callers.txt") }

// Everyday are sentences outside the bench agent's domain.
func Everyday() []string { return lines("testdata/everyday.txt") }

// lines reads an embedded file's lines, skipping blanks and '#' comments.
func lines(name string) []string {
	b, err := testdata.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("wer: embedded %s: %v", name, err))
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
