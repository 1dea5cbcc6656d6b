package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	parley "github.com/parley-voice/parley"
	"github.com/parley-voice/parley/internal/api"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/sqlite"
)

// App is a wired Parley: its store, services and HTTP interface.
type App struct {
	Config Config
	Store  store.Store
	Orgs   *org.Service
	API    *api.Server
	Log    *slog.Logger
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
	services := api.NewServices(st, box, c.MaxConcurrentCalls)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	server := api.New(api.Config{
		Services: services,
		Store:    st, OpenAPI: parley.OpenAPI, Logger: log, Registry: reg,
		RateLimit: c.RateLimit, RateBurst: c.RateBurst,
	})
	return &App{Config: c, Store: st, Orgs: services.Orgs, API: server, Log: log}, nil
}

// Close releases the store.
func (a *App) Close() error { return a.Store.Close() }
