// Command parley is the single Parley binary: API, dashboard, call workers
// and SIP/RTP in one process. See internal/app for the commands.
package main

import (
	"context"
	"os"

	"github.com/parley-voice/parley/internal/app"
)

func main() {
	os.Exit(app.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}
