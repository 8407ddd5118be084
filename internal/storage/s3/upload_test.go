package s3_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3test"
)

const mib = 1 << 20

func withParts(size int64, concurrency int) func(*storeSpec) {
	return func(c *storeSpec) { c.partSize, c.concurrency = size, concurrency }
}

func TestUpload(t *testing.T) {
	ctx := context.Background()

	t.Run("a stream of more than two parts round-trips and creates once", func(t *testing.T) {
		srv := s3test.Start(t)
		created := recordCreates(srv)
		rec, url := startRecorder(t, srv.Handler())
		st := mustStore(t, srv, withEndpoint(url), withParts(5*mib, 2))
		const size = 12*mib + 12345 // three parts: 5, 5 and a bit over 2 MiB

		n, err := st.Upload(ctx, "jobs/1/audio.ogg", newGen(size), "audio/ogg")
		require.NoError(t, err)
		require.Equal(t, int64(size), n)
		require.Equal(t, genBytes(t, size), srv.Object(t, "jobs/1/audio.ogg"))
		require.Equal(t, []createdEvent{{srv.Bucket, "jobs/1/audio.ogg", size}}, created())
		require.Zero(t, srv.PendingUploads(t))

		info, err := st.Head(ctx, "jobs/1/audio.ogg")
		require.NoError(t, err)
		require.NotEmpty(t, info.ETag, "the store names the content")
		info.ETag = ""
		require.Equal(t, s3.ObjectInfo{Size: size, ContentType: "audio/ogg"}, info)

		var parts int
		for _, r := range rec.requests() {
			if r.Method == http.MethodPut && strings.Contains(r.Query, "partNumber=") {
				parts++
			}
		}
		require.Equal(t, 3, parts, "parts uploaded")
	})

	t.Run("an empty reader uploads an empty object", func(t *testing.T) {
		srv := s3test.Start(t)
		created := recordCreates(srv)
		st := mustStore(t, srv)

		n, err := st.Upload(ctx, "jobs/1/empty", strings.NewReader(""), "")
		require.NoError(t, err)
		require.Zero(t, n)
		info, err := st.Head(ctx, "jobs/1/empty")
		require.NoError(t, err)
		require.Zero(t, info.Size)
		require.Equal(t, []createdEvent{{srv.Bucket, "jobs/1/empty", 0}}, created())
	})

	t.Run("a stream shorter than a part is one PUT", func(t *testing.T) {
		srv := s3test.Start(t)
		rec, url := startRecorder(t, srv.Handler())
		st := mustStore(t, srv, withEndpoint(url))

		n, err := st.Upload(ctx, "jobs/1/small", newGen(1000), "audio/ogg")
		require.NoError(t, err)
		require.Equal(t, int64(1000), n)
		require.Equal(t, genBytes(t, 1000), srv.Object(t, "jobs/1/small"))
		reqs := rec.requests()
		require.Len(t, reqs, 1)
		require.Equal(t, http.MethodPut, reqs[0].Method)
		require.NotContains(t, reqs[0].Query, "upload")
	})

	t.Run("a failing reader aborts the upload and keeps its error's kind", func(t *testing.T) {
		srv := s3test.Start(t)
		created := recordCreates(srv)
		st := mustStore(t, srv, withParts(5*mib, 2))
		bad := errs.New(errs.Permanent, "no_audio_stream", "the file has no audio")
		r := io.MultiReader(newGen(11*mib), errReader{bad})

		n, err := st.Upload(ctx, "jobs/1/broken", r, "")
		require.Zero(t, n)
		requireKind(t, err, errs.Permanent, "no_audio_stream")
		require.ErrorIs(t, err, bad)
		require.False(t, srv.Has("jobs/1/broken"))
		require.Zero(t, srv.PendingUploads(t), "the multipart upload must be aborted")
		require.Empty(t, created())
	})

	t.Run("a cancelled context aborts the upload all the same", func(t *testing.T) {
		srv := s3test.Start(t)
		created := recordCreates(srv)
		st := mustStore(t, srv, withParts(5*mib, 2))
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Cancel once the upload is surely multipart (past the first part).
		r := &cancelAfter{r: newGen(20 * mib), after: 11 * mib, cancel: cancel}

		_, err := st.Upload(ctx, "jobs/1/cancelled", r, "")
		requireKind(t, err, errs.Unavailable, "storage_unavailable")
		require.False(t, srv.Has("jobs/1/cancelled"))
		require.Zero(t, srv.PendingUploads(t), "the multipart upload must be aborted")
		require.Empty(t, created())
	})
}

// TestChecksumsOnlyWhenRequired checks the settings that keep the SDK from
// adding CRC32 checksums (which S3-compatible stores may refuse) to what it
// sends, and from asking for them back.
func TestChecksumsOnlyWhenRequired(t *testing.T) {
	srv := s3test.Start(t)
	rec, url := startRecorder(t, srv.Handler())
	st := mustStore(t, srv, withEndpoint(url), withParts(5*mib, 2))
	ctx := context.Background()

	require.NoError(t, st.Put(ctx, "a", []byte("small"), "text/plain"))
	_, err := st.Upload(ctx, "b", newGen(11*mib), "")
	require.NoError(t, err)
	_, err = st.Upload(ctx, "c", newGen(10), "")
	require.NoError(t, err)
	rc, err := st.Get(ctx, "a")
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	_, err = st.Head(ctx, "b")
	require.NoError(t, err)

	reqs := rec.requests()
	require.GreaterOrEqual(t, len(reqs), 8, "put, create, 3 parts, complete, put, get, head")
	for _, r := range reqs {
		for name, values := range r.Header {
			lower := strings.ToLower(name)
			require.False(t, strings.HasPrefix(lower, "x-amz-checksum"), "%s %s sent %s: %v", r.Method, r.Query, name, values)
			require.NotEqual(t, "x-amz-sdk-checksum-algorithm", lower, "%s %s", r.Method, r.Query)
			require.NotEqual(t, "x-amz-trailer", lower, "%s %s", r.Method, r.Query)
		}
		require.NotContains(t, r.Header.Get("Content-Encoding"), "aws-chunked", "%s %s", r.Method, r.Query)
		require.NotContains(t, strings.ToLower(r.Query), "checksum", "%s %s", r.Method, r.Query)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// cancelAfter cancels after handing out `after` bytes and then keeps going,
// as a source that does not watch the context would.
type cancelAfter struct {
	r      io.Reader
	read   int64
	after  int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	if c.read >= c.after {
		c.cancel()
	}
	return n, err
}
