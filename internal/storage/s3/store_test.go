package s3_test

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3test"
)

func TestNew(t *testing.T) {
	valid := s3.Config{Bucket: "transcriber-media", AccessKeyID: "id", SecretAccessKey: "secret"}

	t.Run("defaults make a usable store with no network call", func(t *testing.T) {
		st, err := s3.New(valid)
		require.NoError(t, err)
		require.Equal(t, "transcriber-media", st.Bucket())
		require.Equal(t, "https://storage.yandexcloud.net/transcriber-media/jobs/01j/input.ogg", st.URI("jobs/01j/input.ogg"))
	})

	t.Run("URI escapes each key segment and keeps the slashes", func(t *testing.T) {
		cfg := valid
		cfg.Endpoint = "http://127.0.0.1:9000/"
		st, err := s3.New(cfg)
		require.NoError(t, err)
		require.Equal(t, "http://127.0.0.1:9000/transcriber-media/a/b%20c/d%3Fe", st.URI("a/b c/d?e"))
	})

	bad := map[string]func(*s3.Config){
		"no bucket":               func(c *s3.Config) { c.Bucket = "" },
		"bucket with a slash":     func(c *s3.Config) { c.Bucket = "a/b" },
		"no key id":               func(c *s3.Config) { c.AccessKeyID = "" },
		"no secret":               func(c *s3.Config) { c.SecretAccessKey = "" },
		"endpoint without scheme": func(c *s3.Config) { c.Endpoint = "storage.yandexcloud.net" },
		"endpoint with a path":    func(c *s3.Config) { c.Endpoint = "https://storage.yandexcloud.net/bucket" },
		"endpoint not http":       func(c *s3.Config) { c.Endpoint = "ftp://storage.yandexcloud.net" },
	}
	for name, edit := range bad {
		t.Run("refuses "+name, func(t *testing.T) {
			cfg := valid
			edit(&cfg)
			_, err := s3.New(cfg)
			require.Error(t, err)
		})
	}
}

func TestPutGetHead(t *testing.T) {
	srv := s3test.Start(t)
	st := mustStore(t, srv)
	ctx := context.Background()

	t.Run("put then get returns the bytes", func(t *testing.T) {
		body := []byte(`{"text":"привет"}`)
		require.NoError(t, st.Put(ctx, "jobs/1/transcript.json", body, "application/json"))

		rc, err := st.Get(ctx, "jobs/1/transcript.json")
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		require.Equal(t, body, got)
		require.Equal(t, body, srv.Object(t, "jobs/1/transcript.json"))
	})

	t.Run("head shows size and content type", func(t *testing.T) {
		info, err := st.Head(ctx, "jobs/1/transcript.json")
		require.NoError(t, err)
		require.NotEmpty(t, info.ETag, "the store names the content")
		info.ETag = ""
		require.Equal(t, s3.ObjectInfo{Size: int64(len(`{"text":"привет"}`)), ContentType: "application/json"}, info)
	})

	t.Run("an empty put makes an empty object", func(t *testing.T) {
		require.NoError(t, st.Put(ctx, "jobs/1/empty", nil, ""))
		info, err := st.Head(ctx, "jobs/1/empty")
		require.NoError(t, err)
		require.Equal(t, int64(0), info.Size)
	})

	t.Run("delete removes the object", func(t *testing.T) {
		require.NoError(t, st.Delete(ctx, "jobs/1/transcript.json"))
		require.False(t, srv.Has("jobs/1/transcript.json"))
		_, err := st.Head(ctx, "jobs/1/transcript.json")
		requireKind(t, err, errs.NotFound, "object_not_found")
	})
}

func TestMissingObject(t *testing.T) {
	srv := s3test.Start(t)
	st := mustStore(t, srv)
	ctx := context.Background()
	const key = "jobs/01jmissing/input.ogg"
	secrets := []string{key, "01jmissing", srv.Bucket, srv.URL, "127.0.0.1"}

	t.Run("get is NotFound and names nothing", func(t *testing.T) {
		rc, err := st.Get(ctx, key)
		require.Nil(t, rc)
		requireKind(t, err, errs.NotFound, "object_not_found", secrets...)
	})
	t.Run("head is NotFound and names nothing", func(t *testing.T) {
		_, err := st.Head(ctx, key)
		requireKind(t, err, errs.NotFound, "object_not_found", secrets...)
	})
	t.Run("delete is not an error", func(t *testing.T) {
		require.NoError(t, st.Delete(ctx, key))
	})
	t.Run("an empty key is refused before any request", func(t *testing.T) {
		_, err := st.Head(ctx, "")
		requireKind(t, err, errs.Internal, "storage_failed")
		require.Error(t, st.Delete(ctx, ""))
	})
}
