package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/media/sipua"
)

// Config is everything an operator can set. Every flag has an environment
// twin: --data-dir is PARLEY_DATA_DIR. A flag on the command line wins over
// the environment, which wins over the default.
type Config struct {
	DataDir            string
	DatabaseURL        string
	Addr               string
	MaxConcurrentCalls int
	SecretKey          string
	RateLimit          float64
	RateBurst          int
	LogLevel           string
	LogFormat          string
	ShutdownTimeout    time.Duration

	Dialer               string
	SimulateRing         time.Duration
	SimulateDuration     time.Duration
	NodeID               string
	CallLease            time.Duration
	CallDrain            time.Duration
	PostCallBudget       time.Duration
	AllowPrivateWebhooks bool

	SIPAddr         string
	SIPPublicHost   string
	RTPPorts        string
	PublicURL       string
	RingTimeout     time.Duration
	SIPMaxDialogs   int
	SIPInviteRate   float64
	SIPInviteBurst  int
	SIPInviteExempt string
	SIPMediaTimeout time.Duration
	// SIPRegisterTimeout bounds one REGISTER; SIPRegisterMaxBackoff caps
	// the wait between failed attempts (trunk registration).
	SIPRegisterTimeout    time.Duration
	SIPRegisterMaxBackoff time.Duration
	SIPCodecs             string
	SIPTrunkHost          string
	SIPTrunkPort          int
	SIPTrunkTransport     string
	SIPTrunkUsername      string
	SIPTrunkPassword      string
	SIPTrunkCPS           float64
	LLMBaseURL            string
	LLMAPIKey             string
	LLMModel              string
	STT                   string
	TTS                   string
	Speech                SpeechConfig
	OTelEndpoint          string
	EmbeddingsBaseURL     string
	EmbeddingsAPIKey      string
	EmbeddingsModel       string
	SIPTLSAddr            string
	SIPTLSCert            string
	SIPTLSKey             string
	RecordingsURL         string
}

// flagArea is a heading of a command's --help and the flags under it:
// names, or prefixes ending in "*".
type flagArea struct {
	title string
	flags []string
}

// flagAreas orders `parley COMMAND --help`. A flag is listed under the area
// naming it exactly, else under the area with its longest matching prefix
// ("sip-invite-*" beats "sip-*"). To add a flag: declare it (serveFlags or
// the flags function of its part); if no name or prefix here matches it,
// add its name to one area. TestEveryServeFlagHasAnArea fails until it
// has one. Flags of one command only (--org, --email) head its help.
var flagAreas = []flagArea{
	{"Data and database", []string{"data-dir", "database-url", "secret-key", "recordings-*", "retention-*"}},
	{"HTTP", []string{"addr", "public-url", "shutdown-timeout", "allow-private-webhooks"}},
	{"Calls", []string{"dialer", "simulate-*", "node-id", "call-*", "ring-timeout", "post-call-budget"}},
	{"SIP and RTP", []string{"sip-*", "rtp-*"}},
	{"Speech", []string{"stt", "tts", "stt-*", "tts-*", "deepgram-*", "openai-*", "elevenlabs-*", "sherpa-*", "sphinx-*"}},
	{"LLM and knowledge bases", []string{"llm-*", "embeddings-*"}},
	{"Limits", []string{"max-concurrent-calls", "rate-*", "sip-max-dialogs", "sip-invite-*", "sip-trunk-cps"}},
	{"Observability", []string{"log-*", "otel-*"}},
}

// storeFlags are the flags of every command that opens the database.
func storeFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.DataDir, "data-dir", "./parley-data", "directory for the embedded SQLite database, the secret key file and recordings")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "postgres://... to use PostgreSQL instead of the embedded SQLite database")
	fs.StringVar(&c.SecretKey, "secret-key", "", "32-byte key (hex or base64) sealing stored credentials; generated into the data dir when unset")
	fs.IntVar(&c.MaxConcurrentCalls, "max-concurrent-calls", 10, "concurrencyLimit of a newly created organization")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", logAuto, "auto (text on a terminal, else JSON), text or json")
}

// serveFlags are the flags of `parley serve`. Each has an env twin
// (EnvName) and a heading in its --help (flagAreas, above).
func serveFlags(fs *flag.FlagSet, c *Config) {
	storeFlags(fs, c)
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "HTTP listen address")
	fs.Float64Var(&c.RateLimit, "rate-limit", 50, "requests per second allowed per API key on average (0: unlimited)")
	fs.IntVar(&c.RateBurst, "rate-burst", 100, "requests an API key may make at once before the rate limit applies")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish on SIGTERM")
	fs.StringVar(&c.Dialer, "dialer", "sip", "how calls are placed: sip (SIP and RTP through the agent's trunk), simulate (no carrier: calls ring, answer, last until canceled) or none (calls fail)")
	fs.DurationVar(&c.SimulateRing, "simulate-ring", time.Second, "with --dialer simulate: how long a call rings before it is answered")
	fs.DurationVar(&c.SimulateDuration, "simulate-duration", 0, "with --dialer simulate: how long an answered call lasts (0: until canceled)")
	fs.StringVar(&c.NodeID, "node-id", "", "this server's name among servers sharing a database; it owns the leases of its calls (default: host name and --addr)")
	fs.DurationVar(&c.CallLease, "call-lease", 30*time.Second, "how long a live call's lease lasts without renewal; a server silent that long loses its calls")
	fs.DurationVar(&c.CallDrain, "call-drain", 30*time.Second, "on SIGTERM, how long live calls may go on before they are hung up")
	fs.DurationVar(&c.PostCallBudget, "post-call-budget", 10*time.Second, "once a call is over, how long its end waits for the conversation's summary and metrics (the post-call webhook carries them)")
	fs.BoolVar(&c.AllowPrivateWebhooks, "allow-private-webhooks", false, "let webhooks and tools call loopback, private and link-local addresses (local testing only)")
	fs.StringVar(&c.SIPAddr, "sip-addr", "0.0.0.0:5060", "SIP listen address, UDP and TCP (port 0: any free port)")
	fs.StringVar(&c.SIPPublicHost, "sip-public-host", "", "host put in Contact headers and SDP (default: the listen host, or this machine's first IPv4 address)")
	fs.StringVar(&c.RTPPorts, "rtp-ports", "10000-20000", "RTP port range, two ports per call leg")
	recordingsFlags(fs, c)
	fs.StringVar(&c.PublicURL, "public-url", "", "base URL of this server as callers of its links see it, for recordingUrl (default: http://--addr)")
	fs.DurationVar(&c.RingTimeout, "ring-timeout", 60*time.Second, "how long an outbound call may ring before it ends FAILED NO_ANSWER")
	fs.IntVar(&c.SIPMaxDialogs, "sip-max-dialogs", 1000, "most SIP call legs at once; more INVITEs get 503")
	fs.Float64Var(&c.SIPInviteRate, "sip-invite-rate", 20, "INVITEs (and REGISTER, OPTIONS) per second one source address may send on average; over it: 503 with Retry-After (0: no limit)")
	fs.IntVar(&c.SIPInviteBurst, "sip-invite-burst", 100, "how many INVITEs one source address may send at once (--sip-invite-rate's bucket)")
	fs.StringVar(&c.SIPInviteExempt, "sip-invite-exempt", "", "source addresses or CIDRs, comma-separated, that --sip-invite-rate does not limit: the carrier's SBC, a proxy in front, a load generator")
	fs.DurationVar(&c.SIPMediaTimeout, "sip-media-timeout", 60*time.Second, "end a call that received no RTP for this long (0: never)")
	fs.DurationVar(&c.SIPRegisterTimeout, "sip-register-timeout", 10*time.Second, "how long a trunk's REGISTER waits for the registrar's answer before the attempt fails")
	fs.DurationVar(&c.SIPRegisterMaxBackoff, "sip-register-max-backoff", 5*time.Minute, "the longest wait between failed registration attempts (the wait doubles from 1 s)")
	fs.StringVar(&c.SIPCodecs, "sip-codecs", strings.Join(sipua.DefaultCodecs, ","), "audio codecs offered and accepted, in preference order: G722 (16 kHz wideband), PCMU, PCMA (G.711, 8 kHz)")
	fs.StringVar(&c.LLMBaseURL, "llm-base-url", "", "OpenAI-compatible chat-completions API, e.g. http://127.0.0.1:11434/v1 (unset: calls that need the model end FAILED naming this flag)")
	fs.StringVar(&c.LLMAPIKey, "llm-api-key", "", "key for --llm-base-url")
	fs.StringVar(&c.LLMModel, "llm-model", "gpt-4o-mini", "model for --llm-base-url")
	fs.StringVar(&c.STT, "stt", "local", "speech to text: local (pocketsphinx, offline), deepgram, openai or sherpa (sherpa-onnx, offline, with --sherpa-model-dir)")
	fs.StringVar(&c.TTS, "tts", "local", "text to speech: local (espeak-ng, offline), openai or elevenlabs")
	speechFlags(fs, &c.Speech)
	fs.StringVar(&c.EmbeddingsBaseURL, "embeddings-base-url", "", "OpenAI-compatible embeddings API for hybrid knowledge-base retrieval, e.g. https://api.openai.com/v1 (unset: full-text retrieval only)")
	fs.StringVar(&c.EmbeddingsAPIKey, "embeddings-api-key", "", "key for --embeddings-base-url (unset: --llm-api-key)")
	fs.StringVar(&c.EmbeddingsModel, "embeddings-model", "text-embedding-3-small", "model for --embeddings-base-url")
	fs.StringVar(&c.OTelEndpoint, "otel-endpoint", "", "OTLP/HTTP collector for one OpenTelemetry trace per call, e.g. http://127.0.0.1:4318 (unset: no traces)")
	fs.StringVar(&c.SIPTLSAddr, "sip-tls-addr", "", "SIP over TLS listen address, e.g. 0.0.0.0:5061 (unset: no TLS in or out)")
	fs.StringVar(&c.SIPTLSCert, "sip-tls-cert", "", "PEM certificate (chain) for SIP over TLS (unset: self-signed, enough for calling out)")
	fs.StringVar(&c.SIPTLSKey, "sip-tls-key", "", "PEM private key of --sip-tls-cert")
	fs.StringVar(&c.SIPTrunkHost, "sip-trunk-host", "", "default trunk for agents without one: host of the carrier or PBX (unset: such agents cannot call out)")
	fs.IntVar(&c.SIPTrunkPort, "sip-trunk-port", 5060, "default trunk: port")
	fs.StringVar(&c.SIPTrunkTransport, "sip-trunk-transport", "udp", "default trunk: udp, tcp or tls")
	fs.StringVar(&c.SIPTrunkUsername, "sip-trunk-username", "", "default trunk: digest username")
	fs.StringVar(&c.SIPTrunkPassword, "sip-trunk-password", "", "default trunk: digest password")
	fs.Float64Var(&c.SIPTrunkCPS, "sip-trunk-cps", 0, "outbound calls per second each trunk may start, shared by every server on the database (carriers enforce one; more wait their turn); 0: unlimited")
}

// rtpRange parses --rtp-ports ("10000-20000").
func (c *Config) rtpRange() (lo, hi int, err error) {
	if _, err := fmt.Sscanf(c.RTPPorts, "%d-%d", &lo, &hi); err != nil || lo < 1024 || hi > 65535 || hi-lo < 2 {
		return 0, 0, errors.New("--rtp-ports must be a range such as 10000-20000 within 1024-65535")
	}
	return lo, hi, nil
}

// EnvName is the environment twin of a flag: data-dir → PARLEY_DATA_DIR.
func EnvName(flagName string) string {
	return "PARLEY_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse reads args into fs, then fills every flag not given on the command
// line from its environment twin.
// The flag package's own messages are held back: --help prints the flag
// set's Usage (the grouped help) and returns flag.ErrHelp; any other error
// is returned for the caller to report (parseCommand: in two lines).
func parse(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	help, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = help
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) && help != nil {
		help()
	}
	if err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		if v := getenv(EnvName(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", EnvName(f.Name), v, err))
			}
		}
	})
	return errors.Join(errs...)
}

func (c *Config) check() error {
	var errs []error
	if c.MaxConcurrentCalls < 1 {
		errs = append(errs, errors.New("--max-concurrent-calls must be at least 1"))
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		errs = append(errs, errors.New("--database-url must be a postgres:// URL"))
	}
	if err := checkRecordingsURL(c.RecordingsURL); err != nil {
		errs = append(errs, err)
	}
	if c.RateLimit < 0 {
		errs = append(errs, errors.New("--rate-limit must not be negative"))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, errors.New("--log-level must be debug, info, warn or error"))
	}
	if c.Dialer != "" && c.Dialer != "none" && c.Dialer != "simulate" && c.Dialer != "sip" {
		errs = append(errs, errors.New("--dialer must be sip, simulate or none"))
	}
	if c.Dialer == "sip" {
		if _, _, err := c.rtpRange(); err != nil {
			errs = append(errs, err)
		}
		switch {
		case c.SIPTrunkTransport != "udp" && c.SIPTrunkTransport != "tcp" && c.SIPTrunkTransport != "tls":
			errs = append(errs, errors.New("--sip-trunk-transport must be udp, tcp or tls"))
		case c.SIPTrunkTransport == "tls" && c.SIPTrunkHost != "" && c.SIPTLSAddr == "":
			errs = append(errs, errors.New("--sip-trunk-transport tls needs --sip-tls-addr"))
		}
		if (c.SIPTLSCert == "") != (c.SIPTLSKey == "") {
			errs = append(errs, errors.New("--sip-tls-cert and --sip-tls-key go together"))
		}
		if c.SIPInviteRate < 0 || c.SIPInviteBurst < 0 {
			errs = append(errs, errors.New("--sip-invite-rate and --sip-invite-burst must not be negative"))
		}
		if _, err := c.sipInviteExempt(); err != nil {
			errs = append(errs, err)
		}
		if c.SIPTrunkCPS < 0 {
			errs = append(errs, errors.New("--sip-trunk-cps must not be negative"))
		}
		if c.SIPMaxDialogs < 1 {
			errs = append(errs, errors.New("--sip-max-dialogs must be at least 1"))
		}
		if err := sipua.CheckCodecs(c.sipCodecs()); err != nil {
			errs = append(errs, fmt.Errorf("--sip-codecs: %w", err))
		}
	}
	errs = append(errs, c.Speech.check(c.STT, c.TTS)...)
	errs = append(errs, c.checkAudioAPI()...)
	if c.EmbeddingsBaseURL != "" && !strings.HasPrefix(c.EmbeddingsBaseURL, "http://") && !strings.HasPrefix(c.EmbeddingsBaseURL, "https://") {
		errs = append(errs, errors.New("--embeddings-base-url must be an http(s) URL"))
	}
	if c.OTelEndpoint != "" && !strings.HasPrefix(c.OTelEndpoint, "http://") && !strings.HasPrefix(c.OTelEndpoint, "https://") {
		errs = append(errs, errors.New("--otel-endpoint must be an http(s) URL"))
	}
	if c.LLMBaseURL != "" && !strings.HasPrefix(c.LLMBaseURL, "http://") && !strings.HasPrefix(c.LLMBaseURL, "https://") {
		errs = append(errs, errors.New("--llm-base-url must be an http(s) URL"))
	}
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		errs = append(errs, errors.New("--public-url must be an http(s) URL"))
	}
	if c.CallLease != 0 && c.CallLease < 3*time.Millisecond {
		errs = append(errs, errors.New("--call-lease is too short"))
	}
	if c.PostCallBudget < 0 {
		errs = append(errs, errors.New("--post-call-budget must not be negative"))
	}
	switch c.LogFormat {
	case logAuto, logText, logJSON:
	default:
		errs = append(errs, errors.New("--log-format must be auto, text or json"))
	}
	return errors.Join(errs...)
}

// newFlagSet makes a command's flag set: its errors go to stderr, and so
// does its --help (newCommandFlags sends the help elsewhere).
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	return newCommandFlags(name, stderr, stderr)
}

// newCommandFlags makes a command's flag set whose --help, grouped by area
// (flagAreas), goes to stdout and whose errors go to stderr.
func newCommandFlags(name string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { writeHelp(stdout, fs) }
	return fs
}

// sipInviteExempt is --sip-invite-exempt as prefixes: a bare address is
// that address alone.
func (c Config) sipInviteExempt() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(c.SIPInviteExempt, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("--sip-invite-exempt: %q is neither an address nor a CIDR", f)
		}
		a = a.Unmap() // requests' sources are compared unmapped
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// sipCodecs is --sip-codecs as a list.
func (c Config) sipCodecs() []string {
	var out []string
	for _, n := range strings.Split(c.SIPCodecs, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
