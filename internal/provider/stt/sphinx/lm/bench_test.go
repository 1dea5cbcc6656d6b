package lm

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkBuild builds for an agent with a 5 KB prompt and 250 KB of
// knowledge: sentences of real words drawn from CMUdict (most distinct
// trigrams, so the most work), prices, times and phone numbers to say,
// and 300 invented product names espeak-ng has to guess.
func BenchmarkBuild(b *testing.B) {
	need(b, cmudict)
	need(b, "espeak-ng")
	texts := agentTexts(b, 5<<10, 250<<10)
	dir := b.TempDir()
	var f Files
	cpu0 := cpuTime()
	for b.Loop() {
		var err error
		if f, err = Build(context.Background(), texts, dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time (this process and espeak-ng) says what a build costs on a
	// machine other work shares, where ns/op also counts the waiting.
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(f.Words), "words")
	b.ReportMetric(float64(f.NGrams), "ngrams")
	if st, err := os.Stat(f.LM); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "lm-MB")
	}
}

// cpuTime is the user and system CPU time of this process and its
// waited-for children.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// agentTexts makes a prompt of about promptSize bytes and knowledge
// sources of about knowledgeSize bytes, the same on every run.
func agentTexts(b testing.TB, promptSize, knowledgeSize int) []string {
	b.Helper()
	f, err := os.Open(cmudict)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var words []string
	sc := bufio.NewScanner(f)
	for i := 0; sc.Scan(); i++ {
		w, _, _ := strings.Cut(sc.Text(), " ")
		if i%10 == 0 && !strings.ContainsAny(w, "(.'-_") {
			words = append(words, w)
		}
	}
	r := rand.New(rand.NewPCG(18, 1))
	syllables := strings.Fields("zor bly quen tav mik dor ral vex pim lo ka nu sef tri bo gan")
	products := make([]string, 300)
	for i := range products {
		n := 2 + r.IntN(2)
		var p string
		for range n {
			p += syllables[r.IntN(len(syllables))]
		}
		products[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	sentence := func() string {
		switch r.IntN(4) {
		case 0:
			return fmt.Sprintf("The %s costs $%d.%02d and ships within %d days.", products[r.IntN(len(products))], r.IntN(900)+10, r.IntN(100), r.IntN(14)+1)
		case 1:
			return fmt.Sprintf("Call %03d-%03d-%04d between %d:%02d and %dpm to ask about the %s.", r.IntN(1000), r.IntN(1000), r.IntN(10000), r.IntN(4)+7, 15*r.IntN(4), r.IntN(5)+3, products[r.IntN(len(products))])
		default:
			n := 6 + r.IntN(10)
			s := make([]string, n)
			for i := range s {
				s[i] = words[r.IntN(len(words))]
			}
			return strings.ToUpper(s[0][:1]) + strings.Join(s, " ")[1:] + "."
		}
	}
	paragraph := func(size int) string {
		var p strings.Builder
		for p.Len() < size {
			p.WriteString(sentence())
			p.WriteByte(' ')
		}
		return p.String()
	}
	texts := []string{paragraph(promptSize)}
	for total := 0; total < knowledgeSize; {
		p := paragraph(2 << 10)
		texts = append(texts, p)
		total += len(p)
	}
	return texts
}
