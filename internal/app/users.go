package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

const usersUsage = "Usage: parley users create --org NAME --email EMAIL\n"

// users runs `parley users create`: a dashboard user in the organization
// (created if new), whose one-time password is printed alone on one line.
func users(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprint(stderr, usersUsage)
		return errUsage
	}
	var (
		c              Config
		orgName, email string
	)
	fs := newFlagSet("users create", stderr)
	storeFlags(fs, &c)
	fs.StringVar(&orgName, "org", "", "organization name (required; created if new)")
	fs.StringVar(&email, "email", "", "the user's email, with which they sign in (required)")
	if err := parse(fs, args[1:], getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		fmt.Fprintln(stderr, "parley:", err)
		return errUsage
	}
	if orgName == "" || email == "" || fs.NArg() != 0 {
		fmt.Fprint(stderr, usersUsage)
		return errUsage
	}
	if err := c.check(); err != nil {
		return err
	}
	a, err := Open(ctx, c, newLogger(c, stderr))
	if err != nil {
		return err
	}
	defer a.Close()
	password, _, err := a.Accounts.CreateUser(ctx, orgName, email)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, password)
	return nil
}
