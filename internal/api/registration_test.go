package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/store"
)

func TestSIPTrunkRegistration(t *testing.T) {
	e := newEnv(t)
	tr := e.create("/v1/sip-trunks", map[string]any{
		"friendlyName": "Provider", "host": "sip.provider.example", "username": "acct1", "password": "trunk-s3cret",
		"registration": map[string]any{"password": "reg-s3cret"},
	})
	reg := tr["registration"].(map[string]any)
	want := map[string]any{
		"registrar": nil, "transport": nil, "username": nil, "passwordSet": true, "expiresSeconds": float64(3600),
		"contactUser": "acct1", "enabled": true, "state": "unregistered", "expiresAt": nil, "lastError": nil,
	}
	for k, v := range want {
		if reg[k] != v {
			t.Errorf("registration.%s = %v, want %v", k, reg[k], v)
		}
	}
	id := "/v1/sip-trunks/" + tr["id"].(string)
	if strings.Contains(string(e.do("GET", id, nil).Body), "reg-s3cret") {
		t.Fatal("the registration password was returned")
	}
	var sealed []byte
	e.store.View(context.Background(), func(tx store.Tx) error {
		k, err := tx.GetSIPTrunk(context.Background(), orgOf(t, e, e.key), tr["id"].(string))
		sealed = k.Registration.Password
		return err
	})
	if opened, err := e.box.Open(sealed); err != nil || opened != "reg-s3cret" || strings.Contains(string(sealed), "reg-s3cret") {
		t.Errorf("stored registration password %q opens to %q (%v)", sealed, opened, err)
	}

	// A partial update merges; the derived contact user follows the username.
	p := e.must(http.StatusOK, "PATCH", id, map[string]any{"registration": map[string]any{
		"registrar": "registrar.provider.example:5080", "transport": "tcp", "expiresSeconds": 600, "username": "acct2",
	}}).Data(t)["registration"].(map[string]any)
	if p["registrar"] != "registrar.provider.example:5080" || p["transport"] != "tcp" || p["expiresSeconds"] != float64(600) ||
		p["contactUser"] != "acct2" || p["passwordSet"] != true {
		t.Errorf("merged registration = %v", p)
	}
	p = e.must(http.StatusOK, "PATCH", id, map[string]any{"registration": map[string]any{"contactUser": "parley-7", "enabled": false}}).Data(t)["registration"].(map[string]any)
	if p["contactUser"] != "parley-7" || p["enabled"] != false || p["username"] != "acct2" {
		t.Errorf("registration after contactUser/enabled = %v", p)
	}

	// Contact users are unique: inbound calls to one go to one trunk.
	if r := e.do("POST", "/v1/sip-trunks", map[string]any{"friendlyName": "Twin", "host": "h.example",
		"registration": map[string]any{"username": "x", "contactUser": "parley-7"}}); r.Status != http.StatusConflict || r.ErrorCode(t) != "conflict" {
		t.Fatalf("duplicate contact user = %d %s", r.Status, r.Body)
	}
	if p := e.must(http.StatusOK, "PATCH", id, map[string]any{"registration": nil}).Data(t); p["registration"] != nil {
		t.Errorf("registration after null = %v", p["registration"])
	}

	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "x", "host": "h.example",
		"registration": map[string]any{}}, "registration.username")
	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "x", "transport": "loopback",
		"registration": map[string]any{"username": "u"}}, "registration")
	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "x", "host": "h.example",
		"registration": map[string]any{
			"registrar": "sip:reg.example", "transport": "sctp", "expiresSeconds": 59, "contactUser": "agent-1",
			"username": strings.Repeat("u", 257), "enabled": nil,
		}}, "registration.registrar", "registration.transport", "registration.expiresSeconds", "registration.contactUser",
		"registration.username", "registration.enabled")
	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "x", "host": "h.example",
		"registration": map[string]any{"username": "u", "expiresSeconds": 86401, "registrar": "reg.example:0"}},
		"registration.expiresSeconds", "registration.registrar")
	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "x", "host": "h.example",
		"registration": map[string]any{"username": "user@example.com"}}, "registration.contactUser")
	e.invalid("invalid_json", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "x", "host": "h.example",
		"registration": map[string]any{"username": "u", "expires": 60}}, "registration.expires")
}
