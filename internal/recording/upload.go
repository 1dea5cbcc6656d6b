package recording

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

const (
	// uploadWorkers is how many recordings upload at once.
	uploadWorkers = 4
	// uploadTimeout bounds one attempt (a recording of an hour at 16 kHz
	// is 230 MB).
	uploadTimeout = 10 * time.Minute
)

// Retry pacing while the store fails: the wait doubles from retryMin up to
// retryMax. Variables so the package's tests can shorten them.
var (
	retryMin = 500 * time.Millisecond
	retryMax = 30 * time.Second
)

// uploads is the queue of finished recordings not yet in the store, each
// named by its key; the files themselves, on disk, are what survives a
// restart. When an upload fails the store is taken to be down: nothing is
// tried until the wait is over, and then one upload probes it before the
// others follow, so an outage costs a request every retryMax, not one per
// recording.
type uploads struct {
	mu       sync.Mutex
	queue    []string        // keys waiting, oldest first
	queued   map[string]bool // keys waiting or uploading
	wake     chan struct{}   // a key was queued, or the store is back
	failures int             // failed attempts in a row
	retryAt  time.Time       // after a failure: when to probe the store
	probing  bool            // an upload probes the store
	idle     chan struct{}   // closed once nothing is queued (nil: nothing is)
	metrics  *Metrics
}

func (u *uploads) init() {
	if u.queued == nil {
		u.queued = make(map[string]bool)
		u.wake = make(chan struct{}, 1)
	}
}

// signal wakes a worker.
func (u *uploads) signal() {
	select {
	case u.wake <- struct{}{}:
	default: // one is already due to wake
	}
}

// add queues key; queued already is harmless.
func (u *uploads) add(key string) {
	u.mu.Lock()
	u.init()
	if !u.queued[key] {
		u.queued[key] = true
		u.queue = append(u.queue, key)
		if u.idle == nil {
			u.idle = make(chan struct{})
		}
		u.metrics.pending(len(u.queued))
	}
	u.mu.Unlock()
	u.signal()
}

// take is the next key to upload, or "" and how long to wait before
// asking again (0: until woken).
func (u *uploads) take(now time.Time) (string, time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.queue) == 0 || u.probing {
		return "", 0
	}
	if u.failures > 0 {
		if now.Before(u.retryAt) {
			return "", u.retryAt.Sub(now)
		}
		u.probing = true
	}
	key := u.queue[0]
	u.queue[0] = ""
	u.queue = u.queue[1:]
	if len(u.queue) > 0 && !u.probing {
		u.signal() // another worker takes the next
	}
	return key, 0
}

// done records how key's upload went: failed (err) keys go back in the
// queue, after the others. It returns the failures in a row and the wait
// before the next attempt, or after a success how many failures it ended.
func (u *uploads) done(key string, err error, now time.Time) (failures int, wait time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	probed := u.probing
	u.probing = false
	if err != nil {
		u.queue = append(u.queue, key)
		u.failures++
		wait = min(retryMin<<min(u.failures-1, 16), retryMax)
		u.retryAt = now.Add(wait)
		u.metrics.failed()
		return u.failures, wait
	}
	delete(u.queued, key)
	failures, u.failures = u.failures, 0
	u.metrics.uploaded()
	u.metrics.pending(len(u.queued))
	if len(u.queued) == 0 && u.idle != nil {
		close(u.idle)
		u.idle = nil
	}
	if probed && len(u.queue) > 0 {
		u.signal() // the store is back: the others follow
	}
	return failures, 0
}

// requeue puts back a key whose upload was cut short by shutdown.
func (u *uploads) requeue(key string) {
	u.mu.Lock()
	u.probing = false
	u.queue = append(u.queue, key)
	u.mu.Unlock()
}

// waitIdle returns once nothing is queued, or ctx ends.
func (u *uploads) waitIdle(ctx context.Context) error {
	u.mu.Lock()
	idle := u.idle
	u.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Pending says how many recordings wait for the store.
func (s *Store) Pending() int {
	s.uploads.mu.Lock()
	defer s.uploads.mu.Unlock()
	return len(s.uploads.queued)
}

// RunUploads moves finished recordings to Objects until ctx ends: first
// those a stopped server left on disk, then each as its call ends. A
// failed upload is retried, with backoff, until it lands; the file stays
// on disk until then, and past a restart. Without Objects it returns at
// once.
func (s *Store) RunUploads(ctx context.Context) {
	if s.Objects == nil {
		return
	}
	s.uploads.mu.Lock()
	s.uploads.init()
	s.uploads.metrics = s.Metrics
	s.Metrics.pending(len(s.uploads.queued))
	s.uploads.mu.Unlock()
	left, err := s.local()
	if err != nil {
		s.log().Error("recordings left on disk not listed: they upload at the next start", "dir", s.Dir, "err", err)
	}
	for _, k := range left {
		if !s.isWriting(k) {
			s.uploads.add(k)
		}
	}
	if len(left) > 0 {
		s.log().Info("uploading recordings left on disk", "count", len(left), "store", s.Objects.String())
	}
	var wg sync.WaitGroup
	for range uploadWorkers {
		wg.Go(func() { s.uploadLoop(ctx) })
	}
	wg.Wait()
}

// WaitUploads returns once no recording waits for the store, or ctx ends
// (the rest upload at the next start): a stopping server gives its last
// calls' recordings a moment to land.
func (s *Store) WaitUploads(ctx context.Context) error {
	if s.Objects == nil {
		return nil
	}
	return s.uploads.waitIdle(ctx)
}

// uploadLoop is one upload worker.
func (s *Store) uploadLoop(ctx context.Context) {
	u := &s.uploads
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		key, wait := u.take(time.Now())
		if key == "" {
			var after <-chan time.Time
			if wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				after = timer.C
			}
			select {
			case <-ctx.Done():
				return
			case <-u.wake:
			case <-after:
			}
			continue
		}
		attempt, cancel := context.WithTimeout(ctx, uploadTimeout)
		err := s.upload(attempt, key)
		cancel()
		if ctx.Err() != nil && err != nil {
			u.requeue(key)
			return
		}
		failures, wait := u.done(key, err, time.Now())
		switch {
		case err != nil:
			s.log().Warn("recording upload failed; it stays on disk and is retried", "key", key, "store", s.Objects.String(),
				"failures_in_a_row", failures, "retry_in", wait.String(), "pending", s.Pending(), "err", err)
		case failures > 0:
			s.log().Info("recording uploads resumed", "store", s.Objects.String(), "after_failures", failures, "pending", s.Pending())
		}
	}
}

// upload moves one recording to the store: the file is removed once the
// store has it. A file that is gone was deleted meanwhile (Delete).
func (s *Store) upload(ctx context.Context, key string) error {
	l := s.lockKey(key)
	l.Lock()
	defer l.Unlock()
	path := s.keyPath(key)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil {
		err = s.Objects.Put(ctx, key, f, st.Size())
	}
	f.Close()
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		// Stored all the same; the file uploads again at the next start.
		s.log().Warn("uploaded recording not removed from disk", "path", path, "err", err)
	}
	return nil
}

// local lists the keys of the recordings on disk (ORG/CALL.wav).
func (s *Store) local() ([]string, error) {
	orgs, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, org := range orgs {
		if !org.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(s.Dir, org.Name()))
		if err != nil {
			return keys, err
		}
		for _, f := range files {
			if f.Type().IsRegular() && strings.HasSuffix(f.Name(), ".wav") {
				keys = append(keys, org.Name()+"/"+f.Name())
			}
		}
	}
	return keys, nil
}

func (s *Store) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
