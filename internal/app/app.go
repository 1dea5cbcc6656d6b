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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

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
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/pipeline"
	embedopenai "github.com/parley-voice/parley/internal/provider/embed/openai"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/sqlite"
	"github.com/parley-voice/parley/internal/store/sqlstore"
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

// Open wires an App from its configuration.
func Open(ctx context.Context, c Config, log *slog.Logger) (*App, error) {
	box, err := secretBox(c)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, c)
	if err != nil {
		return nil, err
	}
	services := domain.New(st, box, c.MaxConcurrentCalls)
	services.KnowledgeBases.Logger = log
	services.Messages.HTTPClient = webhook.GuardedClient(c.AllowPrivateWebhooks, 30*time.Second)
	services.Messages.PublicURL = publicURL(c)
	services.Messages.LLM, services.Messages.Model = c.languageModel(), c.LLMModel
	if c.EmbeddingsBaseURL != "" {
		key := c.EmbeddingsAPIKey
		if key == "" {
			key = c.LLMAPIKey
		}
		emb, err := embedopenai.New(embedopenai.Config{BaseURL: c.EmbeddingsBaseURL, APIKey: key, Model: c.EmbeddingsModel})
		if err != nil {
			st.Close()
			return nil, err
		}
		services.KnowledgeBases.Embedder = emb
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if rt, ok := st.(interface{ RoundTrips() uint64 }); ok {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "parley_store_round_trips_total",
			Help: "Statements sent to the database, transaction control included (a network round trip each on PostgreSQL).",
		}, func() float64 { return float64(rt.RoundTrips()) }))
	}
	if ot, ok := st.(interface{ ObserveTransactions(sqlstore.TxObserver) }); ok {
		txTime := prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "parley_store_transaction_seconds",
			Help:    "Database transactions by kind (update: read-write, on SQLite one group commit; view: read-only), from BEGIN to COMMIT or ROLLBACK, waiting for a connection included.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1},
		}, []string{"kind"})
		reg.MustRegister(txTime)
		byKind := map[string]prometheus.Observer{"update": txTime.WithLabelValues("update"), "view": txTime.WithLabelValues("view")}
		ot.ObserveTransactions(func(kind string, d time.Duration) { byKind[kind].Observe(d.Seconds()) })
	}
	// The writes the call plane and the background work cannot lose are
	// retried while the database is away (docs/operations.md, "Database outage").
	writes := &persist.Writer{Store: st, Logger: log, Metrics: persist.NewMetrics(reg)}
	services.Messages.Writes, services.KnowledgeBases.Writes = writes, writes
	hooks := webhook.New(webhook.Options{AllowPrivate: c.AllowPrivateWebhooks, Registerer: reg, Logger: log})
	services.Messages.Webhooks, services.Messages.Secret, services.Messages.Logger = hooks, services.Orgs.WebhookSecret, log
	services.Messages.Metrics = sms.NewMetrics(reg)
	services.Recordings = &recording.Store{
		Dir: filepath.Join(c.DataDir, "recordings"), PublicURL: publicURL(c), Key: box.Derive("recording-links"),
	}
	var ua *sipua.UA
	var phone *telephony.Phone
	// The engine runs calls' conversations (with --dialer sip) and the
	// text-only attempts of test runs (always).
	engine := newEngine(c, st, services.Orgs, hooks, reg, log)
	engine.Knowledge = services.KnowledgeBases
	engine.Messages = services.Messages
	engine.LLM = services.Messages.LLM // the one model client, built above
	engine.Writes = writes
	d := dialer(c)
	if c.Dialer == "sip" {
		if err := loadRecognizer(ctx, engine.STT, log); err != nil { // a broken model refuses to start, not to hear the first caller
			st.Close()
			return nil, err
		}
		if ua, phone, err = newPhone(c, st, box, services, hooks, engine, log); err != nil {
			closeRecognizer(engine.STT)
			st.Close()
			return nil, err
		}
		phone.Writes = writes
		d = phone
	}
	var dispatcher *campaign.Dispatcher // built on the queue, woken by it
	services.Queue = callqueue.New(callqueue.Options{
		Store: st, Dialer: d, Webhooks: hooks, Secret: services.Orgs.WebhookSecret,
		Node: nodeID(c), ReclaimAllOnStart: c.DatabaseURL == "",
		LeaseTTL: c.CallLease, Drain: c.CallDrain, Writes: writes, Logger: log, Metrics: callqueue.NewMetrics(reg),
		LineFreed: func() { dispatcher.Wake() },
	})
	dispatcher = &campaign.Dispatcher{
		Store: st, Calls: services.Queue, Webhooks: hooks, Secret: services.Orgs.WebhookSecret,
		Node: nodeID(c), Hold: c.CallLease, Logger: log, Metrics: campaign.NewMetrics(reg),
	}
	services.Campaigns.Wake = dispatcher.Wake
	runner := services.TestSuites.Runner
	runner.Chats, runner.Webhooks, runner.Secret = engine, hooks, services.Orgs.WebhookSecret
	runner.Judge = eval.Judge{LLM: engine.LLM, Model: c.LLMModel}
	services.TestSuites.Generator = eval.Generator{LLM: engine.LLM, Model: c.LLMModel}
	runner.Node, runner.LeaseTTL, runner.ReclaimAll, runner.Logger = nodeID(c), c.CallLease, c.DatabaseURL == "", log
	runner.Writes = writes
	var keeper *registration.Keeper
	if phone != nil {
		keeper = registration.New(registration.Options{
			Store: st, Box: box, Node: nodeID(c), LeaseTTL: c.CallLease, ClaimAll: c.DatabaseURL == "",
			Bind:       func(rc sipua.RegistrationConfig) (registration.Binding, error) { return ua.NewRegistration(rc) },
			MaxBackoff: c.SIPRegisterMaxBackoff, RequestTimeout: c.SIPRegisterTimeout, Writes: writes, Logger: log,
		})
		for _, state := range []string{model.RegistrationRegistering, model.RegistrationRegistered, model.RegistrationFailed} {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "parley_sip_registrations", ConstLabels: prometheus.Labels{"state": state},
				Help: "Trunk registrations this server keeps, by state.",
			}, func() float64 { return float64(keeper.States()[state]) }))
		}
		runner.Calls = services.Queue // call-mode attempts need real calls over the loopback trunk
		phone.Calls = services.Queue
		services.WebCalls = phone
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "parley_sip_legs", Help: "SIP call legs up or being set up on this server.",
		}, func() float64 { return float64(ua.Active()) }))
		for _, result := range []string{"admitted", "refused"} {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "parley_sip_admission_total", ConstLabels: prometheus.Labels{"result": result},
				Help: "SIP requests that start something (INVITE outside a dialog, REGISTER, OPTIONS) admitted or refused 503 by the per-source limit (--sip-invite-rate).",
			}, func() float64 {
				admitted, refused := ua.AdmissionCounts()
				if result == "refused" {
					return float64(refused)
				}
				return float64(admitted)
			}))
		}
		for _, result := range []string{"hung_up", "failed", "ignored"} {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "parley_sip_stray_answers_total", ConstLabels: prometheus.Labels{"result": result},
				Help: "2xx answers to INVITEs no call of this server waits for (sent before a restart): hung up (ACK, then BYE answered), failed (the BYE was not answered) or ignored (a live leg's, not addressed to this server, or too many at once).",
			}, func() float64 {
				hungUp, failed, ignored := ua.StrayAnswers()
				return float64(map[string]uint64{"hung_up": hungUp, "failed": failed, "ignored": ignored}[result])
			}))
		}
	}
	server := api.New(api.Config{
		Services: services,
		Store:    st, OpenAPI: parley.OpenAPI, Logger: log, Registry: reg,
		RateLimit: c.RateLimit, RateBurst: c.RateBurst, AfterCommit: killAfterCommit(),
	})
	dashboard, err := web.New(web.Config{Services: services, Logger: log, PublicURL: c.PublicURL})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	door := httpHandler(server, dashboard)
	return &App{Config: c, Store: st, Orgs: services.Orgs, Accounts: services.Accounts, Knowledge: services.KnowledgeBases, Messages: services.Messages, API: server, Queue: services.Queue, Webhooks: hooks,
		Web: dashboard, HTTP: door, door: door,
		TestRuns: runner, Campaigns: dispatcher, UA: ua, Phone: phone, Registrations: keeper, Engine: engine, Log: log}, nil
}

// newPhone builds the SIP user agent and the phone over it, whose calls
// engine converses.
func newPhone(c Config, st store.Store, box *secret.Box, services domain.Services, hooks *webhook.Sender, engine *pipeline.Engine, log *slog.Logger) (*sipua.UA, *telephony.Phone, error) {
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
	phone := &telephony.Phone{
		UA: ua, Store: st, Box: box, PreCalls: hooks, Secret: services.Orgs.WebhookSecret,
		Recordings: services.Recordings, RingTimeout: c.RingTimeout, PostCallBudget: c.PostCallBudget, Logger: log,
	}
	phone.Conversation = engine
	phone.Web = web
	if c.SIPTrunkHost != "" {
		phone.DefaultTrunk = &telephony.Trunk{
			Host: c.SIPTrunkHost, Port: c.SIPTrunkPort, Transport: c.SIPTrunkTransport,
			Username: c.SIPTrunkUsername, Password: c.SIPTrunkPassword,
		}
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
