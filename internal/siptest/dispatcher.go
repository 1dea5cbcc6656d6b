package siptest

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

//go:embed testdata/dispatcher.cfg
var dispatcherConfig string

// DispatcherOptions configure a proxy in front of several servers.
type DispatcherOptions struct {
	// Servers are the "host:port" SIP addresses (UDP) calls are spread over.
	Servers []string
	// PingInterval is how often each server is probed with OPTIONS
	// (default 1 s; Kamailio counts whole seconds).
	PingInterval time.Duration
	// Failover is how long an INVITE waits for any answer from a server
	// before it goes to the next one (default 1 s).
	Failover time.Duration
}

// StartDispatcher runs Kamailio with testdata/dispatcher.cfg on a free
// 127.0.0.1 port (UDP and TCP): new INVITEs go round-robin to the servers
// that answer its OPTIONS probes 200, an INVITE a server refuses with 503 or
// leaves unanswered goes to the next one, and the proxy Record-Routes. It is
// stopped at t.Cleanup.
func StartDispatcher(t testing.TB, o DispatcherOptions) *Kamailio {
	t.Helper()
	RequireKamailio(t)
	if len(o.Servers) == 0 {
		t.Fatal("siptest: StartDispatcher needs Servers")
	}
	if o.PingInterval <= 0 {
		o.PingInterval = time.Second
	}
	if o.Failover <= 0 {
		o.Failover = time.Second
	}
	k := &Kamailio{t: t, dir: t.TempDir()}
	k.startOnFreePort(func() error { return k.writeDispatcherConfig(o) })
	return k
}

func (k *Kamailio) writeDispatcherConfig(o DispatcherOptions) error {
	list := filepath.Join(k.dir, "dispatcher.list")
	var b strings.Builder
	b.WriteString("# set destination flags priority\n")
	for _, s := range o.Servers {
		fmt.Fprintf(&b, "1 sip:%s 0 0\n", s)
	}
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return k.writeTemplate(dispatcherConfig, map[string]any{
		"Port": k.port, "ModulePath": kamailioModules, "ListFile": list,
		"PingInterval": max(1, int(o.PingInterval/time.Second)), "FailoverMs": o.Failover.Milliseconds(),
	})
}

var dispatchLine = regexp.MustCompile(`dispatch: (\S+) (?:again, )?to sip:(\S+)`)

// Dispatched is, from the dispatcher's log, the server ("host:port") each
// Call-ID was last sent to (after any failover).
func (k *Kamailio) Dispatched() map[string]string {
	out := map[string]string{}
	for _, m := range dispatchLine.FindAllStringSubmatch(k.Output(), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// Failovers counts the INVITEs the dispatcher sent on to another server
// because one refused them with 503 or did not answer.
func (k *Kamailio) Failovers() int { return strings.Count(k.Output(), " again, to sip:") }

// Marked counts the times server ("host:port") was marked state ("down"
// or "up") so far, by how: "probe" (an OPTIONS probe's answer, or its
// absence), "failover" (an INVITE refused with 503 or unanswered), or ""
// for either.
func (k *Kamailio) Marked(server, state, by string) int {
	prefix := "dispatcher: " + state + " sip:" + server + " by "
	if by != "" {
		return strings.Count(k.Output(), prefix+by+"\n")
	}
	return strings.Count(k.Output(), prefix)
}
