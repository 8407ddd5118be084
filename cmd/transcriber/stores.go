package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"transcriber/internal/clock"
	"transcriber/internal/store"
	"transcriber/internal/store/sqlite"
	"transcriber/internal/store/ydb"
)

// Whether withStores may create the embedded store.
const (
	makeStore     = true  // token create, as migrate would
	existingStore = false // status, token list, revoke
)

// withStores runs fn on YDB's stores when YDB_CONNECTION_STRING is set,
// else the embedded ones under the data directory. Unless create, a
// missing embedded store is an error: an empty one would answer as if the
// service were idle and had no tokens.
func withStores(ctx context.Context, getenv func(string) string, create bool, fn func(store.Set) error) (err error) {
	if dsn := getenv("YDB_CONNECTION_STRING"); dsn != "" {
		openCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		stores, err := ydb.OpenSet(openCtx, dsn, clock.System())
		if err != nil {
			return err
		}
		defer func() { _ = stores.Close() }()
		return fn(stores)
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
	stores, err := sqlite.OpenSet(ctx, path, clock.System())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := stores.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	return fn(stores)
}

// storeExists tells people where the store was looked for, if it is not.
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
