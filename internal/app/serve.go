package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// serve runs a Parley until ctx ends (SIGTERM), then drains and stops its
// components (serveComponents) in reverse order, and closes the store.
func serve(ctx context.Context, c Config, log *slog.Logger, stderr io.Writer) error {
	// Libraries that log through slog's default (parts of the SIP stack)
	// write through the server's handler too, not as plain text in between.
	prev, prevOut, prevFlags := slog.Default(), stdlog.Writer(), stdlog.Flags()
	slog.SetDefault(log)
	defer func() { slog.SetDefault(prev); stdlog.SetOutput(prevOut); stdlog.SetFlags(prevFlags) }()
	// The HTTP port is bound before anything else: its bound address (for
	// --addr port 0) is the base of the links the services hand out.
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	opened := false
	defer func() {
		if !opened {
			ln.Close()
		}
	}()
	base := publicURL(c)
	if c.PublicURL == "" {
		base = "http://" + ln.Addr().String() // links name the address actually bound
	}
	a, err := open(ctx, c, log, base)
	if err != nil {
		return err
	}
	defer func() {
		if err := a.Close(); err != nil {
			log.Error("close store", "err", err)
		}
	}()
	opened = true // the http port component closes ln from now on
	s := &serving{a: a, c: c, log: log, stderr: stderr, ln: ln, failed: make(chan error, 1)}
	err = runComponents(ctx, s.components(), s.failed, c.ShutdownTimeout, log)
	if err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// serving is what the components of one serve share.
type serving struct {
	a      *App
	c      Config
	log    *slog.Logger
	stderr io.Writer
	ln     net.Listener
	srv    *http.Server  // set by http's start
	served chan struct{} // closed once srv stopped serving; nil until http starts
	// failed carries a fatal error of a running part (HTTP stopped
	// serving): serve shuts down and returns it.
	failed chan error
}

// components are a serving Parley's parts in start order; serve stops them
// in reverse. Adding a part is adding its line here, in the place its
// dependencies give it, and its constructor below. At shutdown every part
// drains first (takes no new work), then they stop in reverse. The order
// and why:
//
//  0. http port: the HTTP listener, bound before the components start (its
//     address is the base of the services' links); closed last, so the
//     probes are answered until every other part has stopped.
//  1. sip: binds SIP over UDP, TCP (and TLS) and answers; an inbound call
//     waits until calls (4) has recovered what a previous run left.
//     Draining, new INVITEs and OPTIONS get 503 (a proxy marks the server
//     down). It stops after calls, carrying the live calls' dialogs while
//     they drain.
//  2. credentials: the first start's API key and dashboard sign-in, only
//     once every listener is bound (HTTP and SIP; WebRTC binds per call):
//     a port taken creates and prints nothing.
//  3. knowledge: indexing a stopped server left unfinished resumes. Then
//     recordings (with --recordings-url): moves finished recordings to the
//     object store, those a stopped server left first; it stops after
//     calls, giving the last calls' recordings a moment to land.
//  4. calls: the call queue, under everything that places calls. Draining,
//     it dispatches no queued call (another server does); stopping, it lets
//     live calls finish up to --call-drain.
//  5. messages: inbound texts a stopped server left unanswered.
//  6. test runs, through the queue.
//  7. campaigns, dialing through the queue; they stop dialing at drain.
//  8. registrations: trunks' registrations, kept while SIP is up; stopped
//     (unregistered) before the call plane, so no new call comes in
//     through a registrar while calls drain.
//  9. http: serves the API and the dashboard. Draining, /readyz answers 503
//     and every request but the probes 503; stopping, it waits for the
//     requests inside (a request that places a call still finds the queue).
//     The probes are answered until http port (0) stops.
//  10. ready: says the server is up (the configuration and "serving").
func (s *serving) components() []component {
	parts := []component{
		s.httpPort(),
		s.sip(),
		s.credentials(),
		s.knowledge(),
		s.recordings(),
		s.calls(),
		s.messages(),
		s.testRuns(),
		s.campaigns(),
		s.registrations(),
		s.http(),
		s.ready(),
	}
	out := parts[:0]
	for _, p := range parts {
		if p.name != "" { // a part this configuration does not run
			out = append(out, p)
		}
	}
	return out
}

func (s *serving) sip() component {
	if s.a.UA == nil {
		return component{}
	}
	ua, log := s.a.UA, s.log
	var cancel context.CancelFunc
	return component{
		name: "sip",
		start: func(ctx context.Context) error {
			ctx, cancel = context.WithCancel(ctx)
			if err := ua.Start(ctx, s.a.Phone.Handle); err != nil {
				cancel()
				return err
			}
			return nil
		},
		// New INVITEs and OPTIONS get 503: a proxy probing with OPTIONS
		// sends new calls elsewhere; the live calls' dialogs go on.
		drain: ua.Drain,
		stop: func(context.Context) error {
			defer cancel()
			if err := ua.Close(); err != nil {
				log.Warn("close SIP", "err", err)
			}
			return nil
		},
	}
}

func (s *serving) credentials() component {
	return component{name: "credentials", start: func(ctx context.Context) error {
		key, login, err := s.a.Accounts.Bootstrap(ctx)
		if err != nil {
			return fmt.Errorf("create the first API key and dashboard user: %w", err)
		}
		if key != "" {
			fmt.Fprintf(s.stderr, "Created organization %q with its first API key (shown once, keep it safe):\n%s\n", "default", key)
		}
		if login.Email != "" {
			fmt.Fprintf(s.stderr, "Dashboard sign-in at %s (one-time password, shown once; you choose your own at first sign-in):\nemail: %s\npassword: %s\n",
				dashboardURL(s.c, s.ln.Addr().String()), login.Email, login.Password)
		}
		return nil
	}}
}

func (s *serving) knowledge() component {
	return component{name: "knowledge", start: func(ctx context.Context) error {
		if err := s.a.Knowledge.Resume(ctx); err != nil {
			s.log.Error("knowledge sources left unindexed", "err", err)
		}
		return nil // background indexing stops with the App
	}}
}

func (s *serving) calls() component {
	l := background(func(ctx context.Context) { s.a.Queue.Run(ctx) })
	return component{name: "calls", start: l.start,
		drain: s.a.Queue.Drain, // queued calls wait for another server
		stop: func(ctx context.Context) error {
			s.log.Info("stopping calls", "drain", s.c.CallDrain.String())
			return l.stop(ctx)
		}}
}

func (s *serving) messages() component {
	// With SQLite this server is the only one: it takes every unanswered
	// text at once.
	l := background(func(ctx context.Context) { s.a.Messages.Run(ctx, s.c.DatabaseURL == "") })
	return component{name: "messages", start: l.start, stop: func(ctx context.Context) error {
		l.stop(ctx)             // no sweep starts replies while they drain
		s.a.Messages.Drain(ctx) // replies being written get the rest of the shutdown's time
		return nil
	}}
}

func (s *serving) testRuns() component {
	l := background(s.a.TestRuns.Run)
	return component{name: "test runs", start: l.start, stop: l.stop}
}

func (s *serving) campaigns() component {
	l := background(func(ctx context.Context) { s.a.Campaigns.Run(ctx) })
	// No dial starts once shutdown has begun; stopping waits for the loop.
	return component{name: "campaigns", start: l.start, drain: l.halt, stop: l.stop}
}

func (s *serving) registrations() component {
	if s.a.Registrations == nil {
		return component{}
	}
	l := background(s.a.Registrations.Run)
	return component{name: "registrations", start: l.start, stop: l.stop}
}

// httpPort owns the HTTP listener, bound before the components start: it
// stops last, so the probes are answered until every other part stopped.
func (s *serving) httpPort() component {
	return component{
		name:  "http port",
		start: func(context.Context) error { return nil }, // bound in serve
		stop: func(context.Context) error {
			if s.served == nil { // never served
				return s.ln.Close()
			}
			// Only the probes can be in flight now.
			closing, closed := context.WithTimeout(context.Background(), 5*time.Second)
			defer closed()
			if err := s.srv.Shutdown(closing); err != nil {
				s.log.Warn("close HTTP", "err", err)
				_ = s.srv.Close()
			}
			<-s.served
			return nil
		},
	}
}

// http serves the API and the dashboard on the bound port.
func (s *serving) http() component {
	return component{
		name: "http",
		start: func(ctx context.Context) error {
			s.srv = &http.Server{
				Handler:           s.a.HTTP,
				ReadHeaderTimeout: 10 * time.Second,
				ReadTimeout:       60 * time.Second,
				WriteTimeout:      120 * time.Second,
				IdleTimeout:       120 * time.Second,
				MaxHeaderBytes:    64 << 10,
				ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
				BaseContext:       func(net.Listener) context.Context { return ctx },
			}
			served := make(chan struct{})
			s.served = served
			go func() {
				defer close(served)
				if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
					s.failed <- fmt.Errorf("serve: %w", err) // buffered, and this is its one sender
				}
			}()
			return nil
		},
		// /readyz answers draining from now on, and every other request
		// 503, until the live calls have finished: a load balancer sees
		// this server leave while its calls go on.
		drain: s.a.API.Drain,
		stop: func(ctx context.Context) error {
			if err := s.a.door.close(ctx); err != nil {
				return fmt.Errorf("in-flight requests: %w", err)
			}
			s.log.Info("requests drained")
			return nil
		},
	}
}

func (s *serving) ready() component {
	return component{name: "ready", start: func(context.Context) error {
		addr := s.ln.Addr().String()
		logConfiguration(s.log, s.c, s.a, addr)
		s.log.Info("serving", "addr", addr, "dashboard", dashboardURL(s.c, addr), "database", s.a.Store.Engine(), "data_dir", s.c.DataDir)
		return nil
	}}
}
