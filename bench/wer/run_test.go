package wer

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// needEspeak skips the test when espeak-ng is missing (fails it under
// CI=true).
func needEspeak(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		msg := "espeak-ng is not installed (Debian package espeak-ng)"
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
}

// TestRunScoresACarriedSet runs the whole harness on two utterances:
// espeak-ng speaks them, real SIP/RTP calls on 127.0.0.1 carry them over
// G.711, a recognizer that knows the clips by their shape transcribes them
// (one-piece and streamed, generic and adapted), and sclite scores the
// result, which must be exactly what the recognizer was scripted to say.
func TestRunScoresACarriedSet(t *testing.T) {
	needEspeak(t)
	needSclite(t)
	ctx := context.Background()
	v, err := VoiceNamed("espeak-ng")
	if err != nil {
		t.Fatal(err)
	}
	s, err := SentenceSet(ctx, "check", false, []string{"Please call me back tomorrow.", "Thank you very much, goodbye."}, v)
	if err != nil {
		t.Fatal(err)
	}
	clips := []Clip{s.Utterances[0].Clip, s.Utterances[1].Clip}
	domain := DentalDomain()
	rec := &adaptiveEcho{
		// Generic: "very" goes missing in the second sentence.
		echo:   newEcho(PCMU.Rate, clips, []string{"please call me back tomorrow", "thank you much goodbye"}),
		domain: domain.Key,
		// Adapted: both right.
		better: newEcho(PCMU.Rate, clips, []string{"please call me back tomorrow", "Thank you VERY much, goodbye!"}),
	}
	out := t.TempDir()
	var mu sync.Mutex
	var progress []string
	b := Bench{
		Recognizer: rec, Domain: domain, Models: []string{Generic, Adapted},
		Codecs: []Codec{PCMU, {Name: "NOPE", Label: "Nope", Rate: 8000}},
		// More calls than a benchmark's 3 for an utterance to arrive
		// intact: the test must pass with both cores busy.
		Calls: 2, Attempts: 10, Workers: 2, Streams: 2, Out: out, KeepAudio: true,
		Progress: func(s string) { mu.Lock(); progress = append(progress, s); mu.Unlock() },
	}
	rows, err := b.Run(ctx, []Set{s})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.adapted) != 1 || rec.adapted[0] != domain.Key {
		t.Errorf("adapted to %q, want once to %q", rec.adapted, domain.Key)
	}
	type key struct {
		model string
		mode  Mode
	}
	want := map[key]Score{
		{Generic, OnePiece}: {Sentences: 2, Words: 10, Correct: 9, Del: 1, Errs: 1, SentErrs: 1},
		{Generic, Streamed}: {Sentences: 2, Words: 10, Correct: 9, Del: 1, Errs: 1, SentErrs: 1},
		{Adapted, OnePiece}: {Sentences: 2, Words: 10, Correct: 10},
		{Adapted, Streamed}: {Sentences: 2, Words: 10, Correct: 10},
	}
	if len(rows) != len(want)+1 {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want)+1, rows)
	}
	for _, r := range rows[:len(want)] {
		if r.Damaged > 0 {
			t.Fatalf("the line damaged %d utterances on each of %d calls (late packets: is the machine that busy?)", r.Damaged, b.Attempts)
		}
		if r.Codec != PCMU || r.NotYet != "" || r.Utterances != 2 || r.Failed != 0 {
			t.Errorf("row %+v", r)
		}
		if w, ok := want[key{r.Model, r.Mode}]; !ok || r.Score != w {
			t.Errorf("%s %s: score %+v, want %+v", r.Model, r.Mode, r.Score, w)
		}
		if r.FinalP50 <= 0 || r.FinalP90 < r.FinalP50 || r.Audio <= 0 {
			t.Errorf("%s %s: final text p50 %v p90 %v, audio %v", r.Model, r.Mode, r.FinalP50, r.FinalP90, r.Audio)
		}
	}
	if last := rows[len(rows)-1]; last.Codec.Name != "NOPE" || !strings.Contains(last.NotYet, "not offered") {
		t.Errorf("unknown codec row: %+v", last)
	}
	narrow := Set{Name: "n", Voice: "v", Wideband: "elsewhere", Utterances: []Utterance{{Clip: Clip{Rate: 8000}}}}
	if why := lineFits(narrow, Codec{Label: "W", Rate: 16000}, nil); why != "the set is recorded at 8000 Hz, below W's 16000 Hz; elsewhere" {
		t.Errorf("8 kHz set on a 16 kHz line: %q", why)
	}
	if why := lineFits(narrow, PCMU, nil); why != "" {
		t.Errorf("8 kHz set on G.711: %q", why)
	}
	for _, f := range []string{"check-espeak-ng-pcmu-generic-one-piece.pra", "check-espeak-ng-pcmu-adapted-streamed.raw", "check-espeak-ng-pcmu/check-001.wav"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s in the output: %v", f, err)
		}
	}
	table := Markdown(rows, "abc1234", "make bench-stt")
	for _, w := range []string{"| check / espeak-ng | G.711 | generic | one-piece | 2 (10) | **90.0 %** | 0.0 / 10.0 / 0.0 % |",
		"| check / espeak-ng | G.711 | adapted | streamed | 2 (10) | **100.0 %** |", "| check / espeak-ng | Nope | – | – | – | not yet: Nope is not offered"} {
		if !strings.Contains(table, w) {
			t.Errorf("table lacks %q:\n%s", w, table)
		}
	}
	t.Logf("progress:\n%s", strings.Join(progress, "\n"))
}
