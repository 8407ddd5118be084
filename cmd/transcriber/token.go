package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"transcriber/internal/apitoken"
	"transcriber/internal/clock"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/store/ydb"
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

// tokenCmd runs `transcriber token …`: the API tokens in the embedded store
// under DATA_DIR.
func tokenCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return tokenUsageError("token needs a subcommand")
	}
	switch args[0] {
	case "create":
		name, err := parseCreate(args[1:])
		if err != nil {
			return err
		}
		return withTokenStore(ctx, getenv, makeStore, func(st apitoken.Store) error {
			return createToken(ctx, st, name, clock.System().Now(), stdout)
		})
	case "list":
		if len(args) != 1 {
			return tokenUsageError("token list takes no arguments")
		}
		return withTokenStore(ctx, getenv, existingStore, func(st apitoken.Store) error {
			return listTokens(ctx, st, stdout)
		})
	case "revoke":
		if len(args) != 2 {
			return tokenUsageError("token revoke takes one token id")
		}
		id := args[1]
		if strings.HasPrefix(id, "-") {
			// No token id starts with "-": this is a flag revoke does not take.
			return tokenUsageError(fmt.Sprintf("token revoke takes no flags (got %q)", id))
		}
		if apitoken.LooksLikeSecret(id) {
			// Not echoed: it is a live credential, and this line may end up in a log.
			return tokenUsageError("that is a token's secret, not its id; `transcriber token list` shows the ids")
		}
		return withTokenStore(ctx, getenv, existingStore, func(st apitoken.Store) error {
			return revokeToken(ctx, st, id, clock.System().Now(), stdout)
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

// tokenUsageError is a usage error that names what was wrong and shows the
// token commands.
func tokenUsageError(msg string) error {
	return fmt.Errorf("%w: %s\n%s", errUsage, msg, tokenUsage)
}

// parseCreate reads `--name NAME` (or `--name=NAME`) and nothing else.
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

// Whether withTokenStore may create the embedded store.
const (
	makeStore     = true  // token create: a store where none is, as migrate would
	existingStore = false // token list, revoke: only a store that exists
)

// withTokenStore opens the token store — YDB's when YDB_CONNECTION_STRING
// is set (the cloud's tokens), else the embedded one under the data
// directory — runs fn on it, and closes it. Unless create is set, a missing
// embedded store is an error naming where it was looked for: opening it
// would make an empty one and answer as if it had no tokens.
func withTokenStore(ctx context.Context, getenv func(string) string, create bool, fn func(apitoken.Store) error) (err error) {
	if dsn := getenv("YDB_CONNECTION_STRING"); dsn != "" {
		openCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		db, err := ydb.Open(openCtx, dsn, clock.System())
		if err != nil {
			return err
		}
		defer func() { _ = db.Close(context.WithoutCancel(ctx)) }()
		return fn(ydb.NewTokenStore(db))
	}
	dir := dataDir(getenv)
	path := filepath.Join(dir, DBFile)
	if !create {
		if err := storeExists(dir, path); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	db, err := sqlite.Open(ctx, path, clock.System())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	return fn(sqlite.NewTokenStore(db))
}

// storeExists reports, as an error for people, that the embedded store
// path under the data directory dir does not exist.
func storeExists(dir, path string) error {
	_, err := os.Stat(path)
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("job store %s: %w", path, err)
	}
	where := dir
	if abs, aerr := filepath.Abs(dir); aerr == nil && abs != dir {
		where = fmt.Sprintf("%s (%s)", dir, abs)
	}
	return fmt.Errorf("no job store in DATA_DIR=%s: %s does not exist. "+
		"Set DATA_DIR to the directory `make run` uses (./data by default), "+
		"or create the store with `transcriber migrate` or `make run`; "+
		"for the cloud's tokens set YDB_CONNECTION_STRING", where, DBFile)
}

func createToken(ctx context.Context, st apitoken.Store, name string, now time.Time, stdout io.Writer) error {
	tok, secret, err := apitoken.New(name, now)
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	if err := st.Create(ctx, tok); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "created token %s (%s)\nsecret: %s\ncallback secret: %s\n"+
		"The secret is shown only this once and cannot be recovered: store it now. "+
		"If it is lost, revoke the token and create another. "+
		"The callback secret verifies the callbacks of this token's jobs (docs/api.md, Callbacks): keep it with the receiver.\n",
		tok.ID, tok.Name, secret, tok.CallbackSecret)
	return err
}

func listTokens(ctx context.Context, st apitoken.Store, stdout io.Writer) error {
	list, err := st.List(ctx)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(stdout, "no tokens; `transcriber token create --name NAME` makes one")
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
}

func revokeToken(ctx context.Context, st apitoken.Store, id string, now time.Time, stdout io.Writer) error {
	tok, err := st.Revoke(ctx, id, now)
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
}

func showTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
