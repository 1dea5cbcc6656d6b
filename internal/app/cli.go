package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/sqlite"
)

// Version is set at build time with -ldflags "-X .../internal/app.Version=v1.2.3".
var Version = "dev"

const usage = `Parley runs AI voice agents on the phone network.

Usage:
  parley serve [flags]               serve the API, dashboard, calls and SIP in one process
  parley keys create --org NAME      create an API key (and the organization if new); prints the key
  parley keys list --org NAME        list an organization's keys (never their secrets)
  parley keys revoke --org NAME ID   revoke a key
  parley users create --org NAME --email EMAIL
                                     create a dashboard user (and the organization
                                     if new); prints a one-time password
  parley migrate [flags]             apply database migrations and exit
  parley recordings migrate --recordings-url s3://BUCKET/PREFIX
                                     move the recordings under the data dir to
                                     the object store
  parley version                     print the version

Run "parley COMMAND -h" for a command's flags. Every flag has an environment
twin: --data-dir is PARLEY_DATA_DIR.
`

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	err := run(ctx, args[0], args[1:], stdout, stderr, getenv)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintln(stderr, "parley:", err)
	return 1
}

var errUsage = errors.New("usage")

func run(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var c Config
	switch cmd {
	case "serve":
		fs := newFlagSet("serve", stderr)
		serveFlags(fs, &c)
		if err := configure(fs, args, getenv, &c); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return serve(ctx, c, newLogger(c, stderr), stderr)
	case "migrate":
		fs := newFlagSet("migrate", stderr)
		storeFlags(fs, &c)
		if err := configure(fs, args, getenv, &c); err != nil {
			return err
		}
		return migrate(ctx, c, stdout)
	case "keys":
		return keys(ctx, args, stdout, stderr, getenv)
	case "users":
		return users(ctx, args, stdout, stderr, getenv)
	case "recordings":
		return recordingsCommand(ctx, args, stdout, stderr, getenv)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "parley", version())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "parley: unknown command %q\n\n%s", cmd, usage)
	return errUsage
}

func configure(fs *flag.FlagSet, args []string, getenv func(string) string, c *Config) error {
	if err := parse(fs, args, getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		fmt.Fprintln(fs.Output(), "parley:", err)
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "parley %s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return errUsage
	}
	return c.check()
}

func migrate(ctx context.Context, c Config, stdout io.Writer) error {
	var err error
	if c.DatabaseURL != "" {
		err = postgres.Migrate(ctx, c.DatabaseURL)
	} else {
		err = sqlite.Migrate(ctx, sqlitePath(c))
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

func newLogger(c Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func version() string {
	if Version != "dev" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return Version
}
