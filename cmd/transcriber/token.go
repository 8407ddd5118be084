package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"transcriber/internal/apitoken"
	"transcriber/internal/clock"
	"transcriber/internal/store"
)

const tokenUsage = `usage:
  transcriber token create --name NAME   make a token; its secret is printed once
  transcriber token list                 list the tokens: id, name, created, live or revoked
  transcriber token revoke ID            revoke a token by its id (as token list shows it)

The tokens live in YDB when YDB_CONNECTION_STRING is set, else in the
embedded store $DATA_DIR/transcriber.db (DATA_DIR defaults to ./data).
create makes that store if it does not exist yet, as migrate would; list and
revoke refuse to run without it, so a wrong DATA_DIR is not mistaken for a
store with no tokens.`

func tokenCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return tokenUsageError("token needs a subcommand")
	}
	now := clock.System().Now()
	switch args[0] {
	case "create":
		name, err := parseCreate(args[1:])
		if err != nil {
			return err
		}
		return withStores(ctx, getenv, makeStore, func(st store.Set) error {
			tok, secret, err := apitoken.New(name, now)
			if err != nil {
				return fmt.Errorf("create token: %w", err)
			}
			if err := st.Tokens.Create(ctx, tok); err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "created token %s (%s)\nsecret: %s\ncallback secret: %s\n"+
				"The secret is shown only this once and cannot be recovered: store it now. "+
				"If it is lost, revoke the token and create another. "+
				"The callback secret verifies the callbacks of this token's jobs (docs/api.md, Callbacks): keep it with the receiver.\n",
				tok.ID, tok.Name, secret, tok.CallbackSecret)
			return err
		})
	case "list":
		if len(args) != 1 {
			return tokenUsageError("token list takes no arguments")
		}
		return withStores(ctx, getenv, existingStore, func(st store.Set) error {
			list, err := st.Tokens.List(ctx)
			if err != nil || len(list) == 0 {
				if err == nil {
					_, err = fmt.Fprintln(stdout, "no tokens; `transcriber token create --name NAME` makes one")
				}
				return err
			}
			w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tCREATED\tSTATUS")
			for _, t := range list {
				status := "live"
				if t.Revoked() {
					status = "revoked " + showTime(t.RevokedAt)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.ID, t.Name, showTime(t.CreatedAt), status)
			}
			return w.Flush()
		})
	case "revoke":
		if len(args) != 2 {
			return tokenUsageError("token revoke takes one token id")
		}
		id := args[1]
		if strings.HasPrefix(id, "-") { // no id starts with "-"
			return tokenUsageError(fmt.Sprintf("token revoke takes no flags (got %q)", id))
		}
		if apitoken.LooksLikeSecret(id) { // not echoed: a live credential
			return tokenUsageError("that is a token's secret, not its id; `transcriber token list` shows the ids")
		}
		return withStores(ctx, getenv, existingStore, func(st store.Set) error {
			tok, err := st.Tokens.Revoke(ctx, id, now)
			if errors.Is(err, apitoken.ErrNotFound) {
				if canon, perr := apitoken.ParseID(id); perr == nil {
					return fmt.Errorf("no token has the id %s; `transcriber token list` shows the ids", canon)
				}
				return errors.New("that is not a token id; `transcriber token list` shows the ids")
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "token %s (%s) is revoked since %s\n", tok.ID, tok.Name, showTime(tok.RevokedAt))
			return err
		})
	case "help", "-h", "--help":
		if len(args) > 1 {
			return tokenUsageError(fmt.Sprintf("token help takes no arguments (got %q)", args[1:]))
		}
		_, err := fmt.Fprintln(stdout, tokenUsage)
		return err
	}
	return tokenUsageError(fmt.Sprintf("unknown token subcommand %q", args[0]))
}

func tokenUsageError(msg string) error {
	return fmt.Errorf("%w: %s\n%s", errUsage, msg, tokenUsage)
}

func parseCreate(args []string) (string, error) {
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("name", "", "the token's name: whose or what it is")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", tokenUsageError("token create takes --name NAME")
		}
		return "", tokenUsageError("token create: " + err.Error())
	}
	if fs.NArg() > 0 {
		return "", tokenUsageError(fmt.Sprintf("token create takes only --name NAME; quote a name with spaces (got %q too)", fs.Args()))
	}
	if *name == "" {
		return "", tokenUsageError("token create needs --name NAME: whose or what the token is")
	}
	return *name, nil
}

func showTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
