package bench

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// serverProfile is a CPU profile of the server at one N's plateau.
type serverProfile struct {
	File string   // perf.data, kept beside calls-N.json
	Live float64  // live calls when it started
	Top  []string // the hottest symbols, self time, from perf report
	Err  string   // why there is none ("" when there is)
}

// profileServer samples the server's CPU with perf for d into path (kept:
// `perf report -i path` reads it again, the binary's symbols cached by
// perf's build-id store) and returns its hottest symbols, by self time.
// path+".txt" keeps the report itself.
func profileServer(pid int, d time.Duration, path string) serverProfile {
	p := serverProfile{File: path}
	if _, err := exec.LookPath("perf"); err != nil {
		p.Err = "perf is not installed (linux-perf)"
		return p
	}
	rec := exec.Command("perf", "record", "-q", "-F", "199", "-p", fmt.Sprint(pid), "-o", path, "--", "sleep", fmt.Sprint(max(1, int(d.Seconds()))))
	if out, err := rec.CombinedOutput(); err != nil {
		p.Err = fmt.Sprintf("perf record: %v: %s", err, tail(string(out), 500))
		return p
	}
	out, err := exec.Command("perf", "report", "-i", path, "--stdio", "--sort", "symbol", "--percent-limit", "0.5").Output()
	if err != nil {
		p.Err = "perf report: " + err.Error()
		return p
	}
	_ = os.WriteFile(path+".txt", out, 0o644)
	p.Top = perfTop(string(out), 20)
	if len(p.Top) == 0 {
		p.Err = "perf recorded no samples of the server"
	}
	return p
}

// perfTop is the first n rows of a `perf report --stdio` (comments and
// blank lines dropped, runs of spaces folded, the IPC columns perf leaves
// at "-" without branch records dropped).
func perfTop(report string, n int) []string {
	var top []string
	for _, line := range strings.Split(report, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		for len(f) > 1 && f[len(f)-1] == "-" {
			f = f[:len(f)-1]
		}
		top = append(top, strings.Join(f, " "))
		if len(top) == n {
			break
		}
	}
	return top
}

// plateauPolls is how many polls (500 ms apart) without a new peak of
// live calls make a plateau.
const plateauPolls = 4

// atPlateau reports whether the live calls polled so far (oldest first)
// have stopped rising: the last plateauPolls polls set no new peak. The
// caller asks only once the ramp is over, so a pause in the ramp is not
// taken for its end.
func atPlateau(lives []float64) bool {
	n := len(lives)
	if n <= plateauPolls {
		return false
	}
	before, recent := 0.0, 0.0
	for _, v := range lives[:n-plateauPolls] {
		before = max(before, v)
	}
	for _, v := range lives[n-plateauPolls:] {
		recent = max(recent, v)
	}
	return before > 0 && recent <= before
}
