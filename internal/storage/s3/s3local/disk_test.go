package s3local_test

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3local"
)

// Objects on disk outlive the server: a second server on the same
// directory serves what the first one stored.
func TestOnDiskObjectsOutliveTheServer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "objects")
	ctx := context.Background()
	start := func() (*s3.Store, *s3local.Server) {
		o := testKey()
		o.Dir = dir
		srv, err := s3local.New("local", o)
		require.NoError(t, err)
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(hs.Close)
		srv.URL = hs.URL
		st, err := s3.New(srv.Config())
		require.NoError(t, err)
		return st, srv
	}
	st, srv := start()
	var created []string
	srv.OnCreate(func(_, key string, _ int64) { created = append(created, key) })
	require.NoError(t, st.Put(ctx, "sources/a", []byte("kept"), "text/plain"))
	require.Equal(t, []string{"sources/a"}, created)

	require.NoError(t, st.Put(ctx, "results/b.json", []byte("{}"), "application/json"))
	keys, err := srv.Keys("sources/")
	require.NoError(t, err)
	require.Equal(t, []string{"sources/a"}, keys)

	again, _ := start()
	r, err := again.Get(ctx, "sources/a")
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "kept", string(b))
}
