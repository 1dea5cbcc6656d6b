package sms

import (
	"bytes"
	"errors"
	"testing"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

func TestUpdateConnection(t *testing.T) {
	ctx := t.Context()
	st := sqlitetest.Open(t)
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	org, other := model.Organization{Name: "o"}, model.Organization{Name: "p"}
	if err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &org); err != nil {
			return err
		}
		return tx.CreateOrg(ctx, &other)
	}); err != nil {
		t.Fatal(err)
	}
	s := &Connections{Store: st, Box: box}
	c, err := s.Create(ctx, org.ID, ConnectionInput{Provider: opt.Value(ProviderTwilio), AccountSID: opt.Value("AC1"),
		AuthToken: opt.Value("token-1"), FromNumber: opt.Value("+15550001111"), BaseURL: opt.Value("https://sms.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	fields := func(err error) []string {
		var bad *invalid.Error
		if !errors.As(err, &bad) {
			t.Fatalf("%v: want field errors", err)
		}
		var out []string
		for _, f := range bad.Fields {
			out = append(out, f.Name)
		}
		return out
	}
	for _, c2 := range []struct {
		in   ConnectionInput
		want string
	}{
		{ConnectionInput{AccountSID: opt.Field[string]{Set: true, Null: true}}, "accountSid"},
		{ConnectionInput{AuthToken: opt.Value(" ")}, "authToken"},
		{ConnectionInput{Provider: opt.Value("plivo")}, "provider"},
		{ConnectionInput{FromNumber: opt.Field[string]{Set: true, Null: true}}, "fromNumber"}, // no sender left
		{ConnectionInput{BaseURL: opt.Value("ftp://x")}, "baseUrl"},
	} {
		if _, err := s.Update(ctx, org.ID, c.ID, c2.in); len(fields(err)) != 1 || fields(err)[0] != c2.want {
			t.Errorf("%+v: %v, want one error on %s", c2.in, err, c2.want)
		}
	}
	if got, _ := s.Get(ctx, org.ID, c.ID); got.AccountSID != "AC1" || got.FromNumber == nil {
		t.Fatalf("refused updates changed the connection: %+v", got)
	}
	if _, err := s.Update(ctx, other.ID, c.ID, ConnectionInput{AccountSID: opt.Value("AC2")}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another organization's connection: %v", err)
	}
	got, err := s.Update(ctx, org.ID, c.ID, ConnectionInput{
		Name: opt.Value("Main"), AccountSID: opt.Value("AC2"), BaseURL: opt.Field[string]{Set: true, Null: true},
		FromNumber: opt.Field[string]{Set: true, Null: true}, MessagingServiceSID: opt.Value("MG1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := box.Open(got.AuthToken)
	if *got.Name != "Main" || got.AccountSID != "AC2" || got.BaseURL != DefaultBaseURL || got.FromNumber != nil ||
		*got.MessagingServiceSID != "MG1" || token != "token-1" {
		t.Fatalf("updated: %+v", got)
	}
	got, _ = s.Update(ctx, org.ID, c.ID, ConnectionInput{AuthToken: opt.Value("token-2")})
	if token, _ := box.Open(got.AuthToken); token != "token-2" {
		t.Fatalf("token after replacing it: %q", token)
	}
}
