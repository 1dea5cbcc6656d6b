package secret

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSealOpenRoundTrip(t *testing.T) {
	key, err := LoadOrCreateKeyFile(filepath.Join(t.TempDir(), "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	box, err := NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed := box.Seal("hunter2")
	if strings.Contains(string(sealed), "hunter2") {
		t.Fatal("sealed value contains the plaintext")
	}
	if got, err := box.Open(sealed); err != nil || got != "hunter2" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if box.Seal("") != nil {
		t.Error("empty plaintext should seal to nil")
	}
	other, _ := NewBox(make([]byte, KeySize))
	if _, err := other.Open(sealed); err == nil {
		t.Error("a different key opened the value")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := box.Open(sealed); err == nil {
		t.Error("a tampered value opened")
	}
}

func TestKeyFileIsStable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k", "secret.key")
	a, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreateKeyFile(path)
	if err != nil || string(a) != string(b) {
		t.Fatalf("second load differs: %v", err)
	}
}

func TestParseKey(t *testing.T) {
	if _, err := ParseKey(strings.Repeat("ab", 32)); err != nil {
		t.Error(err)
	}
	if _, err := ParseKey("c2hvcnQ="); err == nil {
		t.Error("short key accepted")
	}
}

func TestToken(t *testing.T) {
	a, b := Token("pk_live_", 43), Token("pk_live_", 43)
	if a == b || !strings.HasPrefix(a, "pk_live_") || len(a) != 51 {
		t.Fatalf("tokens %q %q", a, b)
	}
}
