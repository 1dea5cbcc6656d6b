package telephony

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/siptest"
)

// svwar (SIPVicious) enumerates numbers by INVITE: it learns how an
// unknown number is answered and reports every number answered
// otherwise. On an open trunk it finds the assigned number (the check
// can fail); once that trunk requires digest authentication it finds
// nothing, though the range holds the assigned number, an unassigned
// number of the organization and unknown ones.
func TestEnumerationFindsNoNumberOnAnAuthenticatingTrunk(t *testing.T) {
	siptest.RequireSipvicious(t)
	e := newEnv(t)
	tr := e.trunk("127.0.0.1:5060")
	a := e.agent()
	e.number("+15551230003", &a.ID, &tr.ID)
	e.number("+15551230006", nil, nil)

	if found := svwar(t, e.ua.Addr(), "15551230000-15551230007"); !strings.Contains(strings.Join(found, "\n"), "15551230003") {
		t.Fatalf("svwar did not find the number on an open trunk (the check cannot fail):\n%s", found)
	}

	user := "carrier"
	tr.InboundUsername, tr.InboundPassword = &user, e.phone.Box.Seal("t0ps3cret")
	e.write(func(tx storeTx) error { return tx.UpdateSIPTrunk(e.ctx, &tr) })
	e.phone.decoy = decoy{}  // forget the cached answer: a trunk authenticates now
	before := len(e.calls()) // the open trunk's scan was answered: a call
	found := svwar(t, e.ua.Addr(), "15551230000-15551230007")
	if len(found) > 0 {
		t.Errorf("svwar found numbers on an authenticating trunk:\n%s", strings.Join(found, "\n"))
	}
	if n := len(e.calls()) - before; n != 0 {
		t.Errorf("%d call records from the scan, want 0", n)
	}
}

// svwar scans the numbers in span at addr by INVITE and returns the rows
// of its report of the numbers it found ("| 15551230003 | noauth |").
func svwar(t *testing.T, addr, span string) []string {
	t.Helper()
	cmd := exec.Command("svwar", "-m", "INVITE", "-e", span, "--force", "-t", "0.05", "udp://"+addr)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // svwar keeps sessions under ~/.sipvicious
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("svwar: %v\n%s", err, out)
	}
	var rows []string
	for _, l := range strings.Split(string(out), "\n") {
		if row.MatchString(l) {
			rows = append(rows, l)
		}
	}
	if len(rows) == 0 && !strings.Contains(string(out), "found nothing") {
		t.Fatalf("svwar reported neither numbers nor nothing:\n%s", out)
	}
	return rows
}

// row is a line of svwar's report table naming a number.
var row = regexp.MustCompile(`^\|\s*\d+\s*\|`)
