package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
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

func TestUnknownCommandIsAUsageError(t *testing.T) {
	require.ErrorIs(t, run(context.Background(), nil, env(nil), &bytes.Buffer{}), errUsage)
	require.ErrorIs(t, run(context.Background(), []string{"frobnicate"}, env(nil), &bytes.Buffer{}), errUsage)
}

func TestDataDirDefaultsToData(t *testing.T) {
	require.Equal(t, "data", dataDir(env(nil)))
	require.Equal(t, "/srv/x", dataDir(env(map[string]string{"DATA_DIR": "/srv/x"})))
}
