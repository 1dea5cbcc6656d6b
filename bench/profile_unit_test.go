package bench

import (
	"reflect"
	"testing"
)

func TestAtPlateau(t *testing.T) {
	for _, tc := range []struct {
		lives []float64
		want  bool
	}{
		{nil, false},
		{[]float64{0, 0, 0, 0, 0, 0}, false},                      // nothing up yet
		{[]float64{10, 50, 100, 150, 200, 250}, false},            // still rising
		{[]float64{10, 50, 100, 150, 200}, false},                 // too few polls to tell
		{[]float64{100, 200, 304, 300, 302, 304, 301}, true},      // no new peak for 4 polls
		{[]float64{100, 200, 304, 300, 302, 304, 305}, false},     // a new peak in the last polls
		{[]float64{100, 304, 280, 250, 200, 150}, true},           // past the peak, calls ending
		{[]float64{100, 200, 304, 304, 304, 304, 304, 304}, true}, // flat
	} {
		if got := atPlateau(tc.lives); got != tc.want {
			t.Errorf("atPlateau(%v) = %v, want %v", tc.lives, got, tc.want)
		}
	}
}

func TestPerfTop(t *testing.T) {
	report := "# To display the perf.data header info, please use --header/--header-only options.\n#\n# Samples: 3K of event 'cpu-clock'\n#\n" +
		"# Overhead  Symbol                IPC   [IPC Coverage]\n# ........  ......\n#\n" +
		"    31.20%  [.] github.com/parley-voice/parley/internal/media/audio.(*Biquad).Step    -      -   \n" +
		"     9.05%  [k] do_syscall_64    -      -   \n\n     4.00%  [.] runtime.futex\n#\n# (Tip: ...)\n"
	want := []string{"31.20% [.] github.com/parley-voice/parley/internal/media/audio.(*Biquad).Step", "9.05% [k] do_syscall_64"}
	if got := perfTop(report, 2); !reflect.DeepEqual(got, want) {
		t.Errorf("perfTop(report, 2) = %q, want %q", got, want)
	}
	if got := perfTop(report, 20); len(got) != 3 || got[2] != "4.00% [.] runtime.futex" {
		t.Errorf("perfTop(report, 20) = %q", got)
	}
}
