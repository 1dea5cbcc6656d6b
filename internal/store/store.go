// Package store defines how Parley persists its resources: one Store with
// managed transactions (Update for writes, View for reads, in the manner of
// bbolt), a Tx with every query, and the sentinel errors the rest of the
// program maps to answers. Implementations live in sqlite/ and postgres/ and
// must both pass storetest. Every query takes the organization id: nothing
// crosses tenants.
package store

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// Store is a database holding every organization's resources.
type Store interface {
	// Update runs fn in a read-write transaction, committed when fn returns
	// nil and rolled back otherwise.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(Tx) error) error
	// Engine names the database engine ("sqlite" or "postgres").
	Engine() string
	// Ping checks the database answers.
	Ping(ctx context.Context) error
	// WatchLines calls wake whenever a call of an organization that has
	// queued calls stops holding a line, whichever server sharing the
	// database ended it, until ctx ends (nil) or the watch fails (its
	// error; wakes may have been missed). An engine only one server uses
	// answers errors.ErrUnsupported at once: that server's queue hears its
	// own calls end.
	WatchLines(ctx context.Context, wake func()) error
	Close() error
}

// Tx is every query Parley makes, run inside one transaction.
type Tx interface {
	Orgs
	APIKeys
	Users
	Sessions
	Agents
	CustomTools
	Folders
	SIPTrunks
	PhoneNumbers
	MessagingConnections
	KnowledgeBases
	Calls
	Messages
	TestSuites
	IdempotencyKeys
	CallDialogs
	SIPRegistrations
	Campaigns
	TrunkPacing
}

// SIPRegistrations keeps the status of trunks' outbound registrations. The
// settings are the trunk's (written by UpdateSIPTrunk); the status is
// written only by the server holding the registration, which claims it
// with a lease as calls are (one server per registration when several
// share a database).
type SIPRegistrations interface {
	// RegisteringTrunks lists every trunk of every organization that has
	// registration settings; it is for the servers keeping them alive.
	RegisteringTrunks(ctx context.Context) ([]model.SIPTrunk, error)
	// GetSIPTrunkByContactUser finds, across organizations, the trunk that
	// registers contact user user; it is for routing inbound calls.
	GetSIPTrunkByContactUser(ctx context.Context, user string) (model.SIPTrunk, error)
	// ClaimSIPRegistration takes or renews owner's hold on a trunk's
	// registration until until, when it is free, owner's, or its holder's
	// lease ended before now; force takes it from any holder. false when
	// another holds it or the trunk no longer registers.
	ClaimSIPRegistration(ctx context.Context, orgID, trunkID, owner string, now, until time.Time, force bool) (bool, error)
	// SetSIPRegistrationStatus writes state, expiry and last error (st's
	// Owner and LeaseUntil are ignored); ErrNotFound unless owner holds it.
	SetSIPRegistrationStatus(ctx context.Context, orgID, trunkID, owner string, st model.RegistrationStatus) error
	// ReleaseSIPRegistration gives owner's hold up, leaving state.
	ReleaseSIPRegistration(ctx context.Context, orgID, trunkID, owner, state string) error
}

// CallDialogs persists the SIP dialog of each answered live call
// (model.CallDialog), so that whichever server ends a call its own server
// lost can hang up the far end. The server running the call writes it;
// the one that ends the call deletes it in the same transaction.
type CallDialogs interface {
	// PutCallDialog stores d, replacing the call's previous one.
	// ErrNotFound when the organization has no such call.
	PutCallDialog(ctx context.Context, d *model.CallDialog) error
	// GetCallDialog reads the call's dialog; ErrNotFound when it has none.
	GetCallDialog(ctx context.Context, orgID, callID string) (model.CallDialog, error)
	// DeleteCallDialog deletes the call's dialog; none is not an error.
	DeleteCallDialog(ctx context.Context, orgID, callID string) error
}

// IdempotencyKeys persists the Idempotency-Keys of create requests
// (model.IdempotencyKey), written in the transaction that creates their
// resource. since is the start of the window a key is remembered for:
// keys from before it count as never used.
type IdempotencyKeys interface {
	// PutIdempotencyKey stores k; a key of the organization and scope
	// stored since since is ErrConflict.
	PutIdempotencyKey(ctx context.Context, k *model.IdempotencyKey, since time.Time) error
	GetIdempotencyKey(ctx context.Context, orgID, scope, key string, since time.Time) (model.IdempotencyKey, error)
	// SetIdempotencyResponse records the body of the first response.
	SetIdempotencyResponse(ctx context.Context, orgID, scope, key string, body []byte) error
}

// Orgs persists organizations.
type Orgs interface {
	CreateOrg(ctx context.Context, o *model.Organization) error
	GetOrg(ctx context.Context, id string) (model.Organization, error)
	// GetOrgByName finds an organization by its exact name (used by the CLI).
	GetOrgByName(ctx context.Context, name string) (model.Organization, error)
	UpdateOrg(ctx context.Context, o *model.Organization) error
	CountOrgs(ctx context.Context) (int, error)
}

// APIKeys persists API keys, found only by the hash of their secret.
type APIKeys interface {
	CreateAPIKey(ctx context.Context, k *model.APIKey) error
	GetAPIKeyByHash(ctx context.Context, hash []byte) (model.APIKey, error)
	ListAPIKeys(ctx context.Context, orgID string) ([]model.APIKey, error)
	RevokeAPIKey(ctx context.Context, orgID, id string) error
	CountAPIKeys(ctx context.Context) (int, error)
}

// Users persists dashboard users. An email exists once in the whole
// deployment (sign-in finds the user by it alone): creating it twice is
// ErrConflict. Emails are compared as stored; the caller lower-cases them.
type Users interface {
	CreateUser(ctx context.Context, u *model.User) error
	GetUser(ctx context.Context, orgID, id string) (model.User, error)
	// GetUserByEmail looks a user up across organizations; it is for
	// signing in only.
	GetUserByEmail(ctx context.Context, email string) (model.User, error)
	// SetUserPassword replaces the user's password hash and whether it must
	// be changed at the next sign-in.
	SetUserPassword(ctx context.Context, orgID, id, hash string, mustChange bool) error
	// ListUsers lists a page of the organization's users by creation time,
	// in p's direction (newest first by default).
	ListUsers(ctx context.Context, orgID string, p Page) ([]model.User, int, error)
	// DeleteUser deletes the user; the schema deletes their sessions.
	DeleteUser(ctx context.Context, orgID, id string) error
	CountUsers(ctx context.Context) (int, error)
}

// Sessions persists signed-in dashboard sessions, found only by the hash
// of their token. Deleting a user deletes its sessions.
type Sessions interface {
	// CreateSession stores s; its user must exist in its organization
	// (ErrNotFound otherwise).
	CreateSession(ctx context.Context, s *model.Session) error
	// GetSessionByHash finds a session, expired ones too: the caller
	// decides what expiry means.
	GetSessionByHash(ctx context.Context, hash []byte) (model.Session, error)
	// DeleteSession deletes the session with this hash; none is not an error.
	DeleteSession(ctx context.Context, hash []byte) error
	// DeleteUserSessions deletes every session of the user.
	DeleteUserSessions(ctx context.Context, orgID, userID string) error
	// DeleteExpiredSessions deletes the sessions that expired before
	// before and returns how many.
	DeleteExpiredSessions(ctx context.Context, before time.Time) (int, error)
}

// Agents persists agents and their knowledge-base assignments.
type Agents interface {
	CreateAgent(ctx context.Context, a *model.Agent) error
	GetAgent(ctx context.Context, orgID, id string) (model.Agent, error)
	// GetAgentByID looks an agent up across organizations; it is for
	// routing inbound calls to agent-<uuid> only.
	GetAgentByID(ctx context.Context, id string) (model.Agent, error)
	// GetAgents returns the agents among ids that exist in the organization,
	// in no particular order.
	GetAgents(ctx context.Context, orgID string, ids []string) ([]model.Agent, error)
	ListAgents(ctx context.Context, orgID string, f AgentFilter) ([]model.Agent, int, error)
	UpdateAgent(ctx context.Context, a *model.Agent) error
	DeleteAgent(ctx context.Context, orgID, id string) error
	// Every query above leaves simulated callers out (model.Agent
	// SimulatedCaller, a test run's hidden agents): to them such an agent
	// does not exist.

	// GetCallAgent reads any agent of the organization, simulated callers
	// included; it is for the call plane's reads of a call's own agent.
	GetCallAgent(ctx context.Context, orgID, id string) (model.Agent, error)
	// DeleteSimulatedCaller deletes an agent that is a simulated caller;
	// any other agent is ErrNotFound.
	DeleteSimulatedCaller(ctx context.Context, orgID, id string) error
	// SetAgentKnowledgeBases replaces the agent's assignments with kbIDs.
	SetAgentKnowledgeBases(ctx context.Context, orgID, agentID string, kbIDs []string) error
	// AgentKnowledgeBases returns, per agent id, its assigned knowledge bases
	// ordered by name then id.
	AgentKnowledgeBases(ctx context.Context, orgID string, agentIDs []string) (map[string][]model.KnowledgeBaseRef, error)
}

// CustomTools persists agents' custom tools.
type CustomTools interface {
	CreateCustomTool(ctx context.Context, t *model.CustomTool) error
	GetCustomTool(ctx context.Context, orgID, agentID, id string) (model.CustomTool, error)
	// ListCustomTools returns, per agent id, its tools in creation order.
	ListCustomTools(ctx context.Context, orgID string, agentIDs []string) (map[string][]model.CustomTool, error)
	UpdateCustomTool(ctx context.Context, t *model.CustomTool) error
	DeleteCustomTool(ctx context.Context, orgID, agentID, id string) error
}

// Folders persists folders. Deleting one leaves its agents without a folder.
type Folders interface {
	CreateFolder(ctx context.Context, f *model.Folder) error
	GetFolder(ctx context.Context, orgID, id string) (model.Folder, error)
	GetFolders(ctx context.Context, orgID string, ids []string) ([]model.Folder, error)
	ListFolders(ctx context.Context, orgID string, p Page) ([]model.Folder, int, error)
	UpdateFolder(ctx context.Context, f *model.Folder) error
	DeleteFolder(ctx context.Context, orgID, id string) error
}

// SIPTrunks persists SIP trunks. Deleting one unassigns it from agents and
// phone numbers.
type SIPTrunks interface {
	CreateSIPTrunk(ctx context.Context, t *model.SIPTrunk) error
	GetSIPTrunk(ctx context.Context, orgID, id string) (model.SIPTrunk, error)
	GetSIPTrunks(ctx context.Context, orgID string, ids []string) ([]model.SIPTrunk, error)
	ListSIPTrunks(ctx context.Context, orgID string, p Page) ([]model.SIPTrunk, int, error)
	UpdateSIPTrunk(ctx context.Context, t *model.SIPTrunk) error
	DeleteSIPTrunk(ctx context.Context, orgID, id string) error
	// AnyInboundAuthTrunk reports whether any trunk of any organization
	// requires inbound digest authentication; it is for answering INVITEs
	// to unknown numbers as such a trunk would (no enumeration).
	AnyInboundAuthTrunk(ctx context.Context) (bool, error)
}

// PhoneNumbers persists phone numbers. An E.164 number exists once in the
// whole deployment (inbound routing needs it unambiguous): creating it twice
// is ErrConflict.
type PhoneNumbers interface {
	CreatePhoneNumber(ctx context.Context, n *model.PhoneNumber) error
	GetPhoneNumber(ctx context.Context, orgID, id string) (model.PhoneNumber, error)
	// GetPhoneNumberByE164 looks a number up across organizations; it is for
	// routing inbound calls, never for answering an API request.
	GetPhoneNumberByE164(ctx context.Context, e164 string) (model.PhoneNumber, error)
	ListPhoneNumbers(ctx context.Context, orgID string, f PhoneNumberFilter) ([]model.PhoneNumber, int, error)
	// AgentPhoneNumbers returns, per agent id, its numbers ordered by e164.
	AgentPhoneNumbers(ctx context.Context, orgID string, agentIDs []string) (map[string][]model.PhoneNumber, error)
	UpdatePhoneNumber(ctx context.Context, n *model.PhoneNumber) error
	DeletePhoneNumber(ctx context.Context, orgID, id string) error
}

// MessagingConnections persists SMS accounts. Deleting one unassigns it from
// agents.
type MessagingConnections interface {
	CreateMessagingConnection(ctx context.Context, c *model.MessagingConnection) error
	GetMessagingConnection(ctx context.Context, orgID, id string) (model.MessagingConnection, error)
	ListMessagingConnections(ctx context.Context, orgID string, p Page) ([]model.MessagingConnection, int, error)
	// UpdateMessagingConnection replaces the connection's settings (not
	// its id, organization or creation time).
	UpdateMessagingConnection(ctx context.Context, c *model.MessagingConnection) error
	DeleteMessagingConnection(ctx context.Context, orgID, id string) error
}

// KnowledgeBases persists knowledge bases. Deleting one unlinks its agents.
type KnowledgeBases interface {
	CreateKnowledgeBase(ctx context.Context, kb *model.KnowledgeBase) error
	GetKnowledgeBase(ctx context.Context, orgID, id string) (model.KnowledgeBase, error)
	GetKnowledgeBases(ctx context.Context, orgID string, ids []string) ([]model.KnowledgeBase, error)
	ListKnowledgeBases(ctx context.Context, orgID string, p Page) ([]model.KnowledgeBase, int, error)
	UpdateKnowledgeBase(ctx context.Context, kb *model.KnowledgeBase) error
	DeleteKnowledgeBase(ctx context.Context, orgID, id string) error

	// Sources, in creation order. Deleting a base (or a source) deletes
	// its sources' chunks.
	CreateKnowledgeSource(ctx context.Context, s *model.KnowledgeSource) error
	GetKnowledgeSource(ctx context.Context, orgID, kbID, id string) (model.KnowledgeSource, error)
	ListKnowledgeSources(ctx context.Context, orgID, kbID string) ([]model.KnowledgeSource, error)
	// UpdateKnowledgeSource writes ErrorMessage, IndexedAt and UpdatedAt.
	UpdateKnowledgeSource(ctx context.Context, s *model.KnowledgeSource) error
	DeleteKnowledgeSource(ctx context.Context, orgID, kbID, id string) error
	// PendingKnowledgeSources returns up to limit sources of any
	// organization whose indexing never finished (no indexedAt, no
	// errorMessage), oldest first: what a restart must index again.
	PendingKnowledgeSources(ctx context.Context, limit int) ([]model.KnowledgeSource, error)

	// ReplaceKnowledgeChunks makes chunks the source's chunks (indexing is
	// idempotent: the old ones go).
	ReplaceKnowledgeChunks(ctx context.Context, orgID, kbID, sourceID string, chunks []model.KnowledgeChunk) error
	// SearchKnowledgeChunks ranks the chunks of the bases by full-text
	// relevance to query (SQLite FTS5 bm25, PostgreSQL ts_rank), best
	// first, at most limit. Hits carry the store's raw score (higher is
	// better); chunks that match no query term are not returned.
	SearchKnowledgeChunks(ctx context.Context, orgID string, kbIDs []string, query string, limit int) ([]ChunkHit, error)
	// KnowledgeChunkVectors returns every chunk of the bases that has an
	// embedding (for cosine similarity in Go), text included.
	KnowledgeChunkVectors(ctx context.Context, orgID string, kbIDs []string) ([]ChunkHit, error)
}

// ChunkHit is a chunk found by a search, with its source's name.
type ChunkHit struct {
	model.KnowledgeChunk
	KnowledgeBaseID string
	DisplayName     string
	Score           float64
}
