package storefault

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// The writes of the background work beyond calls: test runs, trunk
// registrations, inbound texts, knowledge indexing.

func (t *faultTx) UpdateTestAttempt(ctx context.Context, a *model.TestAttempt) error {
	if err := t.check("UpdateTestAttempt", a.Status); err != nil {
		return err
	}
	return t.Tx.UpdateTestAttempt(ctx, a)
}

func (t *faultTx) UpdateTestRun(ctx context.Context, r *model.TestRun) error {
	if err := t.check("UpdateTestRun", r.Status); err != nil {
		return err
	}
	return t.Tx.UpdateTestRun(ctx, r)
}

func (t *faultTx) SetTestRunWebhookStatus(ctx context.Context, orgID, id, status string) error {
	if err := t.check("SetTestRunWebhookStatus", ""); err != nil {
		return err
	}
	return t.Tx.SetTestRunWebhookStatus(ctx, orgID, id, status)
}

func (t *faultTx) RenewTestRunLeases(ctx context.Context, owner string, ids []string, until time.Time) (int, error) {
	if err := t.check("RenewTestRunLeases", ""); err != nil {
		return 0, err
	}
	return t.Tx.RenewTestRunLeases(ctx, owner, ids, until)
}

func (t *faultTx) SetSIPRegistrationStatus(ctx context.Context, orgID, trunkID, owner string, st model.RegistrationStatus) error {
	if err := t.check("SetSIPRegistrationStatus", st.State); err != nil {
		return err
	}
	return t.Tx.SetSIPRegistrationStatus(ctx, orgID, trunkID, owner, st)
}

func (t *faultTx) ReleaseSIPRegistration(ctx context.Context, orgID, trunkID, owner, state string) error {
	if err := t.check("ReleaseSIPRegistration", state); err != nil {
		return err
	}
	return t.Tx.ReleaseSIPRegistration(ctx, orgID, trunkID, owner, state)
}

func (t *faultTx) UpdateMessage(ctx context.Context, m *model.Message) error {
	if err := t.check("UpdateMessage", m.Status); err != nil {
		return err
	}
	return t.Tx.UpdateMessage(ctx, m)
}

func (t *faultTx) ReplaceKnowledgeChunks(ctx context.Context, orgID, kbID, sourceID string, chunks []model.KnowledgeChunk) error {
	if err := t.check("ReplaceKnowledgeChunks", ""); err != nil {
		return err
	}
	return t.Tx.ReplaceKnowledgeChunks(ctx, orgID, kbID, sourceID, chunks)
}

func (t *faultTx) UpdateKnowledgeSource(ctx context.Context, s *model.KnowledgeSource) error {
	if err := t.check("UpdateKnowledgeSource", ""); err != nil {
		return err
	}
	return t.Tx.UpdateKnowledgeSource(ctx, s)
}
