package app

import (
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/provider/stt/sphinx"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
)

// noModel is what the startup line says when no LLM is configured.
const noModel = "none: calls and generated texts that need the model fail; set --llm-base-url"

// logConfiguration writes, in one line, what this server runs with: where
// it keeps data and listens, and which model and speech engines its calls
// use. Secrets appear only as set or unset; URLs lose their credentials
// and query. Missing offline speech engines get a warning of their own.
func logConfiguration(log *slog.Logger, c Config, a *App, httpAddr string) {
	attrs := []any{
		slog.Group("database", databaseAttrs(c)...),
		"data_dir", c.DataDir,
		"http", httpAddr,
		"public_url", publicURLOf(c, httpAddr),
		"dashboard", dashboardURL(c, httpAddr),
		"secret_key", secretKeySource(c),
		"recordings", recordingsWhere(c),
		"dialer", c.Dialer,
	}
	if a.UA != nil {
		sip := []any{"listen", a.UA.Addr(), "public_host", a.UA.PublicHost(), "rtp_ports", c.RTPPorts, "trunk_cps", trunkCPS(c)}
		if c.SIPInviteExempt != "" {
			sip = append(sip, "invite_exempt", c.SIPInviteExempt)
		}
		if a.UA.TLS() {
			sip = append(sip, "tls", a.UA.TLSAddr())
		}
		if c.SIPTrunkHost != "" {
			sip = append(sip, "default_trunk", c.SIPTrunkHost+":"+strconv.Itoa(c.SIPTrunkPort)+"/"+c.SIPTrunkTransport,
				"default_trunk_password", setOrUnset(c.SIPTrunkPassword))
		}
		attrs = append(attrs, slog.Group("sip", sip...))
	}
	if c.LLMBaseURL == "" {
		attrs = append(attrs, "llm", noModel)
	} else {
		attrs = append(attrs, slog.Group("llm", "base_url", redactURL(c.LLMBaseURL), "model", c.LLMModel, "api_key", setOrUnset(c.LLMAPIKey)))
	}
	attrs = append(attrs, slog.Group("stt", sttAttrs(c)...), slog.Group("tts", ttsAttrs(c)...))
	if c.EmbeddingsBaseURL == "" {
		attrs = append(attrs, "embeddings", "none: knowledge bases use full-text retrieval")
	} else {
		key := c.EmbeddingsAPIKey
		if key == "" {
			key = c.LLMAPIKey
		}
		attrs = append(attrs, slog.Group("embeddings", "base_url", redactURL(c.EmbeddingsBaseURL), "model", c.EmbeddingsModel, "api_key", setOrUnset(key)))
	}
	otel := "off"
	if c.OTelEndpoint != "" {
		otel = redactURL(c.OTelEndpoint)
	}
	attrs = append(attrs, "otel", otel)
	log.Info("configuration", attrs...)

	if a.UA == nil {
		return // no calls here: speech is never used
	}
	if c.STT == "" || c.STT == "local" {
		if err := sphinx.Available(); err != nil {
			log.Warn("local speech to text is unavailable: calls cannot hear the caller", "err", err)
		}
	}
	if c.TTS == "" || c.TTS == "local" {
		if err := espeak.Available(); err != nil {
			log.Warn("local text to speech is unavailable: agents cannot speak", "err", err)
		}
	}
}

func databaseAttrs(c Config) []any {
	if c.DatabaseURL == "" {
		return []any{"engine", "sqlite", "file", sqlitePath(c)}
	}
	return []any{"engine", "postgres", "url", redactURL(c.DatabaseURL)}
}

// trunkCPS is --sip-trunk-cps as the start-up line says it.
func trunkCPS(c Config) string {
	if c.SIPTrunkCPS == 0 {
		return "unlimited unless a trunk sets callsPerSecond"
	}
	return strconv.FormatFloat(c.SIPTrunkCPS, 'f', -1, 64) + " a trunk unless it sets callsPerSecond"
}

// recordingsWhere is where recordings are kept: the object store (its URL
// names no secret) or the data dir.
func recordingsWhere(c Config) string {
	if c.RecordingsURL != "" {
		return redactURL(c.RecordingsURL)
	}
	return filepath.Join(c.DataDir, "recordings")
}

func publicURLOf(c Config, httpAddr string) string {
	if c.PublicURL != "" {
		return redactURL(c.PublicURL)
	}
	return "http://" + httpAddr
}

// dashboardURL is where a browser opens the dashboard: under --public-url,
// else at the bound HTTP address, a wildcard host (0.0.0.0, ::) as
// localhost, which reaches it from this machine.
func dashboardURL(c Config, httpAddr string) string {
	if c.PublicURL != "" {
		return strings.TrimSuffix(redactURL(c.PublicURL), "/") + "/"
	}
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return "http://" + httpAddr + "/"
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

func secretKeySource(c Config) string {
	if c.SecretKey != "" {
		return "set (--secret-key)"
	}
	return "file in the data dir"
}

func sttAttrs(c Config) []any {
	s := c.Speech
	switch c.STT {
	case "deepgram":
		return []any{"engine", "deepgram", "base_url", redactURL(s.DeepgramBaseURL), "model", s.DeepgramModel, "api_key", setOrUnset(s.DeepgramAPIKey)}
	case "openai":
		return c.openAISTTAttrs()
	case "sherpa":
		return []any{"engine", "sherpa", "model_dir", s.Sherpa.ModelDir, "threads", s.Sherpa.Threads, "language", s.Sherpa.Language}
	}
	return []any{"engine", "local", "model", "pocketsphinx " + sphinx.DefaultModelDir, "decoders", s.Sphinx.Decoders, "mllr", orNone(s.Sphinx.MLLR), "phone_mllr", s.Sphinx.PhoneMLLR, "generic_weight", s.Sphinx.GenericWeight,
		"library", sphinx.DecoderLibrary}
}

func ttsAttrs(c Config) []any {
	s := c.Speech
	switch c.TTS {
	case "openai":
		return c.openAITTSAttrs()
	case "elevenlabs":
		return []any{"engine", "elevenlabs", "base_url", redactURL(s.ElevenLabsBaseURL), "model", s.ElevenLabsModel, "voice", s.ElevenVoice,
			"api_key", setOrUnset(s.ElevenLabsAPIKey)}
	}
	return []any{"engine", "local", "model", "espeak-ng", "voice", "by the agent's language"}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func setOrUnset(secret string) string {
	if secret == "" {
		return "unset"
	}
	return "set"
}

// redactURL keeps a URL's scheme, host and path: user info (a database
// password, or a key put where a user name goes) and the query (tokens)
// may be secret.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
