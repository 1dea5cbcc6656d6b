package sms

import (
	"context"
	"errors"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// SweepEvery is how often Run looks for replies a stopped server owed.
const SweepEvery = 30 * time.Second

const sweepBatch = 50

// Run answers, until ctx ends, the inbound texts that a server took and
// did not answer because it stopped (crashed, or shut down mid-reply):
// every SweepEvery it takes over the replies whose lease ran out. With
// reclaimAll (one server owns the database, as with SQLite), the first
// sweep takes every owed reply at once instead of waiting out the leases
// of the server that this one replaces.
func (s *Messages) Run(ctx context.Context, reclaimAll bool) {
	first := time.Now()
	if reclaimAll {
		first = first.Add(replyLease)
	}
	if _, err := s.Sweep(ctx, first); err != nil && ctx.Err() == nil {
		s.logger().Error("inbound replies: sweep", "error", err)
	}
	tick := time.NewTicker(SweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, err := s.Sweep(ctx, time.Now()); err != nil && ctx.Err() == nil {
				s.logger().Error("inbound replies: sweep", "error", err)
			}
		}
	}
}

// Sweep takes over the replies due at now and answers them in the
// background; it returns how many it took. A reply another server claims
// first is left to it. A text that has had an answer since (the reply was
// recorded before its server stopped, or the customer answered through
// the API) is settled without another; one older than an hour, or whose
// agent is gone, is settled unanswered, saying why.
func (s *Messages) Sweep(ctx context.Context, now time.Time) (int, error) {
	due, err := store.Read(ctx, s.Store, func(tx store.Tx) ([]model.Message, error) {
		return tx.DueReplies(ctx, now, sweepBatch)
	})
	if err != nil {
		return 0, err
	}
	taken := 0
	for _, m := range due {
		var (
			claimed, answered bool
			agent             model.Agent
			agentErr          error
		)
		err := s.Store.Update(ctx, func(tx store.Tx) error {
			ok, err := tx.ClaimReply(ctx, m.OrgID, m.ID, now, now.Add(replyLease))
			if err != nil || !ok {
				return err
			}
			claimed = true
			if m.AgentID == nil {
				agentErr = store.ErrNotFound
			} else {
				agent, agentErr = tx.GetAgent(ctx, m.OrgID, *m.AgentID)
			}
			newest, err := tx.ConversationMessages(ctx, m.OrgID, m.ConversationID, 1)
			answered = len(newest) == 1 && newest[0].ID != m.ID
			return err
		})
		if err != nil {
			return taken, err
		}
		if !claimed {
			continue
		}
		taken++
		switch {
		case answered:
			s.settle(ctx, m, nil)
		case now.Sub(m.CreatedAt) > maxReplyAge:
			s.settle(ctx, m, errors.New("the server stopped before replying, and the text is over an hour old"))
		case errors.Is(agentErr, store.ErrNotFound):
			s.settle(ctx, m, errors.New("the agent was deleted"))
		case agentErr != nil:
			return taken, agentErr
		default:
			s.logger().Info("inbound message: answering for a server that stopped", "message", m.ID)
			s.background(func(ctx context.Context) { s.handle(ctx, agent, m) })
		}
	}
	return taken, nil
}
