package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// procCPU is a process's CPU time so far (user + system, its threads
// included), from /proc/PID/stat; 0 when /proc does not say.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, field 2, may hold spaces: count from its ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	const userHZ = 100 // the kernel's USER_HZ on Linux
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / userHZ
}

// procRSS is a process's resident set now (VmRSS), in bytes; 0 when /proc
// does not say.
func procRSS(pid int) float64 { return procStatusKB(pid, "VmRSS:") * 1024 }

func procStatusKB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb
		}
	}
	return 0
}
