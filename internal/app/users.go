package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parley-voice/parley/internal/store"
)

const usersUsage = `Usage: parley users create --org NAME --email EMAIL
       parley users reset-password --email EMAIL
`

// users runs `parley users create` (a dashboard user in the organization,
// created if new) and `parley users reset-password` (the way back in for an
// operator who lost the first start's admin password). Each prints the
// user's new one-time password alone on one line; the user chooses their
// own at next sign-in.
func users(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "reset-password") {
		fmt.Fprint(stderr, usersUsage)
		return errUsage
	}
	sub := args[0]
	var (
		c              Config
		orgName, email string
	)
	fs := newCommandFlags("users "+sub, stdout, stderr)
	if sub == "create" {
		fs.StringVar(&orgName, "org", "", "organization name (required; created if new)")
		fs.StringVar(&email, "email", "", "the user's email, with which they sign in (required)")
	} else {
		fs.StringVar(&email, "email", "", "the email the user signs in with (required)")
	}
	storeFlags(fs, &c)
	if err := parseCommand(fs, args[1:], getenv, 0); err != nil {
		return err
	}
	if email == "" || (sub == "create" && orgName == "") {
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
	var password string
	if sub == "create" {
		password, _, err = a.Accounts.CreateUser(ctx, orgName, email)
	} else {
		password, _, err = a.Accounts.ResetPasswordByEmail(ctx, email)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no user signs in with %q (parley users create makes one)", email)
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, password)
	return nil
}
