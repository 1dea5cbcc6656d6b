package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/parley-voice/parley/internal/store"
)

// keys runs `parley keys create|list|revoke`.
func keys(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "Usage: parley keys create|list|revoke --org NAME [ID]\n")
		return errUsage
	}
	sub := args[0]
	var (
		c       Config
		orgName string
	)
	fs := newCommandFlags("keys "+sub, stdout, stderr)
	fs.StringVar(&orgName, "org", "", "organization name (required)")
	storeFlags(fs, &c)
	if err := parseCommand(fs, args[1:], getenv, 1); err != nil {
		return err
	}
	if orgName == "" {
		fmt.Fprintln(stderr, "parley keys: --org is required")
		return errUsage
	}
	if err := c.check(); err != nil {
		return err
	}
	wantArgs := map[string]int{"create": 0, "list": 0, "revoke": 1}
	n, ok := wantArgs[sub]
	if !ok || fs.NArg() != n {
		fmt.Fprint(stderr, "Usage: parley keys create|list|revoke --org NAME [ID]\n")
		return errUsage
	}
	a, err := Open(ctx, c, newLogger(c, stderr))
	if err != nil {
		return err
	}
	defer a.Close()
	switch sub {
	case "create":
		token, _, err := a.Orgs.CreateKey(ctx, orgName)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, token)
	case "list":
		list, err := a.Orgs.Keys(ctx, orgName)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no organization named %q", orgName)
		}
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPREFIX\tCREATED\tREVOKED")
		for _, k := range list {
			revoked := "-"
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s...\t%s\t%s\n", k.ID, k.Prefix, k.CreatedAt.Format(time.RFC3339), revoked)
		}
		return tw.Flush()
	case "revoke":
		err := a.Orgs.RevokeKey(ctx, orgName, fs.Arg(0))
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("organization %q has no key %s", orgName, fs.Arg(0))
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, "revoked", fs.Arg(0))
	}
	return nil
}
