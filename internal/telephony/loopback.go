package telephony

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/parley-voice/parley/internal/secret"
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

// loopbackCallerHeader names, on a loopback INVITE, the call that placed
// it: "<call id>.<hmac of org id|call id>", so the inbound leg can take the
// line its caller reserved for it (callqueue.Answer) and a test run can
// find the leg. Only the server can sign it, and only for its own org.
const loopbackCallerHeader = "X-Parley-Loopback-Caller"

func (p *Phone) loopbackCallerToken(orgID, callID string) string {
	m := hmac.New(sha256.New, p.Box.Derive("loopback-trunk"))
	m.Write([]byte(orgID + "|" + callID))
	return callID + "." + hex.EncodeToString(m.Sum(nil))
}

// loopbackCaller returns the call a caller token of organization orgID
// names; ok false for a missing or forged token.
func (p *Phone) loopbackCaller(orgID, token string) (string, bool) {
	id, _, found := strings.Cut(token, ".")
	if !found || id == "" || orgID == "" {
		return "", false
	}
	return id, hmac.Equal([]byte(p.loopbackCallerToken(orgID, id)), []byte(token))
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

// LoopbackSigned tells the SIP user agent's admission (sipua.Admission
// Exempt) which INVITEs are the server's own over the loopback trunk:
// those carrying a loopback token signed with box's key. They are never
// refused for their source's rate, which is the server itself.
func LoopbackSigned(box *secret.Box) func(header func(name string) string) bool {
	p := &Phone{Box: box}
	return func(header func(string) string) bool {
		_, ok := p.loopbackOrg(header(loopbackHeader))
		return ok
	}
}
