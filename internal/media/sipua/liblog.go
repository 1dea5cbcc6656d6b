package sipua

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	dmedia "github.com/emiago/diago/media"
	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// The SIP libraries (sipgo, diago) log through slog: through the loggers a
// UA hands them, and through package defaults (sip.DefaultLogger,
// media.DefaultLogger) for the rest. libraryLog routes all of it into
// Parley's handler with component=sip, lowers what peers can cause (a stray
// or malformed datagram is the sender's problem, not an ERROR of ours) and
// limits repeats, so a flood of junk at the SIP port costs a few lines a
// minute instead of one line per datagram.

const (
	// libLogBurst records of one message pass per libLogWindow; the rest
	// are counted and reported in one line when the window ends.
	libLogBurst  = 10
	libLogWindow = time.Minute
	// libLogMaxValue bounds a string attribute: sipgo logs a datagram it
	// cannot parse whole.
	libLogMaxValue = 200
	// libLogMaxKeys bounds the messages tracked at once; library messages
	// are constant strings, so this is only a guard.
	libLogMaxKeys = 256
)

// libLevels sets the level of the library messages a peer can cause:
// what it sent is its problem (a warning at most), not an error of ours.
// The libraries log at Info what an operator sees as routine (a transport
// listening, a transaction removed), so their other Info records become
// Debug.
var libLevels = map[string]slog.Level{
	"failed to parse":                                    slog.LevelWarn,
	"Server tx failed to handle request":                 slog.LevelWarn,
	"Client tx failed to handle response":                slog.LevelWarn,
	"Failed to send stateless 400 for malformed request": slog.LevelWarn,
	"send '100 Trying' response failed":                  slog.LevelWarn,
	"RTCP Unmarshal error. Continue listen":              slog.LevelWarn,
	"Payload is huge, it will be unread":                 slog.LevelWarn,
	"SIP request handler not found":                      slog.LevelInfo,
	"Failed to handle request":                           slog.LevelInfo,
}

func libLevel(msg string, l slog.Level) slog.Level {
	if to, ok := libLevels[msg]; ok {
		return to
	}
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}

// libHandler is the slog.Handler the libraries log through.
type libHandler struct {
	next   slog.Handler
	limit  *limiter
	caller string // the libraries stack "caller" attributes; the last one says most
}

// newLibHandler wraps next (Parley's handler) for the SIP libraries.
func newLibHandler(next slog.Handler) *libHandler {
	h := &libHandler{next: next.WithAttrs([]slog.Attr{slog.String("component", "sip")})}
	h.limit = &limiter{burst: libLogBurst, window: libLogWindow, now: time.Now, afterFunc: afterFunc, keys: map[string]*limitKey{}}
	return h
}

func afterFunc(d time.Duration, f func()) { time.AfterFunc(d, f) }

// Enabled answers for the lowest level a record at l may come out at:
// Info becomes Debug, and libLevels lowers nothing below Info.
func (h *libHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if l <= slog.LevelInfo {
		return h.next.Enabled(ctx, min(l, slog.LevelDebug))
	}
	return h.next.Enabled(ctx, slog.LevelInfo)
}

func (h *libHandler) Handle(ctx context.Context, r slog.Record) error {
	level := libLevel(r.Message, r.Level)
	if !h.next.Enabled(ctx, level) {
		return nil
	}
	// Debug is not limited: whoever turns it on is tracing transactions.
	if level > slog.LevelDebug && !h.limit.allow(r.Message, level, h.next) {
		return nil
	}
	out := slog.NewRecord(r.Time, level, r.Message, r.PC)
	hasCaller := false
	r.Attrs(func(a slog.Attr) bool {
		hasCaller = hasCaller || a.Key == "caller"
		out.AddAttrs(shorten(a))
		return true
	})
	if h.caller != "" && !hasCaller {
		out.AddAttrs(slog.String("caller", h.caller))
	}
	return h.next.Handle(ctx, out)
}

func (h *libHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	var rest []slog.Attr
	for _, a := range attrs {
		if a.Key == "caller" {
			c.caller = a.Value.String()
			continue
		}
		rest = append(rest, shorten(a))
	}
	if len(rest) > 0 {
		c.next = h.next.WithAttrs(rest)
	}
	return &c
}

func (h *libHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	return &c
}

// shorten cuts a long string attribute (a whole datagram) to its start.
func shorten(a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindString {
		if s := a.Value.String(); len(s) > libLogMaxValue {
			return slog.String(a.Key, fmt.Sprintf("%s… (%d bytes)", s[:libLogMaxValue], len(s)))
		}
	}
	return a
}

// limiter lets burst records of each message through per window and
// reports how many it held back when the window ends.
type limiter struct {
	burst     int
	window    time.Duration
	now       func() time.Time
	afterFunc func(time.Duration, func())

	mu   sync.Mutex
	keys map[string]*limitKey
}

type limitKey struct {
	start      time.Time // of the current window
	passed     int
	suppressed int
	level      slog.Level
	next       slog.Handler // where the report goes
	reporting  bool         // a report is scheduled for this window
}

// allow reports whether a record of msg may pass now.
func (l *limiter) allow(msg string, level slog.Level, next slog.Handler) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	k := l.keys[msg]
	if k == nil {
		if len(l.keys) >= libLogMaxKeys {
			l.sweep(now)
		}
		k = &limitKey{start: now}
		l.keys[msg] = k
	}
	if now.Sub(k.start) >= l.window {
		if k.suppressed > 0 {
			l.report(msg, k)
		}
		k.start, k.passed = now, 0
	}
	if k.passed < l.burst {
		k.passed++
		return true
	}
	if k.suppressed == 0 || level > k.level {
		k.level = level
	}
	k.suppressed++
	k.next = next
	if !k.reporting {
		k.reporting = true
		l.afterFunc(k.start.Add(l.window).Sub(now), func() { l.flush(msg, k) })
	}
	return false
}

// flush reports what was held back once the window is over, so a flood
// that stopped is still counted.
func (l *limiter) flush(msg string, k *limitKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k.reporting = false
	if k.suppressed > 0 {
		l.report(msg, k)
	}
}

// report writes the held-back count; l.mu is held.
func (l *limiter) report(msg string, k *limitKey) {
	r := slog.NewRecord(l.now(), k.level, "suppressed similar messages", 0)
	r.AddAttrs(slog.String("message", msg), slog.Int("suppressed", k.suppressed), slog.String("window", l.window.String()))
	_ = k.next.Handle(context.Background(), r)
	k.suppressed = 0
}

// sweep forgets messages whose window is over with nothing held back.
func (l *limiter) sweep(now time.Time) {
	for m, k := range l.keys {
		if k.suppressed == 0 && now.Sub(k.start) >= l.window {
			delete(l.keys, m)
		}
	}
}

// libraryLog is the logger of one UA's SIP libraries.
type libraryLog struct{ *slog.Logger }

func newLibraryLog(parley *slog.Logger) libraryLog {
	h := newLibHandler(parley.Handler())
	defaultLibHandler.Store(&h)
	return libraryLog{slog.New(h)}
}

// uaOptions give sipgo's transport and transaction layers the logger, and
// the transaction layer tx too (sipgo keeps one list of those).
func (l libraryLog) uaOptions(tx ...sip.TransactionLayerOption) []sipgo.UserAgentOption {
	return []sipgo.UserAgentOption{
		sipgo.WithUserAgentTransportLayerOptions(sip.WithTransportLayerLogger(l.Logger)),
		sipgo.WithUserAgentTransactionLayerOptions(append([]sip.TransactionLayerOption{sip.WithTransactionLayerLogger(l.Logger)}, tx...)...),
	}
}

// defaultLibHandler is where the libraries' package-level loggers write:
// the newest UA's handler (a server has one). The package defaults are
// plain variables the libraries read unguarded, so they are set once,
// before any goroutine can read them, and point here.
var defaultLibHandler atomic.Pointer[*libHandler]

func init() {
	l := slog.New(defaultHandler{})
	sip.SetDefaultLogger(l)
	dmedia.SetDefaultLogger(l)
}

// defaultHandler forwards to defaultLibHandler, or to slog's default
// before any UA exists, applying the attributes and groups it was given.
type defaultHandler struct {
	with []func(slog.Handler) slog.Handler
}

func (d defaultHandler) base() slog.Handler {
	if h := defaultLibHandler.Load(); h != nil {
		return *h
	}
	return slog.Default().Handler()
}

func (d defaultHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return d.base().Enabled(ctx, l)
}

func (d defaultHandler) Handle(ctx context.Context, r slog.Record) error {
	h := d.base()
	for _, w := range d.with {
		h = w(h)
	}
	return h.Handle(ctx, r)
}

func (d defaultHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return d.and(func(h slog.Handler) slog.Handler { return h.WithAttrs(attrs) })
}

func (d defaultHandler) WithGroup(name string) slog.Handler {
	return d.and(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}

func (d defaultHandler) and(w func(slog.Handler) slog.Handler) defaultHandler {
	return defaultHandler{with: append(d.with[:len(d.with):len(d.with)], w)}
}
