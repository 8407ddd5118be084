// Command transcriber runs the service on one machine and does its admin
// work.
//
//	transcriber local      run the whole service locally
//	transcriber migrate    create or update the job store (YDB, or the embedded one under DATA_DIR)
//	transcriber token …    issue, list and revoke API tokens
//
// Configuration comes from the environment only; see docs/configuration.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"transcriber/internal/app"
	"transcriber/internal/clock"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/store/ydb"
)

const usage = `usage: transcriber <command>

commands:
  local     run the whole service on this machine (see docs/configuration.md)
  migrate   create or update the job store: YDB at $YDB_CONNECTION_STRING when set,
            else the embedded store in $DATA_DIR (default ./data)
  token create --name NAME   issue an API token (shown once); in YDB when YDB_CONNECTION_STRING is set
  token list                 list tokens (never their secrets)
  token revoke ID            revoke a token

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
		return local(ctx, getenv, stdout)
	case "migrate":
		if dsn := getenv("YDB_CONNECTION_STRING"); dsn != "" {
			retention, err := app.JobRetention(getenv)
			if err != nil {
				return err
			}
			return migrateYDB(ctx, dsn, retention, stdout)
		}
		return migrate(ctx, dataDir(getenv), stdout)
	case "token":
		return tokenCmd(ctx, args[1:], getenv, stdout)
	case "help", "-h", "--help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	}
	return fmt.Errorf("%w: unknown command %q\n\n%s", errUsage, args[0], usage)
}

// dataDir is where the local stack keeps its files: DATA_DIR, or ./data.
func dataDir(getenv func(string) string) string {
	if d := getenv("DATA_DIR"); d != "" {
		return d
	}
	return "data"
}

// DBFile is the embedded job store's file name under the data directory.
const DBFile = "transcriber.db"

func migrate(ctx context.Context, dir string, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dir, DBFile)
	db, err := sqlite.Open(ctx, path, clock.System())
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	_, err = fmt.Fprintf(stdout, "job store %s is at schema version %d\n", path, sqlite.SchemaVersion())
	return err
}

// migrateYDB applies the YDB schema steps, then sets the job tables' TTL
// to retention (ydb.SetRetention, on every run, so a changed JOB_RETENTION
// takes effect); credentials come from the YDB_* variables of
// ydb-go-sdk-auth-environ (docs/configuration.md).
func migrateYDB(ctx context.Context, dsn string, retention time.Duration, stdout io.Writer) error {
	openCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, err := ydb.Open(openCtx, dsn, clock.System())
	if err != nil {
		return err
	}
	defer func() { _ = db.Close(context.WithoutCancel(ctx)) }()
	applied, err := ydb.Migrate(ctx, db)
	for _, name := range applied {
		fmt.Fprintf(stdout, "applied schema step %s\n", name)
	}
	if err != nil {
		return err
	}
	if err := ydb.SetRetention(ctx, db, retention); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "YDB job store is at schema version %d; job rows expire %s after their job ended\n", ydb.SchemaVersion(), retention)
	return err
}
