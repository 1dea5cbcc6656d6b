package model

import "time"

// Folder groups agents. Deleting one leaves its agents uncategorized.
type Folder struct {
	ID        string
	OrgID     string
	Name      string
	Color     *string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SIP trunk transports.
const (
	TransportUDP      = "udp"
	TransportTCP      = "tcp"
	TransportTLS      = "tls"
	TransportLoopback = "loopback"
)

// SIPTrunk is a carrier or PBX connection. Password and InboundPassword are
// sealed (encrypted at rest) and never returned by the API.
type SIPTrunk struct {
	ID                  string
	OrgID               string
	FriendlyName        string
	Host                *string
	Port                *int
	Transport           string
	Username            *string
	Password            []byte
	InboundUsername     *string
	InboundPassword     []byte
	InboundAllowedCIDRs []string
	// CallsPerSecond is the trunk's outbound INVITEs per second, shared by
	// every server (nil: the server's --sip-trunk-cps; 0: unlimited).
	CallsPerSecond *float64
	// Registration is how the trunk registers with its provider (nil: it
	// does not); RegistrationStatus is what the registering server last
	// wrote about it.
	Registration       *TrunkRegistration
	RegistrationStatus RegistrationStatus
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// TrunkRegistration is a trunk's outbound registration settings. Unset
// Registrar, Transport, Username and Password fall back to the trunk's own
// host and port, transport, username and password. Password is sealed.
type TrunkRegistration struct {
	Registrar      *string `json:"registrar,omitempty"` // host or host:port
	Transport      *string `json:"transport,omitempty"`
	Username       *string `json:"username,omitempty"`
	Password       []byte  `json:"-"`
	ExpiresSeconds int     `json:"expiresSeconds"`
	// ContactUser is the user of the Contact we register: INVITEs to it
	// are the trunk's inbound calls. Never empty; unique in the deployment.
	// ContactUserSet says it was given, not derived from the username.
	ContactUser    string `json:"-"`
	ContactUserSet bool   `json:"contactUserSet,omitempty"`
	Enabled        bool   `json:"enabled"`
}

// Registration states.
const (
	RegistrationUnregistered = "unregistered"
	RegistrationRegistering  = "registering"
	RegistrationRegistered   = "registered"
	RegistrationFailed       = "failed"
)

// RegistrationStatus is where a trunk's registration stands, written only
// by the server holding it (Owner, until LeaseUntil).
type RegistrationStatus struct {
	State      string // "" until a server first takes it: unregistered
	ExpiresAt  *time.Time
	LastError  *string
	Owner      *string
	LeaseUntil *time.Time
}

// PhoneNumber is a number the organization owns; AgentID assigns it.
type PhoneNumber struct {
	ID         string
	OrgID      string
	E164       string
	SIPTrunkID *string
	AgentID    *string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// CustomTool is a webhook-backed function an agent can call during a call.
type CustomTool struct {
	ID                 string
	OrgID              string
	AgentID            string
	Name               string
	Description        *string
	WebhookURL         string
	Enabled            bool
	Schema             map[string]any
	Headers            []KeyValue
	QueryParams        []KeyValue
	SendRawRequestBody bool
	TimeoutSeconds     *int
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// KeyValue is one header or query parameter of a custom tool.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MessagingConnection is a Twilio-compatible SMS account. AuthToken is sealed.
type MessagingConnection struct {
	ID                  string
	OrgID               string
	Name                *string
	Provider            string
	BaseURL             string
	AccountSID          string
	AuthToken           []byte
	FromNumber          *string
	MessagingServiceSID *string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// KnowledgeSource is one text of a knowledge base. It is split into chunks
// for retrieval; ErrorMessage says why indexing failed (nil: it did not,
// or has not finished: IndexedAt is nil until it has).
type KnowledgeSource struct {
	ID              string
	OrgID           string
	KnowledgeBaseID string
	DisplayName     string
	Content         string
	OriginalURL     *string
	MimeType        string
	FileSize        int64
	ErrorMessage    *string
	IndexedAt       *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// KnowledgeChunk is one retrievable piece of a source: a few sentences,
// overlapping its neighbours. Embedding is its vector when an embeddings
// provider is configured (nil otherwise).
type KnowledgeChunk struct {
	SourceID  string
	Seq       int // order within the source, from 0
	Text      string
	Embedding []float32
}

// KnowledgeBase is a named collection of sources agents can retrieve from.
type KnowledgeBase struct {
	ID          string
	OrgID       string
	Name        string
	Description *string
	SourceCount int
	CreatedAt   time.Time
	UpdatedAt   time.Time
}
