// Package recording owns call recordings: one stereo WAV per answered call
// (caller left, agent right), written under the data dir off the calls'
// media clocks by one goroutine per Store, and the signed, expiring links
// that let webhook receivers fetch one without an API key.
//
// With an object store (Store.Objects, --recordings-url) a recording is
// still written to disk during its call, then moved to the store when the
// call ends (upload.go): the local file is removed only once the store has
// it, and files left by a stopped server are moved when it starts again,
// so a recording is never lost because the store was down. It is read
// from disk while it is there, else from the store: any server serves any
// call's recording.
package recording

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LinkTTL is how long a signed link works.
const LinkTTL = 7 * 24 * time.Hour

// Store keeps recordings in Dir and, when Objects is set, moves finished
// ones to Objects.
type Store struct {
	Dir string
	// PublicURL is the base of links (http://host:port, no trailing /).
	PublicURL string
	Key       []byte
	// Objects, when set, is where finished recordings go (nil: they stay
	// in Dir). RunUploads moves them.
	Objects Objects
	// Metrics counts uploads (nil: not counted).
	Metrics *Metrics
	// Logger reports failed uploads (nil: slog's default).
	Logger *slog.Logger

	flusher flusher // writes every open recording's audio to disk
	uploads uploads // finished recordings not yet in Objects

	mu      sync.Mutex
	writing map[string]bool // keys of the recordings being written

	// keyLocks serialise an upload and a Delete of the same recording, so
	// an upload in flight cannot put back what Delete removed. Striped: a
	// lock a key would need a map that only grows.
	keyLocks [32]sync.Mutex
}

// Path is where a call's recording lives on this server's disk.
func (s *Store) Path(orgID, callID string) string {
	return filepath.Join(s.Dir, orgID, callID+".wav")
}

// key is a recording's name in Objects: ORG/CALL.wav.
func key(orgID, callID string) string { return orgID + "/" + callID + ".wav" }

// keyPath is where the recording named key lives on disk.
func (s *Store) keyPath(key string) string { return filepath.Join(s.Dir, filepath.FromSlash(key)) }

func (s *Store) lockKey(key string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(key))
	return &s.keyLocks[h.Sum32()%uint32(len(s.keyLocks))]
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

// Open opens a call's recording: from this server's disk while it is
// there (the call goes on, or its upload waits), else from Objects;
// os.ErrNotExist when there is none. An upload removes the file only once
// the store has the object, so one of the two always has it.
func (s *Store) Open(ctx context.Context, orgID, callID string) (Reader, error) {
	r, err := openLocal(s.Path(orgID, callID))
	if !errors.Is(err, os.ErrNotExist) || s.Objects == nil {
		return r, err
	}
	return s.Objects.Open(ctx, key(orgID, callID))
}

// Delete removes a call's recording from this server's disk and from
// Objects; nil when there is none. (Another server's disk keeps a
// recording whose upload waits there; see docs/operations.md.)
func (s *Store) Delete(ctx context.Context, orgID, callID string) error {
	k := key(orgID, callID)
	l := s.lockKey(k)
	l.Lock()
	defer l.Unlock()
	if err := os.Remove(s.Path(orgID, callID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if s.Objects != nil {
		return s.Objects.Delete(ctx, k)
	}
	return nil
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
	k := key(orgID, callID)
	s.mu.Lock()
	if s.writing == nil {
		s.writing = make(map[string]bool)
	}
	s.writing[k] = true
	s.mu.Unlock()
	w, err := newWriter(&s.flusher, f, rate)
	if err != nil {
		f.Close()
		s.finished(k)
		return nil, err
	}
	w.onClose = func() { s.finished(k) }
	return w, nil
}

// finished hands a recording that is no longer written to the uploads.
func (s *Store) finished(k string) {
	s.mu.Lock()
	delete(s.writing, k)
	s.mu.Unlock()
	if s.Objects != nil {
		s.uploads.add(k)
	}
}

// isWriting says whether the recording named k is being written.
func (s *Store) isWriting(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writing[k]
}
