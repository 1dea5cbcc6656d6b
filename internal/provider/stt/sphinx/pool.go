package sphinx

import (
	"context"
	"fmt"
	"sync"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// pool lends decoders loaded with one set of models, one utterance at a
// time. Decoders are loaded when first needed, up to size, and kept
// (idle) for the next utterance; an utterance that finds them all lent
// waits for one, however long, until its context ends: a loaded machine
// makes recognition late, never an error.
type pool struct {
	api   *api
	args  []string // the decoders' options
	blend *blend   // the model interpolated with -lm; nil none

	slots chan struct{} // one token per decoder lent or being loaded

	mu      sync.Mutex
	idle    []*decoder
	loading int // decoders being loaded now
	loaded  int // decoders loaded, ever
	closed  bool
	err     error  // the first load's failure: models do not fix themselves
	cleanup func() // run once closed and no load reads the model files
}

// newPool returns a pool of up to size decoders loaded with args (and
// blend, when not nil). cleanup (may be nil) runs once, after close, when
// no decoder is being loaded: it may remove the model files.
func newPool(a *api, args []string, blend *blend, size int, cleanup func()) *pool {
	return &pool{api: a, args: args, blend: blend, slots: make(chan struct{}, size), cleanup: cleanup}
}

// errClosed is what borrowing from a closed pool returns.
var errClosed = fmt.Errorf("%w: pocketsphinx: recognizer closed", stt.ErrUnavailable)

// borrow waits for a decoder (an idle one, or a slot to load one in) and
// lends it; give it back with giveBack. Canceling ctx ends the wait. A
// decoder being loaded when ctx ends is loaded anyway (the C call cannot
// be interrupted) and kept idle for the next utterance.
func (p *pool) borrow(ctx context.Context) (*decoder, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		<-p.slots
		return nil, errClosed
	case p.err != nil:
		err := p.err
		p.mu.Unlock()
		<-p.slots
		return nil, err
	case len(p.idle) > 0:
		d := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		p.mu.Unlock()
		return d, nil
	}
	p.loading++
	p.mu.Unlock()
	d, err := newDecoder(p.api, p.args, p.blend)
	p.mu.Lock()
	p.loading--
	if err != nil && p.err == nil {
		p.err = err
	} else if err == nil {
		p.loaded++
	}
	done := p.closedIdle()
	p.mu.Unlock()
	if done != nil {
		done()
	}
	if err != nil {
		<-p.slots
		return nil, err
	}
	if ctx.Err() != nil {
		p.giveBack(d)
		return nil, ctx.Err()
	}
	return d, nil
}

// giveBack returns a lent decoder, with no utterance in progress. After
// Close it is freed instead.
func (p *pool) giveBack(d *decoder) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		d.free()
	} else {
		p.idle = append(p.idle, d)
		p.mu.Unlock()
	}
	<-p.slots
}

// warm loads one decoder (if none is idle yet) so the first utterance does
// not wait for it, and reports a load failure.
func (p *pool) warm(ctx context.Context) error {
	d, err := p.borrow(ctx)
	if err != nil {
		return err
	}
	p.giveBack(d)
	return nil
}

// close frees the idle decoders and makes later borrows fail; decoders
// lent now are freed when they are given back.
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	done := p.closedIdle()
	p.mu.Unlock()
	for _, d := range idle {
		d.free()
	}
	if done != nil {
		done()
	}
}

// closedIdle hands out the cleanup once the pool is closed and loads
// nothing (nil otherwise, and ever after); called with mu held.
func (p *pool) closedIdle() func() {
	if !p.closed || p.loading > 0 || p.cleanup == nil {
		return nil
	}
	f := p.cleanup
	p.cleanup = nil
	return f
}

func (p *pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}
