package pipeline

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/store/storefault"
)

// TestTranscriptSurvivesFaults: a batch of entries the database refuses a
// few times (busy, a full disk) lands once it takes it, and the entries
// made meanwhile land after it, in the order they were made; a batch whose
// answer was lost after it committed is not written twice.
func TestTranscriptSurvivesFaults(t *testing.T) {
	for _, r := range []storefault.Rule{
		{Op: "AppendTranscript", Times: 3, Err: storefault.Busy},
		{Op: "AppendTranscript", Times: 2, Err: storefault.DiskFull},
		{Op: "AppendTranscript", Times: 1, Err: storefault.Refused, LoseAck: true},
	} {
		t.Run(fmt.Sprintf("%v lost answer %v", r.Err, r.LoseAck), func(t *testing.T) {
			b := newBench(t)
			fs := storefault.Wrap(b.st)
			fs.Inject(r)
			log := &transcriptLog{t: call.NewTranscript(fs, b.call, time.Now()), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			log.user("t1", "first", "en")
			waitFor(t, "the first batch refused", func() bool { return fs.Fails("AppendTranscript") >= 1 })
			log.assistant("t1", "second")
			log.user("t2", "third", "en")
			log.flush()
			var got []string
			for i, e := range b.stored(t).Transcript {
				got = append(got, fmt.Sprintf("%v:%v", e["seq"], e["text"]))
				if e["seq"] != float64(i) {
					t.Errorf("entry %d has seq %v", i, e["seq"])
				}
			}
			if want := "[0:first 1:second 2:third]"; fmt.Sprint(got) != want {
				t.Errorf("transcript %v, want %s", got, want)
			}
			if n := fs.Fails("AppendTranscript"); n != r.Times {
				t.Errorf("the fault struck %d times, want %d", n, r.Times)
			}
		})
	}
}
