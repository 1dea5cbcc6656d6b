// Package secret seals credentials Parley must be able to read back (SIP
// trunk passwords, messaging auth tokens, webhook signing secrets) with
// AES-256-GCM, and generates the random secrets Parley hands out.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of a sealing key in bytes.
const KeySize = 32

// version prefixes every sealed value so the scheme can change later.
const version byte = 1

// Box seals and opens values with one key.
type Box struct {
	aead cipher.AEAD
	key  []byte
}

// NewBox returns a Box for a 32-byte key.
func NewBox(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead, key: append([]byte(nil), key...)}, nil
}

// Derive returns a 32-byte key for one purpose ("recording-links", ...),
// so signing keys never equal the sealing key or each other.
func (b *Box) Derive(purpose string) []byte {
	m := hmac.New(sha256.New, b.key)
	m.Write([]byte("parley/" + purpose))
	return m.Sum(nil)
}

// Seal encrypts plaintext; an empty plaintext seals to nil (nothing stored).
func (b *Box) Seal(plaintext string) []byte {
	if plaintext == "" {
		return nil
	}
	nonce := make([]byte, b.aead.NonceSize())
	rand.Read(nonce)
	out := append([]byte{version}, nonce...)
	return b.aead.Seal(out, nonce, []byte(plaintext), nil)
}

// Open decrypts a value made by Seal; nil opens to "".
func (b *Box) Open(sealed []byte) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	n := b.aead.NonceSize()
	if sealed[0] != version || len(sealed) < 1+n+b.aead.Overhead() {
		return "", errors.New("sealed value has an unknown format")
	}
	plain, err := b.aead.Open(nil, sealed[1:1+n], sealed[1+n:], nil)
	if err != nil {
		return "", errors.New("sealed value does not open with this key (was PARLEY_SECRET_KEY changed?)")
	}
	return string(plain), nil
}

// ParseKey reads a key given as 64 hex characters or as base64 of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("secret key must be %d bytes as hex (64 characters) or base64", KeySize)
}

// LoadOrCreateKeyFile reads the key stored at path, creating the file with a
// new random key (mode 0600) when it does not exist. This is how a
// single-node deployment gets a key without configuration; several nodes
// sharing one database must share PARLEY_SECRET_KEY instead.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		return ParseKey(string(b))
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read secret key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	key := make([]byte, KeySize)
	rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process won the race: use its key
		return LoadOrCreateKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("create secret key file: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		return nil, fmt.Errorf("write secret key file: %w", err)
	}
	return key, f.Sync()
}
