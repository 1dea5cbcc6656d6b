package wer

import (
	"fmt"
	"strings"
	"time"
)

// Markdown renders rows as the table docs/benchmarks.md keeps: one row per
// set, voice, line, model and mode, each naming the code it measured and
// the command that produced it. Rows not yet measurable for the same
// reason on the same line are one row, naming their sets.
func Markdown(rows []Row, code, command string) string {
	var b strings.Builder
	b.WriteString("| set / voice | line | model | mode | utterances (words) | word accuracy | sub / del / ins | CPU-s per audio-s | end of speech → text p50 / p90 | failed / damaged (calls again) | code | command |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i := 0; i < len(rows); i++ {
		r := rows[i]
		label := r.Set + " / " + r.Voice
		if r.NotYet != "" {
			labels := []string{label}
			for i+1 < len(rows) && rows[i+1].NotYet == r.NotYet && rows[i+1].Codec == r.Codec {
				i++
				labels = append(labels, rows[i].Set+" / "+rows[i].Voice)
			}
			fmt.Fprintf(&b, "| %s | %s | – | – | – | not yet: %s | – | – | – | – | %s | `%s` |\n",
				strings.Join(labels, ", "), r.Codec.Label, r.NotYet, code, command)
			continue
		}
		s := r.Score
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d (%d) | **%.1f %%** | %.1f / %.1f / %.1f %% | %.2f | %s / %s | %d / %d (%d) | %s | `%s` |\n",
			label, r.Codec.Label, r.Model, r.Mode, r.Utterances, s.Words, s.Accuracy(),
			s.percent(s.Sub), s.percent(s.Del), s.percent(s.Ins), r.CPUPerAudio,
			seconds(r.FinalP50), seconds(r.FinalP90), r.Failed, r.Damaged, r.Retried, code, command)
	}
	return b.String()
}

// seconds prints d as seconds with two decimals ("1.94 s").
func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
