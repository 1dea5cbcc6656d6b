package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Values of --log-format.
const (
	logAuto = "auto" // text when stderr is a terminal, else JSON
	logText = "text"
	logJSON = "json"
)

// newLogger writes the log to w at --log-level: JSON lines for a
// collector (journald, a container runtime, a test reading them), or, on a
// terminal or with --log-format text, one readable line a record.
func newLogger(c Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.LogLevel))
	if logsAsText(c.LogFormat, w) {
		return slog.New(newTextLog(w, level))
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// logsAsText decides --log-format: auto is text only when w is a terminal.
func logsAsText(format string, w io.Writer) bool {
	switch format {
	case logText:
		return true
	case logJSON:
		return false
	}
	f, ok := w.(*os.File)
	return ok && isTerminal(f.Fd())
}

// textLog is a slog handler for a person at a terminal: the time of day,
// the level, the message, then key=value attributes (groups as a.b=v),
// values quoted only where they need it.
type textLog struct {
	mu     *sync.Mutex // one per output: lines do not interleave
	w      io.Writer
	level  slog.Leveler
	attrs  string // already formatted, with a leading space each
	prefix string // open groups, "a.b."
}

func newTextLog(w io.Writer, level slog.Leveler) *textLog {
	return &textLog{mu: new(sync.Mutex), w: w, level: level}
}

func (h *textLog) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *textLog) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	var b []byte
	for _, a := range as {
		b = appendAttr(b, h.prefix, a)
	}
	c.attrs += string(b)
	return &c
}

func (h *textLog) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix += name + "."
	return &c
}

func (h *textLog) Handle(_ context.Context, r slog.Record) error {
	b := make([]byte, 0, 256)
	if !r.Time.IsZero() {
		b = r.Time.AppendFormat(b, "15:04:05.000")
		b = append(b, ' ')
	}
	lvl := r.Level.String()
	b = append(b, lvl...)
	b = append(b, strings.Repeat(" ", max(0, 5-len(lvl)))...)
	b = append(b, ' ')
	if strings.ContainsAny(r.Message, "\n\r") {
		b = strconv.AppendQuote(b, r.Message) // one record, one line
	} else {
		b = append(b, r.Message...)
	}
	b = append(b, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		b = appendAttr(b, h.prefix, a)
		return true
	})
	b = append(b, '\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b)
	return err
}

// appendAttr appends " key=value", a group's members each as
// " group.key=value"; empty attributes and empty groups are left out, as
// slog's handlers do.
func appendAttr(b []byte, prefix string, a slog.Attr) []byte {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return b
	}
	if a.Value.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, m := range a.Value.Group() {
			b = appendAttr(b, prefix, m)
		}
		return b
	}
	b = append(b, ' ')
	b = append(b, prefix...)
	b = append(b, a.Key...)
	b = append(b, '=')
	return appendValue(b, a.Value)
}

func appendValue(b []byte, v slog.Value) []byte {
	var s string
	switch v.Kind() {
	case slog.KindString:
		s = v.String()
	case slog.KindTime:
		s = v.Time().Format(time.RFC3339Nano)
	case slog.KindDuration:
		s = v.Duration().String()
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			s = err.Error()
		} else {
			s = v.String()
		}
	default:
		s = v.String()
	}
	if needsQuotes(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// needsQuotes: an empty value, spaces, quotes, '=' or anything unprintable
// would make the line ambiguous.
func needsQuotes(s string) bool {
	if s == "" {
		return true
	}
	return slices.ContainsFunc([]rune(s), func(r rune) bool {
		return r == utf8.RuneError || r == '"' || r == '=' || unicode.IsSpace(r) || !unicode.IsPrint(r)
	})
}
