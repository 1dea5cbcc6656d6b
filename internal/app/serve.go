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

// serve runs the HTTP interface until ctx ends, then shuts down in phases:
// refuse new requests (but the probes: /readyz says draining) and let
// in-flight ones finish (bounded by ShutdownTimeout), let live calls finish
// (CallDrain), close HTTP, then close the store.
func serve(ctx context.Context, c Config, log *slog.Logger, stderr io.Writer) error {
	// Libraries that log through slog's default (parts of the SIP stack)
	// write through the server's handler too, not as plain text in between.
	prev, prevOut, prevFlags := slog.Default(), stdlog.Writer(), stdlog.Flags()
	slog.SetDefault(log)
	defer func() { slog.SetDefault(prev); stdlog.SetOutput(prevOut); stdlog.SetFlags(prevFlags) }()
	a, err := Open(ctx, c, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := a.Close(); err != nil {
			log.Error("close store", "err", err)
		}
	}()
	if err := a.Knowledge.Resume(ctx); err != nil {
		log.Error("knowledge sources left unindexed", "err", err)
	}
	key, login, err := a.Accounts.Bootstrap(ctx)
	if err != nil {
		return fmt.Errorf("create the first API key and dashboard user: %w", err)
	}
	if key != "" {
		fmt.Fprintf(stderr, "Created organization %q with its first API key (shown once, keep it safe):\n%s\n", "default", key)
	}
	if login.Email != "" {
		fmt.Fprintf(stderr, "Dashboard sign-in (one-time password, shown once; you choose your own at first sign-in):\nemail: %s\npassword: %s\n",
			login.Email, login.Password)
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	if c.PublicURL == "" {
		a.API.Messages.PublicURL = "http://" + ln.Addr().String()
	}
	if c.PublicURL == "" && a.Phone != nil && a.Phone.Recordings != nil {
		// Links name the address actually bound (--addr may say port 0).
		a.Phone.Recordings.PublicURL = "http://" + ln.Addr().String()
	}
	srv := &http.Server{
		Handler:           a.HTTP,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// The call plane runs until the HTTP side has drained, so a request that
	// places a call during shutdown still finds the queue.
	calls, stopCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCalls()
	queueDone := make(chan struct{})
	go func() {
		a.Queue.Run(calls)
		close(queueDone)
	}()
	// Inbound texts a stopped server left unanswered; with SQLite this
	// server is the only one, so it takes them all at once.
	sweepDone := make(chan struct{})
	go func() {
		a.Messages.Run(calls, c.DatabaseURL == "")
		close(sweepDone)
	}()
	defer func() { stopCalls(); <-sweepDone }()
	// Test runs are driven beside the queue their calls go through.
	runsDone := make(chan struct{})
	go func() {
		a.TestRuns.Run(calls)
		close(runsDone)
	}()
	defer func() { stopCalls(); <-runsDone }()
	// Campaigns dial through the queue, and stop dialing as soon as
	// shutdown starts, before the queue stops admitting.
	dialing, stopDialing := context.WithCancel(context.WithoutCancel(ctx))
	dialingDone := make(chan struct{})
	go func() {
		a.Campaigns.Run(dialing)
		close(dialingDone)
	}()
	stopCampaigns := func() { stopDialing(); <-dialingDone }
	defer stopCampaigns()
	stopSIP := func() {}
	if a.UA != nil {
		if err := a.UA.Start(calls, a.Phone.Handle); err != nil {
			_ = srv.Close()
			stopCalls()
			<-queueDone
			return err
		}
		stopSIP = func() {
			if err := a.UA.Close(); err != nil {
				log.Warn("close SIP", "err", err)
			}
		}
	}
	defer stopSIP()
	// Registrations run while SIP is up. They are stopped, and so
	// unregister, before the call plane: the user agent runs on the calls'
	// context, and an un-REGISTER sent as that context ends raced the
	// closing of its own transport (and lost, under CI's load).
	stopRegistrations := func() {}
	if a.Registrations != nil {
		regs, stopRegs := context.WithCancel(context.WithoutCancel(ctx))
		regsDone := make(chan struct{})
		go func() {
			a.Registrations.Run(regs)
			close(regsDone)
		}()
		stopRegistrations = func() { stopRegs(); <-regsDone }
		defer stopRegistrations() // on the early returns; a second call returns at once
	}
	logConfiguration(log, c, a, ln.Addr().String())
	log.Info("serving", "addr", ln.Addr().String(), "dashboard", dashboardURL(c, ln.Addr().String()), "database", a.Store.Engine(), "data_dir", c.DataDir)

	select {
	case err := <-served:
		stopCampaigns()
		stopRegistrations()
		stopCalls()
		<-queueDone
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stopCampaigns()
	log.Info("shutting down: draining in-flight requests", "timeout", c.ShutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.ShutdownTimeout)
	defer cancel()
	// /readyz answers draining from now on, and every other request 503,
	// until the live calls have finished: a load balancer sees this server
	// leave while its calls go on.
	a.API.Drain()
	if err := a.door.close(shutdownCtx); err != nil {
		_ = srv.Close()
		stopRegistrations()
		stopCalls()
		<-queueDone
		return fmt.Errorf("shutdown: %w", err)
	}
	stopRegistrations() // no new inbound calls through a registrar while calls drain
	log.Info("requests drained; stopping calls", "drain", c.CallDrain.String())
	stopCalls()
	<-queueDone
	// Only the probes can be in flight now.
	closing, closed := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer closed()
	if err := srv.Shutdown(closing); err != nil {
		log.Warn("close HTTP", "err", err)
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-sweepDone                   // no sweep starts replies while they drain
	a.Messages.Drain(shutdownCtx) // replies being written get the rest of the shutdown's time
	log.Info("stopped")
	return nil
}
