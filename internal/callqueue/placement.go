package callqueue

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Admission in batches. Each admission decides under its organization's
// lock (a row lock on PostgreSQL, held to the commit), so one
// organization's admissions take turns, each paying its transaction's
// round trips and its commit's flush to disk while the others wait: on
// PostgreSQL that, not the CPU, bounded an organization's admissions. The
// Place calls that arrive while one of the organization's admissions is
// under way wait for it and are then decided together, in arrival order,
// in one transaction under one lock: the same decisions as one by one (the
// live count and the queue as each finds them), one commit for all.

// placing is one Place call: what to admit, and once done is closed, how
// it went.
type placing struct {
	ctx       context.Context
	c         *model.Call
	skipQueue bool
	record    func(store.Tx, model.Call) error

	admitted bool
	err      error
	done     chan struct{}   // closed once admitted and err are final
	lead     chan []*placing // the batch this call is to run, first in it
}

// placements is one organization's admissions: a batch is under way, and
// next wait for the one after it.
type placements struct {
	next []*placing
}

// place decides p, alone or with the calls that arrived meanwhile, and
// returns once p is decided.
func (q *Queue) place(p *placing) {
	org := p.c.OrgID
	q.placeMu.Lock()
	if pl := q.placements[org]; pl != nil {
		pl.next = append(pl.next, p)
		q.placeMu.Unlock()
		select {
		case <-p.done:
			return
		case batch := <-p.lead:
			q.placeBatch(org, batch)
			return
		}
	}
	q.placements[org] = &placements{}
	q.placeMu.Unlock()
	q.placeBatch(org, []*placing{p})
}

// placeBatch decides batch (its first call runs it), then hands the calls
// that arrived meanwhile to the first of them, or ends the organization's
// turn.
func (q *Queue) placeBatch(org string, batch []*placing) {
	q.decide(batch)
	for _, p := range batch[1:] {
		close(p.done)
	}
	q.placeMu.Lock()
	pl := q.placements[org]
	next := pl.next
	pl.next = nil
	if len(next) == 0 {
		delete(q.placements, org)
	}
	q.placeMu.Unlock()
	if len(next) > 0 {
		next[0].lead <- next
	}
	close(batch[0].done)
}

// decide admits or queues the calls of batch in one transaction; if it
// fails, each is decided alone, so each sees its own error.
func (q *Queue) decide(batch []*placing) {
	var live []*placing
	for _, p := range batch {
		if p.err = p.ctx.Err(); p.err == nil {
			live = append(live, p)
		}
	}
	if len(live) == 1 {
		q.decideOne(live[0])
		return
	}
	if len(live) == 0 {
		return
	}
	saved := make([]model.Call, len(live))
	for i, p := range live {
		saved[i] = *p.c
	}
	// Detached from the first caller's cancellation: it decides for all.
	ctx := context.WithoutCancel(live[0].ctx)
	err := q.o.Store.Update(ctx, func(tx store.Tx) error {
		org, err := tx.LockOrg(ctx, live[0].c.OrgID)
		if err != nil {
			return err
		}
		l, err := tx.CountLines(ctx, live[0].c.OrgID)
		if err != nil {
			return err
		}
		used, queued := l.Live, l.Queued
		for i, p := range live {
			*p.c, p.admitted, p.err = saved[i], false, nil // a second run of fn starts over
			need := lines(*p.c)
			free := used+need <= org.ConcurrencyLimit
			if p.skipQueue && !free {
				p.err = ErrConcurrencyLimit // nothing stored
				continue
			}
			if p.err = q.drainingRefuses(p, &free); p.err != nil {
				continue
			}
			if p.admitted = free && (p.skipQueue || !queued); p.admitted {
				if err := q.admit(p.c, p.c.CreatedAt); err != nil {
					return err
				}
				used += need
			} else {
				queued = true
			}
			if err := tx.CreateCall(ctx, p.c); err != nil {
				return err
			}
			if p.record != nil {
				if err := p.record(tx, *p.c); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil {
		return
	}
	for i, p := range live {
		if p.admitted {
			q.unclaim(p.c.ID)
		}
		*p.c, p.admitted, p.err = saved[i], false, nil
		q.decideOne(p)
	}
}

// decideOne admits or queues p in a transaction of its own.
func (q *Queue) decideOne(p *placing) {
	c, ctx := p.c, p.ctx
	p.admitted = false
	p.err = q.o.Store.Update(ctx, func(tx store.Tx) error {
		free, queued, err := lineFree(ctx, tx, c.OrgID, lines(*c))
		if err != nil {
			return err
		}
		if p.skipQueue && !free {
			return ErrConcurrencyLimit
		}
		if err := q.drainingRefuses(p, &free); err != nil {
			return err
		}
		p.admitted = free && (p.skipQueue || !queued)
		if p.admitted {
			if err := q.admit(c, c.CreatedAt); err != nil {
				return err
			}
		}
		if err := tx.CreateCall(ctx, c); err != nil || p.record == nil {
			return err
		}
		return p.record(tx, *c)
	})
}
