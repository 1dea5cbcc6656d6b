package wer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) used so far by this process and
// every process it started: those already waited for (RUSAGE_CHILDREN)
// and those still running (a recognizer's long-lived decoder), read from
// /proc. The difference of two readings is what the work between them
// cost, wherever it ran.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	t := tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
	return t + descendantsCPU(os.Getpid())
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	ppid int
	cpu  time.Duration // its own and its waited-for children's
}

// descendantsCPU sums the CPU time of the running descendants of pid.
func descendantsCPU(pid int) time.Duration {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	kids := map[int][]int{}
	stats := map[int]procStat{}
	for _, p := range paths {
		id, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile: RUSAGE_CHILDREN has it once waited for
		}
		s, ok := parseProcStat(string(b))
		if !ok {
			continue
		}
		stats[id] = s
		kids[s.ppid] = append(kids[s.ppid], id)
	}
	var sum time.Duration
	todo := append([]int(nil), kids[pid]...)
	for len(todo) > 0 {
		id := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], kids[id]...)
		sum += stats[id].cpu
	}
	return sum
}

// parseProcStat reads the parent and the CPU fields of a /proc/PID/stat
// line (the command name, field 2, may hold spaces: fields count from its
// closing parenthesis).
func parseProcStat(s string) (procStat, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return procStat{}, false
	}
	const userHZ = 100 // the kernel's USER_HZ on Linux
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, false
	}
	var ticks int64
	for _, k := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		ticks += v
	}
	return procStat{ppid: ppid, cpu: time.Duration(ticks) * time.Second / userHZ}, true
}
