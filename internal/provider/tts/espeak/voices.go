package espeak

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/provider/tts"
)

// defaultVoice is what an unknown language falls back to.
const defaultVoice = "en-us"

// preferred picks among espeak-ng's voices where its own priorities would
// choose otherwise (it ranks en-gb first for "en") or a language has no voice
// of its own name. Keys are lower-case BCP 47 tags.
var preferred = map[string]string{
	"en":    "en-us",
	"en-au": "en-gb",
	"en-nz": "en-gb",
	"en-ie": "en-gb",
	"en-za": "en-gb",
	"en-in": "en-gb",
	"fr":    "fr-fr",
	"zh":    "cmn",
	"zh-tw": "cmn",
	"zh-hk": "yue",
	"es-us": "es-419",
}

// voiceList maps lower-case language tags to the espeak-ng voice that speaks
// them best, from `espeak-ng --voices`.
type voiceList map[string]string

var otherLang = regexp.MustCompile(`\(([^ ()]+) (\d+)\)`)

// loadVoices runs `espeak-ng --voices` and parses its table:
//
//	Pty Language       Age/Gender VoiceName          File                 Other Languages
//	 5  cmn             --/M      Chinese_(Mandarin) sit/cmn              (zh-cmn 5)(zh 5)
//
// Each voice speaks its Language at priority Pty and each Other Language at
// the priority given; for each tag the lowest priority number wins.
func loadVoices(ctx context.Context, bin string) (voiceList, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--voices")
	cmd.WaitDelay = time.Second
	b, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil && ctx.Err() != context.DeadlineExceeded {
			return nil, ctx.Err()
		}
		return nil, unavailable(bin, err)
	}
	return parseVoices(string(b))
}

func parseVoices(s string) (voiceList, error) {
	type pick struct {
		voice string
		prio  int
	}
	best := map[string]pick{}
	add := func(tag, voice string, prio int) {
		tag = strings.ToLower(tag)
		if p, ok := best[tag]; !ok || prio < p.prio {
			best[tag] = pick{voice, prio}
		}
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		if _, err := strconv.Atoi(f[0]); err != nil {
			continue // the heading
		}
		voice := f[1]
		// A voice's own language always names it, whatever its priority.
		add(voice, voice, -1)
		for _, m := range otherLang.FindAllStringSubmatch(strings.Join(f[5:], " "), -1) {
			p, _ := strconv.Atoi(m[2])
			add(m[1], voice, p)
		}
	}
	if len(best) == 0 {
		return nil, fmt.Errorf("%w: espeak-ng --voices listed no voices", tts.ErrUnavailable)
	}
	l := make(voiceList, len(best))
	for tag, p := range best {
		l[tag] = p.voice
	}
	return l, nil
}

// resolve picks the voice for a BCP 47 language tag, trying the tag and then
// ever shorter prefixes of it ("en-US-x-foo", "en-us-x", "en-us", "en"). ok
// is false when nothing matched and the result is the fallback.
func (l voiceList) resolve(lang string) (voice string, ok bool) {
	tag := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(lang), "_", "-"))
	if tag == "" {
		tag = "en"
	}
	for tag != "" {
		if v, ok := preferred[tag]; ok && l[v] != "" {
			return l[v], true
		}
		if v, ok := l[tag]; ok {
			return v, true
		}
		i := strings.LastIndexByte(tag, '-')
		if i < 0 {
			break
		}
		tag = tag[:i]
	}
	if v, ok := l[defaultVoice]; ok {
		return v, false
	}
	return "en", false
}
