// Package recording owns call recordings on disk: one stereo WAV per
// answered call (caller left, agent right) under the data dir, written off
// the calls' media clocks by one goroutine per Store, and the signed,
// expiring links that let webhook receivers fetch one without an API key.
package recording

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LinkTTL is how long a signed link works.
const LinkTTL = 7 * 24 * time.Hour

// Store keeps recordings in Dir.
type Store struct {
	Dir string
	// PublicURL is the base of links (http://host:port, no trailing /).
	PublicURL string
	Key       []byte

	flusher flusher // writes every open recording's audio to disk
}

// Path is where a call's recording lives.
func (s *Store) Path(orgID, callID string) string {
	return filepath.Join(s.Dir, orgID, callID+".wav")
}

// URL is the call's recording link, signed to work without a key until
// now+LinkTTL (with a key it always works).
func (s *Store) URL(callID string, now time.Time) string {
	exp := strconv.FormatInt(now.Add(LinkTTL).Unix(), 10)
	return fmt.Sprintf("%s/v1/calls/%s/recording?expires=%s&signature=%s",
		strings.TrimRight(s.PublicURL, "/"), callID, exp, s.sign(callID, exp))
}

func (s *Store) sign(callID, expires string) string {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte(callID + "." + expires))
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a signed link's expires and signature for callID.
func (s *Store) Verify(callID, expires, signature string, now time.Time) bool {
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || now.Unix() > exp {
		return false
	}
	return hmac.Equal([]byte(s.sign(callID, expires)), []byte(signature))
}

// Open opens a call's recording; os.ErrNotExist when there is none.
func (s *Store) Open(orgID, callID string) (*os.File, error) {
	return os.Open(s.Path(orgID, callID))
}

// Delete removes a call's recording; nil when there is none.
func (s *Store) Delete(ctx context.Context, orgID, callID string) error {
	if err := os.Remove(s.Path(orgID, callID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Find locates a call's recording without its organization (signed links
// name only the call; call ids are unique).
func (s *Store) Find(callID string) (*os.File, error) {
	m, err := filepath.Glob(filepath.Join(s.Dir, "*", callID+".wav"))
	if err != nil || len(m) == 0 {
		return nil, os.ErrNotExist
	}
	return os.Open(m[0])
}

// Create starts a call's recording at rate Hz, its leg's own (8000 for
// G.711, 16000 for G.722): a recording keeps the audio as the call carried it.
func (s *Store) Create(orgID, callID string, rate int) (*Writer, error) {
	if err := os.MkdirAll(filepath.Join(s.Dir, orgID), 0o750); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.Path(orgID, callID), os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o640)
	if err != nil {
		return nil, err
	}
	w, err := newWriter(&s.flusher, f, rate)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}
