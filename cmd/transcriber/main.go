// Command transcriber runs the service on one machine and does its admin
// work (usage below). Every command refuses a flag or argument it does not
// know: a typo must not run as if it were not there.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	// Imported here, first in go build's depth-first walk, so SQLite's long
	// chain starts first instead of running alone at the end of a cold
	// build (TestBuildStartsSQLiteEarly).
	_ "modernc.org/sqlite"

	"transcriber/internal/app"
	"transcriber/internal/clock"
	"transcriber/internal/store"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/store/ydb"
)

const usage = `usage: transcriber <command>

commands:
  local     run the whole service on this machine (see docs/configuration.md)
  migrate   create or update the job store: YDB at $YDB_CONNECTION_STRING when set,
            else the embedded store in $DATA_DIR (default ./data)
    --plan          print the YDB schema operations migrate would run, one a line,
                    and change nothing (for a new database when YDB_CONNECTION_STRING is unset)
    --timeout 10m   give up after this long (default 10m)
  token create --name NAME   issue an API token (shown once); in YDB when YDB_CONNECTION_STRING is set
  token list                 list tokens (never their secrets)
  token revoke ID            revoke a token
  status    how the service is doing: jobs by state and the oldest one's wait, the last
            day's failures, the recognizer's request window, the month's audio, Telegram
            deliveries and callbacks; from YDB when YDB_CONNECTION_STRING is set, else the
            embedded store in $DATA_DIR, which must exist
    --json          print it as JSON, for machines
  measure-sync FILE  send FILE, a mono Ogg Opus voice note of at most 30 s, to SpeechKit's
            synchronous API as the service would, and print how long each answer took and
            what it billed, beside the load model's assumption (docs/scale.md); each request
            is billed
    --runs 3        requests to send, one after another (1 to 10)
    --lang CODE     the recording's language (default $DEFAULT_LANGUAGE)
  selftest --api URL --token TOKEN   prove a running installation works (after terraform apply, or
            against make run): real jobs through its public API, each check one line, PASS or FAIL,
            with its figure and, for a failure, where to look; the jobs are deleted at the end; exits
            0 only when every check passed (docs/deploy.md, "Check it works")
    --audio FILE --expect TEXT   a recording and the words said in it, instead of the bundled
                    English sample; a recording of at most 30 s, one channel, for recognition-sync
    --lang CODE     the language of --audio (default: the installation's DEFAULT_LANGUAGE)
    --timeout 5m    the whole run's bound, the deletion of its jobs included
    --bot           also ask Telegram whether the bot's webhook is this installation's, with
                    $TELEGRAM_BOT_TOKEN (and $TELEGRAM_API_URL when set)
    --store         also probe the database at $YDB_CONNECTION_STRING in a scratch directory: each
                    store call checked, its request units beside the estimate (alone: only that)
    --json          print {"ok", "checks": [{"name", "ok", "ms", "detail"}], "store"} instead of lines

Configuration is read from the environment; see docs/configuration.md.
`

// errUsage marks a command line that names no known command.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	switch {
	case errors.Is(err, errUsage):
		if err == errUsage { //nolint:errorlint // the bare sentinel: nothing more to say than the usage
			fmt.Fprint(os.Stderr, usage)
		} else {
			fmt.Fprintln(os.Stderr, "transcriber:", err)
		}
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "transcriber:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "local":
		if len(args) > 1 {
			return usageError(fmt.Sprintf("local takes no arguments (got %q); it is configured by the environment", args[1:]))
		}
		return local(ctx, getenv, stdout)
	case "migrate":
		return migrateCmd(ctx, args[1:], getenv, stdout)
	case "token":
		return tokenCmd(ctx, args[1:], getenv, stdout)
	case "status":
		return statusCmd(ctx, args[1:], getenv, stdout)
	case "measure-sync":
		return measureSyncCmd(ctx, args[1:], getenv, stdout)
	case "selftest":
		return selftestCmd(ctx, args[1:], getenv, stdout)
	case "help", "-h", "--help":
		if len(args) > 1 {
			return usageError(fmt.Sprintf("help takes no arguments (got %q)", args[1:]))
		}
		_, err := fmt.Fprint(stdout, usage)
		return err
	}
	return usageError(fmt.Sprintf("unknown command %q", args[0]))
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func usageError(msg string) error {
	return fmt.Errorf("%w: %s\n\n%s", errUsage, msg, usage)
}

// parseFlags parses a command's flags, refusing any other with refuse; -h
// prints help. done: the command has nothing more to do but return err.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer, help string, refuse func(string) error) (done bool, err error) {
	fs.SetOutput(io.Discard)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		_, err = io.WriteString(stdout, help)
		return true, err
	case err != nil:
		return true, refuse(fs.Name() + ": " + err.Error())
	}
	return false, nil
}

func migrateCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	plan := fs.Bool("plan", false, "print the schema operations, change nothing")
	timeout := fs.Duration("timeout", ydb.DefaultMigrateTimeout, "give up after this long")
	if done, err := parseFlags(fs, args, stdout, usage, usageError); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("migrate takes only --plan and --timeout (got %q too)", fs.Args()))
	}
	if *timeout <= 0 {
		return usageError("migrate --timeout: want a duration such as 10m")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	dsn := getenv("YDB_CONNECTION_STRING")
	if dsn == "" && !*plan {
		if err := withStores(ctx, getenv, makeStore, func(store.Set) error { return nil }); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "job store %s is at schema version %d\n", filepath.Join(dataDir(getenv), DBFile), sqlite.SchemaVersion())
		return err
	}
	retention, err := app.JobRetention(getenv)
	if err != nil {
		return err
	}
	o := ydb.MigrateOptions{Retention: retention, Out: stdout}
	var db *ydb.DB // nil: --plan for a new database
	if dsn != "" {
		openCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if db, err = ydb.Open(openCtx, dsn, clock.System()); err != nil {
			return err
		}
		defer func() { _ = db.Close(context.WithoutCancel(ctx)) }()
	}
	if *plan { // its reads count against the schema operations quota
		ops, err := ydb.Plan(ctx, db, o)
		if err != nil {
			return err
		}
		for _, op := range ops {
			fmt.Fprintln(stdout, op)
		}
		_, err = fmt.Fprintf(stdout, "%d schema operations\n", len(ops))
		return err
	}
	applied, err := ydb.Migrate(ctx, db, o)
	for _, name := range applied {
		fmt.Fprintf(stdout, "applied schema step %s\n", name)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "YDB job store is at schema version %d; job rows expire %s after their job ended\n", ydb.SchemaVersion(), retention)
	return err
}

func dataDir(getenv func(string) string) string { return cmp.Or(getenv("DATA_DIR"), "data") }

const DBFile = "transcriber.db"
