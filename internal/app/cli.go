package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
  parley users reset-password --email EMAIL
                                     give a user a new one-time password (a lost
                                     admin password); prints it
  parley migrate [flags]             apply database migrations and exit
  parley recordings migrate --recordings-url s3://BUCKET/PREFIX
                                     move the recordings under the data dir to
                                     the object store
  parley version                     print the version and the source revision

Run "parley COMMAND --help" for a command's flags. Every flag has an environment
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
		fs := newCommandFlags("serve", stdout, stderr)
		serveFlags(fs, &c)
		if err := configure(fs, args, getenv, &c); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return serve(ctx, c, newLogger(c, stderr), stderr)
	case "migrate":
		fs := newCommandFlags("migrate", stdout, stderr)
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
		info, _ := debug.ReadBuildInfo()
		fmt.Fprintln(stdout, versionLine(Version, info))
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	// Like a mistyped flag: the error and where the commands are listed.
	fmt.Fprintf(stderr, "parley: unknown command %q\nRun 'parley help' for the commands.\n", cmd)
	return errUsage
}

// configure reads a command's flags (parseCommand: no arguments) and checks
// them.
func configure(fs *flag.FlagSet, args []string, getenv func(string) string, c *Config) error {
	if err := parseCommand(fs, args, getenv, 0); err != nil {
		return err
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

// versionLine is what `parley version` prints: "parley", the version (the
// one set with -ldflags, else the main module's from the build info: a tag,
// a pseudo-version, or "(devel)"), then the source's revision and whether
// it had uncommitted changes, and the Go release that built it.
func versionLine(ldflags string, info *debug.BuildInfo) string {
	v := ldflags
	if v == "dev" && info != nil && info.Main.Version != "" {
		v = info.Main.Version
	}
	line := "parley " + v
	if info == nil {
		return line
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		line += " revision " + rev
		if modified == "true" {
			line += " (modified)"
		}
	}
	if info.GoVersion != "" {
		line += " " + info.GoVersion
	}
	return line
}

// version is the short version, for the SIP User-Agent header: -ldflags',
// else a released module version, else "dev-" and the revision's first 12
// characters, else "dev".
func version() string {
	info, _ := debug.ReadBuildInfo()
	return shortVersion(Version, info)
}

func shortVersion(ldflags string, info *debug.BuildInfo) string {
	if ldflags != "dev" || info == nil {
		return ldflags
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return ldflags
}
