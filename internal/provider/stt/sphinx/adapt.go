package sphinx

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// ModelBuilder writes a language model (ARPA) and a pronunciation
// dictionary (cmudict format) for texts into dir, an empty directory of
// its own, and returns their paths. Package stt/sphinx/lm's Build is the
// one Parley uses.
type ModelBuilder func(ctx context.Context, texts []string, dir string) (lm, dict string, err error)

// domain is one adapted domain: its model files and, once built, the
// pool of decoders loaded with them.
type domain struct {
	key   string
	ready chan struct{} // closed when the build ended
	rec   *adapted      // set before ready closes, on success
	err   error         // set before ready closes, on failure
	asked int           // Adapt calls that found it building or built
	elem  *list.Element // in domains.lru, while cached
}

// domains caches adapted domains by stt.Domain.Key: each is built once
// however many calls ask for it at once (the first starts the build, the
// others wait for it), and at most Config.Domains are kept, the least
// recently used dropped first (their decoders freed, their files
// removed). Builds run on goroutines of their own, so a caller that gives
// up does not cancel a build others wait for; close cancels them and
// waits.
type domains struct {
	r      *Recognizer
	ctx    context.Context // the builds'; canceled by close
	cancel context.CancelFunc
	builds sync.WaitGroup

	mu     sync.Mutex
	byKey  map[string]*domain
	lru    *list.List // of *domain, most recently used first
	closed bool
}

func newDomains(r *Recognizer) *domains {
	ctx, cancel := context.WithCancel(context.Background())
	return &domains{r: r, ctx: ctx, cancel: cancel, byKey: map[string]*domain{}, lru: list.New()}
}

// Adapt implements stt.Adaptable: the recognizer for conversations in d,
// whose decoders use a language model and dictionary built from d.Texts
// by Config.Builder. The first call for a key builds the model and loads
// one decoder (so a model pocketsphinx refuses fails here, and the first
// utterance does not wait for it); later calls return the cached
// recognizer. Without a Builder, or for a domain without texts, it
// returns r itself.
func (r *Recognizer) Adapt(ctx context.Context, d stt.Domain) (stt.Recognizer, error) {
	if r.c.Builder == nil || d.Key == "" || len(d.Texts) == 0 {
		return r, nil
	}
	if _, err := r.pool(); err != nil { // the library and the acoustic model
		return nil, err
	}
	return r.domains.get(ctx, d)
}

// get returns d's recognizer, starting its build if no one has.
func (c *domains) get(ctx context.Context, d stt.Domain) (*adapted, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errClosed
	}
	e, ok := c.byKey[d.Key]
	if ok {
		c.lru.MoveToFront(e.elem)
		e.asked++
	} else {
		e = &domain{key: d.Key, ready: make(chan struct{})}
		e.elem = c.lru.PushFront(e)
		c.byKey[d.Key] = e
		c.builds.Add(1)
		go c.build(e, d.Texts)
	}
	c.mu.Unlock()
	select {
	case <-e.ready:
		return e.rec, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// build makes e's model files and its pool, then drops the least recently
// used domains over the limit; a failed build is forgotten, so a later
// call tries again.
func (c *domains) build(e *domain, texts []string) {
	defer c.builds.Done()
	rec, err := c.load(e.key, texts)
	c.mu.Lock()
	e.rec, e.err = rec, err
	var evicted []*domain
	if err != nil {
		c.forget(e)
	} else {
		evicted = c.trim()
	}
	c.mu.Unlock()
	for _, old := range evicted {
		old.rec.close()
	}
	close(e.ready)
}

// load builds the model files for texts in a new directory and loads the
// first decoder.
func (c *domains) load(key string, texts []string) (*adapted, error) {
	if err := os.MkdirAll(c.r.c.CacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("stt/sphinx: domain models: %w", err)
	}
	dir, err := os.MkdirTemp(c.r.c.CacheDir, "domain-"+safeName(key)+"-")
	if err != nil {
		return nil, fmt.Errorf("stt/sphinx: domain models: %w", err)
	}
	lm, dict, err := c.r.c.Builder(c.ctx, texts, dir)
	if err == nil {
		err = errors.Join(readable(lm), readable(dict))
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("stt/sphinx: domain model: %w", err)
	}
	a, err := loadLibrary()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := newPool(a, c.r.args(lm, dict, false), c.r.blend(), c.r.c.DomainDecoders, func() { os.RemoveAll(dir) })
	if err := p.warm(c.ctx); err != nil {
		p.close()
		return nil, err
	}
	rec := &adapted{r: c.r, pool: p, dir: dir}
	if c.r.hasNarrowband() {
		// Its decoders load on first use, from the files p keeps until
		// both are closed (the domain dropped).
		rec.narrow = newPool(a, c.r.args(lm, dict, true), c.r.blend(), c.r.c.DomainDecoders, nil)
	}
	return rec, nil
}

// trim drops built domains past the limit, least recently used first,
// and returns them (their pools still to close); mu held.
func (c *domains) trim() []*domain {
	var out []*domain
	for el := c.lru.Back(); el != nil && c.lru.Len() > c.r.c.Domains; {
		prev := el.Prev()
		if e := el.Value.(*domain); e.rec != nil {
			c.forget(e)
			out = append(out, e)
		}
		el = prev
	}
	return out
}

// forget removes e from the cache; mu held.
func (c *domains) forget(e *domain) {
	if e.elem != nil {
		c.lru.Remove(e.elem)
		e.elem = nil
		delete(c.byKey, e.key)
	}
}

// close cancels the builds, waits for them and frees every domain.
func (c *domains) close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.builds.Wait()
	c.mu.Lock()
	var all []*domain
	for el := c.lru.Front(); el != nil; el = el.Next() {
		all = append(all, el.Value.(*domain))
	}
	c.byKey, c.lru = map[string]*domain{}, list.New()
	c.mu.Unlock()
	for _, e := range all {
		e.rec.close()
	}
	return nil
}

// safeName keeps the characters of a key that are safe in a file name.
func safeName(key string) string {
	b := []byte(key)
	if len(b) > 32 {
		b = b[:32]
	}
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// adapted is the recognizer for one domain: Recognizer's methods on the
// domain's pool.
type adapted struct {
	r      *Recognizer
	pool   *pool
	narrow *pool  // with Config.NarrowbandMLLR, for phone audio; nil without
	dir    string // the model files
}

// close frees the domain's decoders.
func (a *adapted) close() {
	if a.narrow != nil {
		a.narrow.close()
	}
	a.pool.close()
}

var _ stt.Streamer = (*adapted)(nil)

// get is the domain's pool, or the generic one once the domain was
// dropped from the cache (a call that adapted to it may still be going).
func (a *adapted) get(rate int) (*pool, error) {
	p := a.pool
	if a.narrow != nil && a.r.narrowband(rate) {
		p = a.narrow
	}
	if p.isClosed() {
		return a.r.poolFor(rate)
	}
	return p, nil
}

// Transcribe implements stt.Recognizer with the domain's model.
func (a *adapted) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	return transcribe(ctx, a.get, pcm, rate, language)
}

// Open implements stt.Streamer with the domain's model.
func (a *adapted) Open(ctx context.Context, rate int, language string) (stt.Stream, error) {
	return open(ctx, a.get, rate, language)
}
