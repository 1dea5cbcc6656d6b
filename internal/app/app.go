package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	parley "github.com/parley-voice/parley"
	"github.com/parley-voice/parley/internal/account"
	"github.com/parley-voice/parley/internal/api"
	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/simdial"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/domain"
	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/pipeline"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/sqlite"
	"github.com/parley-voice/parley/internal/telephony"
	"github.com/parley-voice/parley/internal/telephony/registration"
	"github.com/parley-voice/parley/internal/web"
	"github.com/parley-voice/parley/internal/webhook"
)

// App is a wired Parley: its store, services, call queue and HTTP interface.
type App struct {
	Config   Config
	Store    store.Store
	Orgs     *org.Service
	Accounts *account.Service
	API      *api.Server
	// Web is the dashboard; HTTP serves it beside the API.
	Web   *web.Server
	HTTP  http.Handler
	Queue *callqueue.Queue
	// Campaigns dials running campaigns through Queue.
	Campaigns *campaign.Dispatcher
	Webhooks  *webhook.Sender
	// Knowledge indexes sources in the background; Close waits for it.
	Knowledge *knowledge.Service
	// Messages answers inbound texts in the background; Close waits for it.
	Messages *sms.Messages
	// UA is the SIP user agent (nil unless --dialer sip); serve starts it.
	UA    *sipua.UA
	Phone *telephony.Phone
	// Recordings keeps call recordings; with an object store, serve runs
	// its uploads.
	Recordings *recording.Store
	// Registrations keeps trunks' registrations alive (nil unless
	// --dialer sip); serve runs it while SIP is up.
	Registrations *registration.Keeper
	// Engine runs conversations; Close waits for the traces of ended calls
	// it is still exporting.
	Engine *pipeline.Engine
	// TestRuns drives test runs; serve runs it beside the call queue.
	TestRuns *eval.Runner
	Log      *slog.Logger

	// door is HTTP: serve closes it at shutdown.
	door *door
}

// sqliteFile is the embedded database's file name inside the data dir.
const sqliteFile = "parley.db"

func sqlitePath(c Config) string { return filepath.Join(c.DataDir, sqliteFile) }

// openStore opens (and migrates) the database the configuration names.
func openStore(ctx context.Context, c Config) (store.Store, error) {
	if c.DatabaseURL != "" {
		s, err := postgres.Open(ctx, c.DatabaseURL)
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL: %w", err)
		}
		return s, nil
	}
	s, err := sqlite.Open(ctx, sqlitePath(c))
	if err != nil {
		return nil, fmt.Errorf("open SQLite in %s: %w", c.DataDir, err)
	}
	return s, nil
}

// secretBox builds the sealing box from --secret-key, or from the key file
// in the data dir (created on first use).
func secretBox(c Config) (*secret.Box, error) {
	var (
		key []byte
		err error
	)
	if c.SecretKey != "" {
		key, err = secret.ParseKey(c.SecretKey)
		if err != nil {
			return nil, fmt.Errorf("--secret-key: %w", err)
		}
	} else if key, err = secret.LoadOrCreateKeyFile(filepath.Join(c.DataDir, "secret.key")); err != nil {
		return nil, err
	}
	return secret.NewBox(key)
}

// Open wires an App from its configuration, for the commands that do not
// serve (keys, users): links name --public-url or --addr.
func Open(ctx context.Context, c Config, log *slog.Logger) (*App, error) {
	return open(ctx, c, log, publicURL(c))
}

// open wires an App whose links start with base. Every part is built
// whole by its constructor, in dependency order; the one cycle (the phone
// admits inbound calls through the queue that dials through the phone) is
// closed in one marked place.
func open(ctx context.Context, c Config, log *slog.Logger, base string) (*App, error) {
	box, err := secretBox(c)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, c)
	if err != nil {
		return nil, err
	}
	a, err := wire(ctx, c, log, base, st, box)
	if err != nil {
		st.Close()
		return nil, err
	}
	return a, nil
}

// wire builds the services over st and box.
func wire(ctx context.Context, c Config, log *slog.Logger, base string, st store.Store, box *secret.Box) (*App, error) {
	reg := newRegistry(st)
	// The writes the call plane and the background work cannot lose are
	// retried while the database is away (docs/operations.md, "Database outage").
	writes := &persist.Writer{Store: st, Logger: log, Metrics: persist.NewMetrics(reg)}
	hooks := webhook.New(webhook.Options{AllowPrivate: c.AllowPrivateWebhooks, Registerer: reg, Logger: log})
	orgs := &org.Service{Store: st, Box: box, DefaultConcurrencyLimit: c.MaxConcurrentCalls}
	llmClient := c.languageModel() // the one model client: conversations, texts, tests
	knowledge, err := newKnowledge(c, st, writes, log)
	if err != nil {
		return nil, err
	}
	messages := newMessages(c, st, box, llmClient, base, hooks, orgs, writes, reg, log)
	recordings, err := newRecordings(ctx, c, base, box, reg, log)
	if err != nil {
		return nil, err
	}
	// The engine runs calls' conversations (with --dialer sip) and the
	// text-only attempts of test runs (always).
	engine := newEngine(c, engineParts{Store: st, Orgs: orgs, Webhooks: hooks, LLM: llmClient, Knowledge: knowledge, Messages: messages, Writes: writes}, reg, log)
	var (
		ua    *sipua.UA
		phone *telephony.Phone
		d     = dialer(c)
	)
	if c.Dialer == "sip" {
		if err := loadRecognizer(ctx, engine.STT, log); err != nil { // a broken model refuses to start, not to hear the first caller
			return nil, err
		}
		if ua, phone, err = newPhone(c, st, box, orgs, recordings, hooks, engine, writes, log); err != nil {
			closeRecognizer(engine.STT)
			return nil, err
		}
		d = phone
	}
	var dispatcher *campaign.Dispatcher // built on the queue, woken by it
	queue := callqueue.New(callqueue.Options{
		Store: st, Dialer: d, Webhooks: hooks, Secret: orgs.WebhookSecret,
		Node: nodeID(c), ReclaimAllOnStart: c.DatabaseURL == "",
		LeaseTTL: c.CallLease, Drain: c.CallDrain, Writes: writes, Logger: log, Metrics: callqueue.NewMetrics(reg),
		LineFreed: func() { dispatcher.Wake() },
	})
	dispatcher = &campaign.Dispatcher{
		Store: st, Calls: queue, Webhooks: hooks, Secret: orgs.WebhookSecret,
		Node: nodeID(c), Hold: c.CallLease, Logger: log, Metrics: campaign.NewMetrics(reg),
	}
	var attempts eval.Calls // call-mode attempts need real calls over the loopback trunk
	if phone != nil {
		attempts = queue
	}
	runner := &eval.Runner{
		Store: st, Calls: attempts, Chats: engine, Judge: eval.Judge{LLM: llmClient, Model: c.LLMModel}, Webhooks: hooks, Secret: orgs.WebhookSecret,
		Node: nodeID(c), LeaseTTL: c.CallLease, ReclaimAll: c.DatabaseURL == "", Writes: writes, Logger: log,
	}
	parts := domain.Parts{
		Orgs: orgs, Messages: messages, KnowledgeBases: knowledge, Queue: queue, Recordings: recordings,
		TestSuites: &eval.Service{Store: st, Runner: runner, Generator: eval.Generator{LLM: llmClient, Model: c.LLMModel}},
		Campaigns:  &campaign.Service{Store: st, Wake: dispatcher.Wake},
	}
	var keeper *registration.Keeper
	if phone != nil {
		phone.Calls = queue // the cycle: see open
		parts.WebCalls = phone
		keeper = newKeeper(c, st, box, ua, writes, log)
		registerSIPMetrics(reg, ua, keeper)
		registerCapacity(reg, ua, queue, c.SIPMaxDialogs)
	}
	services := domain.Assemble(st, box, parts)
	server := api.New(api.Config{
		Services: services,
		Store:    st, OpenAPI: parley.OpenAPI, Logger: log, Registry: reg,
		RateLimit: c.RateLimit, RateBurst: c.RateBurst, AfterCommit: killAfterCommit(),
	})
	dashboard, err := web.New(web.Config{Services: services, Logger: log, PublicURL: c.PublicURL})
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	door := httpHandler(server, dashboard)
	return &App{
		Config: c, Store: st, Orgs: orgs, Accounts: services.Accounts, Knowledge: knowledge, Messages: messages,
		API: server, Web: dashboard, HTTP: door, door: door, Queue: queue, Webhooks: hooks,
		TestRuns: runner, Campaigns: dispatcher, UA: ua, Phone: phone, Registrations: keeper, Engine: engine, Log: log,
		Recordings: recordings,
	}, nil
}

// newPhone builds the SIP user agent and the phone over it, whose calls
// engine converses. The phone's Calls (the queue, built on the phone) is
// the caller's to set.
func newPhone(c Config, st store.Store, box *secret.Box, orgs *org.Service, recordings *recording.Store, hooks *webhook.Sender, engine *pipeline.Engine, writes *persist.Writer, log *slog.Logger) (*sipua.UA, *telephony.Phone, error) {
	lo, hi, err := c.rtpRange()
	if err != nil {
		return nil, nil, err
	}
	exempt, err := c.sipInviteExempt()
	if err != nil {
		return nil, nil, err
	}
	sc := sipua.Config{
		ListenAddr: c.SIPAddr, PublicHost: c.SIPPublicHost, RTPPortMin: lo, RTPPortMax: hi,
		MaxDialogs: c.SIPMaxDialogs, MediaTimeout: c.SIPMediaTimeout, UserAgent: "Parley/" + version(), Logger: log,
		TLSAddr: c.SIPTLSAddr, Codecs: c.sipCodecs(),
		Admission: sipua.Admission{Rate: c.SIPInviteRate, Burst: c.SIPInviteBurst, Exempt: telephony.LoopbackSigned(box), ExemptSources: exempt},
	}
	if c.SIPTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.SIPTLSCert, c.SIPTLSKey)
		if err != nil {
			return nil, nil, fmt.Errorf("--sip-tls-cert/--sip-tls-key: %w", err)
		}
		sc.TLSCert = &cert
	}
	web, err := newWebEndpoint(c, lo, hi, log)
	if err != nil {
		return nil, nil, err
	}
	ua, err := sipua.New(sc)
	if err != nil {
		return nil, nil, err
	}
	var trunk *telephony.Trunk
	if c.SIPTrunkHost != "" {
		trunk = &telephony.Trunk{
			Host: c.SIPTrunkHost, Port: c.SIPTrunkPort, Transport: c.SIPTrunkTransport,
			Username: c.SIPTrunkUsername, Password: c.SIPTrunkPassword,
		}
	}
	phone := &telephony.Phone{
		UA: ua, Store: st, Box: box, PreCalls: hooks, Secret: orgs.WebhookSecret, Recordings: recordings,
		DefaultTrunk: trunk, TrunkCPS: c.SIPTrunkCPS, RingTimeout: c.RingTimeout, Web: web, Conversation: engine,
		PostCallBudget: c.PostCallBudget, Writes: writes, Logger: log,
	}
	return ua, phone, nil
}

// publicURL is the base of the links this server hands out.
func publicURL(c Config) string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	return "http://" + c.Addr
}

// Close releases the store and the webhook connections.
func (a *App) Close() error {
	if a.Engine != nil {
		a.Engine.Wait() // traces of ended calls
		if err := closeRecognizer(a.Engine.STT); err != nil {
			a.Log.Warn("close the speech recognizer", "err", err)
		}
	}
	a.Knowledge.Close() // background indexing
	a.Messages.Close()  // inbound messages being forwarded and answered
	a.Webhooks.Close()
	return a.Store.Close()
}

// dialer is how calls are placed, per --dialer.
func dialer(c Config) call.Dialer {
	if c.Dialer == "simulate" {
		return simdial.Simulated{Ring: c.SimulateRing, Duration: c.SimulateDuration}
	}
	return simdial.None{}
}

// nodeID names this server among those sharing a database: --node-id, or
// the host name and listen address, which are stable across restarts and
// differ between servers on one host.
func nodeID(c Config) string {
	if c.NodeID != "" {
		return c.NodeID
	}
	host, err := os.Hostname()
	if err != nil {
		host = "parley"
	}
	return host + "/" + c.Addr
}

// killAfterCommit is the process tests' crash between a create request's
// commit and its answer: with PARLEY_TEST_KILL_AFTER_COMMIT=1 the server
// SIGKILLs itself there, as a power cut would, so a test can prove that a
// retry with the same Idempotency-Key returns the committed call.
func killAfterCommit() func() {
	if os.Getenv("PARLEY_TEST_KILL_AFTER_COMMIT") != "1" {
		return nil
	}
	return func() {
		p, err := os.FindProcess(os.Getpid())
		if err == nil {
			p.Kill()
		}
		select {} // the signal arrives; nothing more is answered
	}
}
