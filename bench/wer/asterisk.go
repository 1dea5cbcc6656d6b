package wer

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/parley-voice/parley/internal/media/audio"
)

// Where Debian's Asterisk prompt packages put their files.
const (
	// AsteriskSounds holds Allison Smith's English prompts as 8 kHz WAVs,
	// subdirectories included (package asterisk-core-sounds-en-wav), and
	// the same recordings at 16 kHz as G.722 (asterisk-core-sounds-en-g722).
	AsteriskSounds = "/usr/share/asterisk/sounds/en_US_f_Allison"
	// AsteriskTranscript is what each prompt says (package
	// asterisk-core-sounds-en).
	AsteriskTranscript = "/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz"
	// AsteriskVoice names the speaker in reports.
	AsteriskVoice = "allison"
)

// Prompt is one line of Asterisk's transcript file: a sound's name (its
// path under the language directory, without extension: "digits/7") and
// what it says.
type Prompt struct {
	Name string
	Text string
}

// promptName is what a sound's name may look like: relative path segments
// of letters, digits, '-', '_' and '.', never "..".
var promptName = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)

// maxTranscriptLine bounds one line of the transcript file.
const maxTranscriptLine = 64 << 10

// ParseTranscript reads Asterisk's core-sounds transcript: one prompt a
// line as "name: Text.", ';' comments and blank lines skipped. A line
// without "name: " or with a name that is not a relative path, or a name
// given twice, is an error naming the line.
func ParseTranscript(r io.Reader) ([]Prompt, error) {
	var out []Prompt
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxTranscriptLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, ";") {
			continue
		}
		name, text, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || !promptName.MatchString(name) || strings.Contains("/"+name+"/", "/../") || strings.Contains("/"+name+"/", "/./") {
			return nil, fmt.Errorf("transcript line %d: want \"name: text\", got %q", n, clip(line, 80))
		}
		if seen[name] {
			return nil, fmt.Errorf("transcript line %d: %s given twice", n, name)
		}
		seen[name] = true
		out = append(out, Prompt{Name: name, Text: strings.TrimSpace(text)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return out, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// transcriptFixes correct the transcript where it does not say what is
// spoken: misspellings (scored as errors against any recognizer
// otherwise) and a web address read out letter by letter.
var transcriptFixes = strings.NewReplacer(
	"exclaimation", "exclamation",
	"fourtieth", "fortieth",
	"Un-indentified", "unidentified",
	"witheld", "withheld",
	"umute", "unmute",
	"represenatives", "representatives",
	"www.asterisk.org", "w w w dot asterisk dot org",
)

// AsteriskSet loads the Asterisk prompts in dir (AsteriskSounds) that the
// transcript at path (AsteriskTranscript, gzipped or not) labels, in the
// transcript's order. Prompts of non-speech only ("[ascending tones]",
// "(1 second of silence)") are left out, and so are transcript lines
// without a recording and recordings over MaxUtterance (one: a 73-second
// demo); Set.Note counts them. A prompt's .g722 file beside its WAV, the
// same recording at 16 kHz, is its wideband clip (Utterance.Wide).
func AsteriskSet(dir, path string) (Set, error) {
	prompts, err := readTranscript(path)
	if err != nil {
		return Set{}, err
	}
	s := Set{Name: "asterisk", Voice: AsteriskVoice}
	var silent, missing, long, narrow []string
	for _, p := range prompts {
		ref := Normalise(transcriptFixes.Replace(p.Text))
		if ref == "" {
			silent = append(silent, p.Name)
			continue
		}
		c, err := readClip(filepath.Join(dir, filepath.FromSlash(p.Name)+".wav"))
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, p.Name)
			continue
		}
		if err != nil {
			return Set{}, err
		}
		if c.Duration() > MaxUtterance {
			long = append(long, p.Name)
			continue
		}
		wide, err := readG722(filepath.Join(dir, filepath.FromSlash(p.Name)+".g722"))
		if errors.Is(err, os.ErrNotExist) {
			narrow = append(narrow, p.Name)
		} else if err != nil {
			return Set{}, err
		}
		s.Utterances = append(s.Utterances, Utterance{ID: utteranceID(p.Name), Text: p.Text, Ref: ref, Clip: c, Wide: wide})
	}
	if len(narrow) > 0 {
		s.Wideband = fmt.Sprintf("%d of its prompts have no 16 kHz recording (install asterisk-core-sounds-en-g722)", len(narrow))
	}
	if len(s.Utterances) == 0 {
		return Set{}, fmt.Errorf("asterisk prompts: none of the %d in %s found under %s (install asterisk-core-sounds-en-wav)", len(prompts), path, dir)
	}
	s.Note = fmt.Sprintf("%d of %d prompts: %d of non-speech only, %d without a recording and %d over %v left out",
		len(s.Utterances), len(prompts), len(silent), len(missing), len(long), MaxUtterance)
	return s, checkIDs(s)
}

// readTranscript opens and parses the transcript file, gunzipping it when
// its name ends in .gz.
func readTranscript(path string) ([]Prompt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("asterisk transcript: %w (install asterisk-core-sounds-en)", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("asterisk transcript %s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	p, err := ParseTranscript(r)
	if err != nil {
		return nil, fmt.Errorf("asterisk transcript %s: %w", path, err)
	}
	return p, nil
}

// readG722 decodes a G.722 file (raw codes, as Asterisk keeps its
// prompts) to a 16 kHz clip.
func readG722(path string) (Clip, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Clip{}, err
	}
	return Clip{PCM: audio.NewG722Decoder().Decode(nil, b), Rate: 16000}, nil
}

// readClip reads a mono 16-bit WAV file.
func readClip(path string) (Clip, error) {
	f, err := os.Open(path)
	if err != nil {
		return Clip{}, err
	}
	defer f.Close()
	w, err := audio.ReadWAV(bufio.NewReader(f))
	if err != nil {
		return Clip{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(w.Channels) != 1 {
		return Clip{}, fmt.Errorf("%s: %d channels, want mono", path, len(w.Channels))
	}
	return Clip{PCM: w.Channels[0], Rate: w.Rate}, nil
}
