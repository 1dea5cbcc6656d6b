package telephony

import (
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/model"
)

func TestDialedUser(t *testing.T) {
	id := model.NewID()
	for _, tc := range []struct {
		user, agent, number string
		ok                  bool
	}{
		{"+15551230000", "", "+15551230000", true},
		{"15551230000", "", "+15551230000", true},
		{"+1 (555) 123-0000", "", "+15551230000", true},
		{"15551230000;npdi", "", "+15551230000", true},
		{"agent-" + id, id, "", true},
		{"AGENT-" + strings.ToUpper(id), id, "", true},
		{"agent-not-a-uuid", "", "", false},
		{"sales", "", "", false},
		{"+12", "", "", false},
		{"+1234567890123456", "", "", false},
		{"", "", "", false},
	} {
		agent, number, ok := dialedUser(tc.user)
		if agent != tc.agent || number != tc.number || ok != tc.ok {
			t.Errorf("%q: %q %q %v, want %q %q %v", tc.user, agent, number, ok, tc.agent, tc.number, tc.ok)
		}
	}
}

// FuzzDialedUser: the Request-URI user comes from the network.
func FuzzDialedUser(f *testing.F) {
	for _, s := range []string{"+15551230000", "agent-" + model.NewID(), "agent-", "1;x=y", "(+1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, user string) {
		agent, number, ok := dialedUser(user)
		switch {
		case !ok && (agent != "" || number != ""):
			t.Fatal("refused with a result")
		case ok && agent != "" && !model.IsUUID(agent):
			t.Fatalf("agent %q", agent)
		case ok && agent == "" && (len(number) < 4 || len(number) > 16 || number[0] != '+'):
			t.Fatalf("number %q", number)
		}
	})
}

func TestLoopbackTokens(t *testing.T) {
	e := newEnv(t)
	tok := e.phone.loopbackToken(e.org.ID)
	if org, ok := e.phone.loopbackOrg(tok); !ok || org != e.org.ID {
		t.Fatalf("own token refused: %q %v", org, ok)
	}
	other := model.NewID()
	forged := other + tok[strings.Index(tok, "."):]
	for _, bad := range []string{"", ".", other, forged, e.org.ID + ".00", tok + "0"} {
		if _, ok := e.phone.loopbackOrg(bad); ok {
			t.Errorf("token %q accepted", bad)
		}
	}
}
