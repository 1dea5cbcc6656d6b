package bench

import (
	"reflect"
	"testing"
	"time"
)

func TestRecognitionConfig(t *testing.T) {
	c := readRecognitionConfig(t)
	if c.limit != 30 || c.calls != 16 || c.workers != 2 || c.timeout != time.Minute || !reflect.DeepEqual(c.codecs, []string{"PCMU", "G722"}) {
		t.Errorf("defaults: %+v", c)
	}
	if got := c.command(); got != "make bench-stt" {
		t.Errorf("command %q", got)
	}
	t.Setenv("PARLEY_BENCH_STT_SETS", "dental, everyday")
	t.Setenv("PARLEY_BENCH_STT_LIMIT", "0")
	t.Setenv("PARLEY_BENCH_STT_TIMEOUT", "90s")
	t.Setenv("PARLEY_BENCH_STT_OUT", "/tmp/x")
	c = readRecognitionConfig(t)
	if !reflect.DeepEqual(c.sets, []string{"dental", "everyday"}) || c.limit != 0 || c.timeout != 90*time.Second || c.out != "/tmp/x" {
		t.Errorf("from the environment: %+v", c)
	}
	// The command names what changes the run, not where it wrote.
	if got, want := c.command(), "PARLEY_BENCH_STT_LIMIT=0 PARLEY_BENCH_STT_SETS='dental, everyday' PARLEY_BENCH_STT_TIMEOUT=90s make bench-stt"; got != want {
		t.Errorf("command %q, want %q", got, want)
	}
}
