package wer

import (
	"fmt"
	"strings"
	"time"
)

// Markdown renders rows as the table docs/benchmarks.md keeps: one row per
// set, voice, line, model and mode, each naming the code it measured and
// the command that produced it.
func Markdown(rows []Row, code, command string) string {
	var b strings.Builder
	b.WriteString("| set / voice | line | model | mode | utterances (words) | word accuracy | sub / del / ins | CPU-s per audio-s | end of speech → text p50 / p90 | failed / shortened | code | command |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		label := r.Set + " / " + r.Voice
		if r.NotYet != "" {
			fmt.Fprintf(&b, "| %s | %s | – | – | %d | not yet: %s | – | – | – | – | %s | `%s` |\n",
				label, r.Codec.Label, r.Utterances, r.NotYet, code, command)
			continue
		}
		s := r.Score
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d (%d) | **%.1f %%** | %.1f / %.1f / %.1f %% | %.2f | %s / %s | %d / %d | %s | `%s` |\n",
			label, r.Codec.Label, r.Model, r.Mode, r.Utterances, s.Words, s.Accuracy(),
			s.percent(s.Sub), s.percent(s.Del), s.percent(s.Ins), r.CPUPerAudio,
			seconds(r.FinalP50), seconds(r.FinalP90), r.Failed, r.Shortened, code, command)
	}
	return b.String()
}

// seconds prints d as seconds with two decimals ("1.94 s").
func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
