package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/store/sqlite"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestMigrateCreatesTheStoreAndIsRepeatable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")
	for i := 0; i < 2; i++ {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), []string{"migrate"}, env(map[string]string{"DATA_DIR": dir}), &out))
		require.Contains(t, out.String(), fmt.Sprintf("schema version %d", sqlite.SchemaVersion()))
	}
	_, err := os.Stat(filepath.Join(dir, DBFile))
	require.NoError(t, err)
}

// A bad JOB_RETENTION stops a YDB migrate before it connects.
func TestMigrateYDBRefusesABadRetention(t *testing.T) {
	err := run(context.Background(), []string{"migrate"}, env(map[string]string{
		"YDB_CONNECTION_STRING": "grpc://127.0.0.1:1/local", "JOB_RETENTION": "forever",
	}), &bytes.Buffer{})
	require.ErrorContains(t, err, "JOB_RETENTION")
}

func TestLocalRefusesABadInterval(t *testing.T) {
	err := run(context.Background(), []string{"local"}, env(map[string]string{"POLL_INTERVAL": "soon"}), &bytes.Buffer{})
	require.ErrorContains(t, err, "POLL_INTERVAL")
}

// Every command refuses a flag or an argument it does not know, before it
// does anything: no store is made, nothing runs.
func TestEveryCommandRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, args := range [][]string{
		{"local", "--bogus"},
		{"local", "extra"},
		{"migrate", "--bogus"},
		{"migrate", "extra"},
		{"migrate", "--plan", "extra"},
		{"migrate", "--timeout", "soon"},
		{"migrate", "--timeout", "0s"},
		{"help", "--bogus"},
		{"help", "extra"},
		{"token", "create", "--name", "ci", "--bogus"},
		{"token", "list", "--bogus"},
		{"token", "revoke", "--bogus"},
		{"token", "revoke", "01jd0m3y8k9q2r5t7v4w6x8z0a", "--bogus"},
		{"token", "help", "--bogus"},
		{"status", "--bogus"},
		{"status", "extra"},
		{"status", "--json", "extra"},
		{"status", "--json=maybe"},
		{"selftest", "--bogus"},
		{"selftest", "extra"},
		{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "extra"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		var out bytes.Buffer
		err := run(context.Background(), args, env(map[string]string{"DATA_DIR": dir}), &out)
		require.ErrorIs(t, err, errUsage, "%q", args)
		require.Empty(t, out.String(), "%q", args)
		_, statErr := os.Stat(dir)
		require.ErrorIs(t, statErr, os.ErrNotExist, "%q made the data directory", args)
	}
}

// Without a database, migrate --plan prints what a new YDB database
// needs, one operation a line, then how many: at most 20. It makes no
// store.
func TestMigratePlanOfANewDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"migrate", "--plan", "--timeout", "1m"}, env(map[string]string{"DATA_DIR": dir}), &out))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	require.Regexp(t, `^\d+ schema operations$`, last)
	n, err := strconv.Atoi(strings.Fields(last)[0])
	require.NoError(t, err)
	require.Equal(t, len(lines)-1, n, "one operation a line")
	require.LessOrEqual(t, n, 20)
	require.Equal(t, "list the tables", lines[0])
	for _, l := range lines[1 : len(lines)-1] {
		require.True(t, strings.HasPrefix(l, "CREATE TABLE IF NOT EXISTS "), l)
	}
	_, statErr := os.Stat(dir)
	require.ErrorIs(t, statErr, os.ErrNotExist)
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	require.ErrorIs(t, run(context.Background(), nil, env(nil), &bytes.Buffer{}), errUsage)
	require.ErrorIs(t, run(context.Background(), []string{"frobnicate"}, env(nil), &bytes.Buffer{}), errUsage)
}

func TestDataDirDefaultsToData(t *testing.T) {
	require.Equal(t, "data", dataDir(env(nil)))
	require.Equal(t, "/srv/x", dataDir(env(map[string]string{"DATA_DIR": "/srv/x"})))
}
