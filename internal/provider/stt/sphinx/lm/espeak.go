package lm

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"unicode"
)

// DefaultEspeak is the espeak-ng command pronunciations are guessed with.
const DefaultEspeak = "espeak-ng"

// guess asks espeak-ng how the en-us voice says each word and maps its
// phonemes to the acoustic model's phones. Words go through one run (one
// per core when there are many), one word a line (each its own clause, so espeak-ng prints one line for
// it); if the lines do not match the words, the batch is halved until they
// do, so one odd word cannot shift the others' answers. A word espeak-ng
// says as more than one word (a Roman numeral, a symbol), in a script
// other than Latin, or with a phoneme the table does not know, gets no
// pronunciation.
func guess(ctx context.Context, espeak string, words []string) (map[string]string, error) {
	var latin []string
	for _, w := range words {
		if isLatin(w) {
			latin = append(latin, w)
		}
	}
	// espeak-ng takes about a millisecond a word: many words are split
	// between processes, one a core.
	parts := min(runtime.GOMAXPROCS(0), (len(latin)+minBatch-1)/minBatch)
	outs := make([]map[string]string, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := range parts {
		outs[i] = map[string]string{}
		chunk := latin[i*len(latin)/parts : (i+1)*len(latin)/parts]
		wg.Go(func() { errs[i] = guessBatch(ctx, espeak, chunk, outs[i]) })
	}
	wg.Wait()
	out := map[string]string{}
	for i := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		maps.Copy(out, outs[i])
	}
	return out, nil
}

// minBatch is the fewest words worth a process of their own.
const minBatch = 200

func guessBatch(ctx context.Context, espeak string, words []string, out map[string]string) error {
	if len(words) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, w := range words {
		in.WriteString(w)
		in.WriteString(".\n")
	}
	cmd := exec.CommandContext(ctx, espeak, "-q", "-x", "--sep=_", "-v", "en-us")
	cmd.Stdin = &in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("espeak-ng: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(lines) != len(words) {
		if len(words) == 1 {
			return nil
		}
		half := len(words) / 2
		if err := guessBatch(ctx, espeak, words[:half], out); err != nil {
			return err
		}
		return guessBatch(ctx, espeak, words[half:], out)
	}
	for i, w := range words {
		if p, ok := cmuPhones(strings.TrimSpace(lines[i])); ok {
			out[w] = p
		}
	}
	return nil
}

func isLatin(w string) bool {
	for _, c := range w {
		if unicode.IsLetter(c) && !unicode.Is(unicode.Latin, c) {
			return false
		}
	}
	return true
}

// kirshenbaum maps the phonemes espeak-ng's en-us voice prints (-x,
// Kirshenbaum-style ASCII, stress marks removed) to CMUdict phones.
// R-coloured vowels carry their R ("A@" is AA R), which is dropped when an
// r follows; "@-" (an optional schwa) is dropped, as CMUdict does.
var kirshenbaum = map[string]string{
	"a": "AE", "aa": "AE", "a#": "AH", "A:": "AA", "A@": "AA R", "0": "AA", "A~": "AA",
	"@": "AH", "@2": "AH", "@5": "AH", "@L": "AH L", "@-": "", "3": "ER", "3:": "ER",
	"E": "EH", "e": "EH", "e@": "EH R", "eI": "EY", "i": "IY", "i:": "IY", "I": "IH", "I2": "IH", "I#": "IH",
	"i@": "IY AH", "i@3": "IH R", "O": "AO", "O:": "AO", "O2": "AO", "O~": "AO", "O@": "AO R", "o@": "AO R",
	"oU": "OW", "o": "OW", "OI": "OY", "u": "UW", "u:": "UW", "U": "UH", "U@": "UH R", "V": "AH",
	"aI": "AY", "aI@": "AY AH", "aI3": "AY ER", "aI@3": "AY ER", "aU": "AW", "aU@": "AW ER",
	"b": "B", "d": "D", "D": "DH", "dZ": "JH", "f": "F", "g": "G", "h": "HH", "j": "Y", "k": "K", "x": "K",
	"l": "L", "l#": "L", "m": "M", "n": "N", "n-": "AH N", "N": "NG", "p": "P", "r": "R", "r-": "R",
	"s": "S", "S": "SH", "t": "T", "t#": "T", "t2": "T", "?": "T", "T": "TH", "tS": "CH",
	"v": "V", "w": "W", "z": "Z", "Z": "ZH",
}

// cmuPhones converts one word's espeak-ng phonemes ("z_'o@_b_l_i") to
// CMUdict phones ("Z AO R B L IY"); ok is false when the line holds more
// than one word or a phoneme the table does not know.
func cmuPhones(line string) (string, bool) {
	if line == "" || strings.ContainsAny(line, " \t") {
		return "", false
	}
	var syms []string
	for _, s := range strings.Split(line, "_") {
		s = strings.TrimLeft(s, "',%=")
		if s != "" && s != ";" {
			syms = append(syms, s)
		}
	}
	var out []string
	for i, s := range syms {
		p, ok := kirshenbaum[s]
		if !ok {
			return "", false
		}
		nextR := i+1 < len(syms) && (syms[i+1] == "r" || syms[i+1] == "r-")
		if nextR && strings.HasSuffix(p, " R") {
			p = strings.TrimSuffix(p, " R")
		}
		if (s == "r" || s == "r-") && len(out) > 0 && (out[len(out)-1] == "ER" || (s == "r-" && out[len(out)-1] == "R")) {
			continue
		}
		if p != "" {
			out = append(out, strings.Fields(p)...)
		}
	}
	if len(out) == 0 {
		return "", false
	}
	return strings.Join(out, " "), true
}
