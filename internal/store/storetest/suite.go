package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Opener returns a fresh, empty, migrated store that is closed when t ends.
type Opener func(t *testing.T) store.Store

// test is one subtest of the suite.
type test struct {
	name string
	run  func(t *testing.T, b *bundle)
}

// Run runs the whole suite against the stores open returns.
func Run(t *testing.T, open Opener) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Orgs", orgTests},
		{"APIKeys", apiKeyTests},
		{"Users", userTests},
		{"Sessions", sessionTests},
		{"Agents", agentTests},
		{"AgentList", agentListTests},
		{"CustomTools", customToolTests},
		{"Folders", folderTests},
		{"SIPTrunks", sipTrunkTests},
		{"PhoneNumbers", phoneNumberTests},
		{"MessagingConnections", messagingConnectionTests},
		{"KnowledgeBases", knowledgeBaseTests},
		{"KnowledgeSources", knowledgeSourceTests},
		{"KnowledgeSearch", knowledgeSearchTests},
		{"Calls", callTests},
		{"CallList", callListTests},
		{"CallSearch", callSearchTests},
		{"CallWriters", callWriterTests},
		{"LiveCount", liveCountTests},
		{"ChangeCall", changeCallTests},
		{"TestCalls", testCallTests},
		{"Messages", messageTests},
		{"TestSuites", testSuiteTests},
		{"TestRuns", testRunTests},
		{"TestSuiteCascades", testSuiteCascadeTests},
		{"Cascades", cascadeTests},
		{"Transactions", transactionTests},
		{"IdempotencyKeys", idempotencyTests},
		{"CallDialogs", callDialogTests},
		{"SIPRegistrations", sipRegistrationTests},
		{"Campaigns", campaignTests},
		{"CampaignRecipients", recipientTests},
		{"Suppressions", suppressionTests},
		{"TrunkPacing", trunkPacingTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, setup(t, open))
				})
			}
		})
	}
}

// bundle is what every subtest starts with: a fresh store holding two
// organizations, so each test can check that one cannot see the other's rows.
type bundle struct {
	ctx   context.Context
	st    store.Store
	org   model.Organization
	other model.Organization
}

func setup(t *testing.T, open Opener) *bundle {
	t.Helper()
	b := &bundle{ctx: t.Context(), st: open(t)}
	b.org = newOrg(t, b, "acme")
	b.other = newOrg(t, b, "globex")
	return b
}

// base is the time fixtures are created around; at(i) is i seconds later.
var base = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func at(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }

func ptr[T any](v T) *T { return &v }

// update runs fn in a write transaction and fails the test on error.
func (b *bundle) update(t *testing.T, fn func(store.Tx) error) {
	t.Helper()
	if err := b.st.Update(b.ctx, fn); err != nil {
		t.Fatalf("update: %v", err)
	}
}

// view runs fn in a read transaction and returns its error.
func (b *bundle) view(fn func(store.Tx) error) error {
	return b.st.View(b.ctx, fn)
}

// read returns what fn reads in a read transaction, failing the test on error.
func read[T any](t *testing.T, b *bundle, fn func(store.Tx) (T, error)) T {
	t.Helper()
	var v T
	err := b.st.View(b.ctx, func(tx store.Tx) error {
		var err error
		v, err = fn(tx)
		return err
	})
	if err != nil {
		t.Fatalf("view: %v", err)
	}
	return v
}

// readErr returns the error of what fn reads.
func readErr[T any](b *bundle, fn func(store.Tx) (T, error)) error {
	return b.st.View(b.ctx, func(tx store.Tx) error {
		_, err := fn(tx)
		return err
	})
}

// writeErr returns the error of a write transaction running fn.
func (b *bundle) writeErr(fn func(store.Tx) error) error {
	return b.st.Update(b.ctx, fn)
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func wantEqual[T any](t *testing.T, want, got T, opts ...cmp.Option) {
	t.Helper()
	if d := cmp.Diff(want, got, opts...); d != "" {
		t.Fatalf("mismatch (-want +got):\n%s", d)
	}
}
