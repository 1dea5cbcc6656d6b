package telephony

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

func TestCallerTextIsStorable(t *testing.T) {
	for in, want := range map[string]string{
		"": "anonymous", "anonymous": "anonymous", "+1 (555) 123-0000": "+15551230000", "alice": "alice", "José": "José",
		"a\x00b": "a\uFFFDb", "\xff\xfe": "\uFFFD", "\xc0\x80": "\uFFFD", "+1555\x00": "+1555\uFFFD", "caf\xe9": "caf\uFFFD",
	} {
		if got := callerNumber(in); got != want {
			t.Errorf("callerNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

// The record of an inbound call whose From user (or dialed URI) is not
// text is written on every store: the call goes on.
func TestInboundRecordOfBadSIPText(t *testing.T) {
	opens := map[string]func(t *testing.T) store.Store{"sqlite": func(t *testing.T) store.Store {
		st := sqlitetest.Open(t)
		return st
	}}
	if url := os.Getenv("PARLEY_TEST_DATABASE_URL"); url != "" {
		opens["postgres"] = func(t *testing.T) store.Store {
			schema := fmt.Sprintf("telephony_%d", time.Now().UnixNano())
			st, err := postgres.Open(context.Background(), url, postgres.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				st.DB().Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
				st.Close()
			})
			return st
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but PARLEY_TEST_DATABASE_URL is unset")
	}
	for name, open := range opens {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			o := model.Organization{Name: "acme", ConcurrencyLimit: 1, CreatedAt: model.Now(), UpdatedAt: model.Now()}
			a := model.Agent{Name: "A", Status: model.AgentActive, Mode: model.ModeSinglePrompt, CreatedAt: model.Now(), UpdatedAt: model.Now()}
			c := model.Call{}
			err := st.Update(ctx, func(tx store.Tx) error {
				if err := tx.CreateOrg(ctx, &o); err != nil {
					return err
				}
				a.OrgID = o.ID
				if err := tx.CreateAgent(ctx, &a); err != nil {
					return err
				}
				c = call.NewInbound(a, nil, callerNumber("\x00evil\xff"), invalid.Storable("agent-"+a.ID+";x=\x00\xc0\x80"), &a.ID)
				return tx.CreateCall(ctx, &c)
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := store.Read(ctx, st, func(tx store.Tx) (model.Call, error) { return tx.GetCall(ctx, o.ID, c.ID) })
			if err != nil || got.FromNumber != "\uFFFDevil\uFFFD" || got.ToNumber != "agent-"+a.ID+";x=\uFFFD\uFFFD" {
				t.Errorf("recorded from %q to %q (%v)", got.FromNumber, got.ToNumber, err)
			}
		})
	}
}

// An INVITE whose From user is not text is answered as any other (here a
// refusal that is recorded), with the caller written out as text.
func TestInviteWithBadFromUser(t *testing.T) {
	e := newEnv(t)
	a := e.agent(func(a *model.Agent) { a.Status = model.AgentDisabled })
	e.number("+15551230001", &a.ID, nil)
	conn, err := net.Dial("udp", e.ua.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	invite := "INVITE sip:+15551230001@127.0.0.1 SIP/2.0\r\n" +
		"Via: SIP/2.0/UDP " + conn.LocalAddr().String() + ";branch=z9hG4bK-badtext-1\r\n" +
		"From: \"Bad\xff\" <sip:ev\x00il\xc0\x80@127.0.0.1>;tag=1\r\nTo: <sip:+15551230001@127.0.0.1>\r\n" +
		"Call-ID: badtext-1\r\nCSeq: 1 INVITE\r\nContact: <sip:x@" + conn.LocalAddr().String() + ">\r\nContent-Length: 0\r\n\r\n"
	if _, err := conn.Write([]byte(invite)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no final answer: %v", err)
		}
		if strings.HasPrefix(string(buf[:n]), "SIP/2.0 480") {
			break
		}
		if !strings.HasPrefix(string(buf[:n]), "SIP/2.0 1") {
			t.Fatalf("answered %q", buf[:n])
		}
	}
	_, _ = conn.Write([]byte("ACK sip:+15551230001@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP " + conn.LocalAddr().String() +
		";branch=z9hG4bK-badtext-1\r\nFrom: <sip:x@127.0.0.1>;tag=1\r\nTo: <sip:+15551230001@127.0.0.1>\r\nCall-ID: badtext-1\r\nCSeq: 1 ACK\r\nContent-Length: 0\r\n\r\n"))
	cs := e.calls()
	if len(cs) != 1 {
		t.Fatalf("%d calls recorded", len(cs))
	}
	if got := cs[0].FromNumber; invalid.Text(got) != "" || got != "ev\uFFFDil\uFFFD" {
		t.Errorf("fromNumber %q", got)
	}
}

// FuzzCallerNumber: whatever the From user, the recorded caller is text
// every store holds, and text that already is stays as sent.
func FuzzCallerNumber(f *testing.F) {
	for _, s := range []string{"+15551230000", "anonymous", "\x00", "\xff", "a\xc0\x80b", "José"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, user string) {
		got := callerNumber(user)
		if invalid.Text(got) != "" {
			t.Fatalf("callerNumber(%q) = %q", user, got)
		}
		if invalid.Text(user) == "" && user != "" && normalizeNumber(user) == "" && got != user {
			t.Fatalf("callerNumber(%q) = %q, changed good text", user, got)
		}
	})
}
