package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// lineFreeChannel is where migration 00009's trigger announces that a call
// of an organization with queued calls stopped holding a line (payload:
// the organization id), at the commit of the transaction that ended it.
const lineFreeChannel = "parley_line_free"

// watchLines listens on lineFreeChannel over a connection of its own (a
// LISTEN lives as long as its session, which a pooled connection would
// hand to others) and calls wake for every notification until ctx ends.
// The payload is not needed: a woken dispatcher looks at every
// organization with queued calls. Servers on other schemas of the same
// database wake it too, which costs one look at an empty queue.
func watchLines(ctx context.Context, cfg *pgx.ConnConfig, wake func()) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("listen for freed lines: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+lineFreeChannel); err != nil {
		return fmt.Errorf("listen for freed lines: %w", err)
	}
	wake() // lines freed before the LISTEN took effect
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("listen for freed lines: %w", err)
		}
		wake()
	}
}
