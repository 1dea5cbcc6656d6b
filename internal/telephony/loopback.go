package telephony

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// loopbackHeader marks an INVITE the server sent itself over the loopback
// trunk. Its value "<org id>.<hmac>" proves it (the key never leaves the
// server) and scopes the call to the caller's organization.
const loopbackHeader = "X-Parley-Loopback"

func (p *Phone) loopbackToken(orgID string) string {
	m := hmac.New(sha256.New, p.Box.Derive("loopback-trunk"))
	m.Write([]byte(orgID))
	return orgID + "." + hex.EncodeToString(m.Sum(nil))
}

// loopbackOrg returns the organization a loopback token names; ok false
// for a missing or forged token.
func (p *Phone) loopbackOrg(token string) (string, bool) {
	org, _, found := strings.Cut(token, ".")
	if !found || org == "" {
		return "", false
	}
	return org, hmac.Equal([]byte(p.loopbackToken(org)), []byte(token))
}
