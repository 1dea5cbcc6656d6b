package eval

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/logtest"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/pipeline"
	"github.com/parley-voice/parley/internal/store/storefault"
)

// brokenChats holds text conversations as cannedChats does until broken,
// then fails every one (the engine's model away).
type brokenChats struct{ broken atomic.Bool }

func (b *brokenChats) Chat(ctx context.Context, c pipeline.Chat) (pipeline.ChatResult, error) {
	if b.broken.Load() {
		return pipeline.ChatResult{}, errors.New("the model is unreachable")
	}
	return cannedChats{}.Chat(ctx, c)
}

// TestRunLogLines: a test run's life is in the log with its ids and
// counts: started, then finished (INFO, its verdicts); one whose attempts
// could not run finishes with a WARN line naming how many and why; a
// canceled one says so (INFO). On both engines.
func TestRunLogLines(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			var log logtest.Log
			b := newRunBundle(t, storefault.Wrap(open(t)), time.Hour, false)
			r := b.svc.Runner
			chats := &brokenChats{}
			r.Chats, r.Logger = chats, log.Logger()

			// Canceled before the runner takes it.
			canceled, err := b.svc.StartRun(ctx, b.org, b.suite, RunInput{Mode: opt.Value(model.TestModeText)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.svc.CancelRun(ctx, b.org, b.suite, canceled.ID); err != nil {
				t.Fatal(err)
			}
			lines := log.Where(t, "test_run_id", canceled.ID)
			if got := logtest.Events(lines); !slices.Equal(got, []string{"INFO test run started", "INFO test run canceled"}) {
				t.Fatalf("canceled run: %q", got)
			}
			if m := lines[1]; m["status"] != model.TestRunCanceled || m["reason"] != "canceled through the API" || m["attempts"] != 2.0 {
				t.Errorf("canceled run's line: %v", m)
			}

			runCtx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				r.Run(runCtx)
			}()
			t.Cleanup(func() { stop(); <-done })
			finish := func() []map[string]any {
				t.Helper()
				run, err := b.svc.StartRun(ctx, b.org, b.suite, RunInput{Mode: opt.Value(model.TestModeText)})
				if err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the run's end", func() bool { return len(log.Where(t, "test_run_id", run.ID)) == 2 })
				return log.Where(t, "test_run_id", run.ID)
			}

			passed := finish()
			if got := logtest.Events(passed); !slices.Equal(got, []string{"INFO test run started", "INFO test run finished"}) {
				t.Fatalf("run: %q", got)
			}
			for _, m := range passed {
				if m["org_id"] != b.org || m["suite_id"] != b.suite || m["agent_id"] == "" || m["mode"] != model.TestModeText || m["attempts"] != 2.0 {
					t.Errorf("%s: ids %v", m["msg"], m)
				}
			}
			if m := passed[1]; m["status"] != model.TestRunCompleted || m["passed"] != 2.0 || m["failed"] != 0.0 || m["errored"] != nil {
				t.Errorf("finished run's line: %v", m)
			}

			chats.broken.Store(true)
			failed := finish()
			if got := logtest.Events(failed); !slices.Equal(got, []string{"INFO test run started", "WARN test run finished with errors"}) {
				t.Fatalf("run that could not talk: %q", got)
			}
			if m := failed[1]; m["errored"] != 2.0 || m["failed"] != 2.0 || m["error"] != "the text conversation failed: the model is unreachable" {
				t.Errorf("errored run's line: %v", m)
			}
		})
	}
}
