package speechkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
)

// metadataServer is a fake of the metadata service: it hands out tokens
// "t1.token-1", "t1.token-2", … with the lifetime in ttl, or fails while
// failing is set.
type metadataServer struct {
	*httptest.Server
	fetches atomic.Int32
	failing atomic.Bool
	ttl     atomic.Int64 // seconds
}

func startMetadata(t *testing.T) *metadataServer {
	t.Helper()
	m := &metadataServer{}
	m.ttl.Store(43200)
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "missing Metadata-Flavor", http.StatusForbidden)
			return
		}
		if m.failing.Load() {
			http.Error(w, "metadata is down", http.StatusServiceUnavailable)
			return
		}
		n := m.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"access_token": fmt.Sprintf("t1.token-%d", n),
			"expires_in":   m.ttl.Load(),
			"token_type":   "Bearer",
		})
	}))
	t.Cleanup(m.Close)
	return m
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// iamConfig is srv's configuration with the API key swapped for IAM tokens
// from meta.
func iamConfig(srv *speechkittest.Server, meta *metadataServer, clk clock.Clock) speechkit.Config {
	cfg := srv.Config()
	cfg.APIKey = ""
	cfg.MetadataURL = meta.URL
	cfg.FolderID = "b1gfolder"
	cfg.Clock = clk
	return cfg
}

func TestAPIKey(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	id := mustSubmit(t, c, uriRequest)
	_, err := c.Check(context.Background(), id)
	require.NoError(t, err)
	_, err = c.Result(context.Background(), id)
	require.NoError(t, err)
	require.NoError(t, c.Delete(context.Background(), id))

	calls := srv.Calls()
	require.Len(t, calls, 4)
	ids := map[string]bool{}
	for _, call := range calls {
		require.Equal(t, "Api-Key "+speechkittest.TestKey, call.Authorization, call.Method)
		require.Empty(t, call.FolderID, "x-folder-id goes only with an IAM token")
		require.NotEmpty(t, call.RequestID, call.Method)
		ids[call.RequestID] = true
	}
	require.Len(t, ids, 4, "every call has its own x-client-request-id")
}

func TestIAMToken(t *testing.T) {
	t.Run("one token serves many calls and carries the folder", func(t *testing.T) {
		srv := speechkittest.Start(t)
		meta := startMetadata(t)
		c := mustClient(t, iamConfig(srv, meta, clocktest.NewFake(t0)))

		for i := 0; i < 3; i++ {
			id := mustSubmit(t, c, uriRequest)
			_, err := c.Check(context.Background(), id)
			require.NoError(t, err)
		}

		require.Equal(t, int32(1), meta.fetches.Load())
		for _, call := range srv.Calls() {
			require.Equal(t, "Bearer t1.token-1", call.Authorization)
			require.Equal(t, "b1gfolder", call.FolderID)
		}
	})

	t.Run("concurrent first calls fetch one token", func(t *testing.T) {
		srv := speechkittest.Start(t)
		meta := startMetadata(t)
		c := mustClient(t, iamConfig(srv, meta, clocktest.NewFake(t0)))

		var wg sync.WaitGroup
		failures := make(chan error, 16)
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, err := c.Submit(context.Background(), uriRequest)
				if err == nil {
					_, err = c.Check(context.Background(), id)
				}
				if err != nil {
					failures <- err
				}
			}()
		}
		wg.Wait()
		close(failures)
		for err := range failures {
			require.NoError(t, err)
		}

		require.Equal(t, int32(1), meta.fetches.Load())
		require.Equal(t, 16, srv.RecognizeCalls())
	})

	t.Run("a token is refreshed after an hour and before it expires", func(t *testing.T) {
		srv := speechkittest.Start(t)
		meta := startMetadata(t)
		clk := clocktest.NewFake(t0)
		c := mustClient(t, iamConfig(srv, meta, clk))

		mustSubmit(t, c, uriRequest)
		clk.Advance(59 * time.Minute)
		mustSubmit(t, c, uriRequest)
		require.Equal(t, int32(1), meta.fetches.Load())

		clk.Advance(time.Minute)
		mustSubmit(t, c, uriRequest)
		require.Equal(t, int32(2), meta.fetches.Load())

		// A short-lived token is refreshed 5 minutes before it expires.
		meta.ttl.Store(int64((20 * time.Minute).Seconds()))
		clk.Advance(time.Hour)
		mustSubmit(t, c, uriRequest) // token-3, refresh due at +15 min
		clk.Advance(14 * time.Minute)
		mustSubmit(t, c, uriRequest)
		require.Equal(t, int32(3), meta.fetches.Load())
		clk.Advance(time.Minute)
		mustSubmit(t, c, uriRequest)
		require.Equal(t, int32(4), meta.fetches.Load())

		var auth []string
		for _, call := range srv.Calls() {
			auth = append(auth, call.Authorization)
		}
		require.Equal(t, []string{
			"Bearer t1.token-1", "Bearer t1.token-1", "Bearer t1.token-2",
			"Bearer t1.token-3", "Bearer t1.token-3", "Bearer t1.token-4",
		}, auth)
	})

	t.Run("a failed refresh keeps using a token that has not expired", func(t *testing.T) {
		srv := speechkittest.Start(t)
		meta := startMetadata(t)
		clk := clocktest.NewFake(t0)
		c := mustClient(t, iamConfig(srv, meta, clk))
		mustSubmit(t, c, uriRequest)

		meta.failing.Store(true)
		clk.Advance(2 * time.Hour)
		mustSubmit(t, c, uriRequest)
		require.Equal(t, "Bearer t1.token-1", srv.Calls()[1].Authorization)

		clk.Advance(11 * time.Hour) // past the token's 12 hours
		_, err := c.Submit(context.Background(), uriRequest)
		requireErr(t, err, errs.Unavailable, "speechkit_auth_unavailable")
		require.Equal(t, 2, srv.RecognizeCalls(), "no call goes out without a token")
	})

	t.Run("no token at all is unavailable", func(t *testing.T) {
		srv := speechkittest.Start(t)
		meta := startMetadata(t)
		meta.failing.Store(true)
		c := mustClient(t, iamConfig(srv, meta, clocktest.NewFake(t0)))

		_, err := c.Check(context.Background(), "someoperation")

		requireErr(t, err, errs.Unavailable, "speechkit_auth_unavailable")
		require.Empty(t, srv.Calls())
	})

	t.Run("a metadata answer that is not a token is unavailable", func(t *testing.T) {
		srv := speechkittest.Start(t)
		meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"access_token":"t1.half-a-token`))
		}))
		t.Cleanup(meta.Close)
		cfg := srv.Config()
		cfg.APIKey, cfg.MetadataURL = "", meta.URL
		c := mustClient(t, cfg)

		_, err := c.Submit(context.Background(), uriRequest)

		requireErr(t, err, errs.Unavailable, "speechkit_auth_unavailable")
		require.NotContains(t, err.Error(), "half-a-token")
	})
}

func TestSecretsNeverInErrors(t *testing.T) {
	t.Run("the API key", func(t *testing.T) {
		srv := speechkittest.Start(t)
		// A server that echoes what it was sent must not leak it through us.
		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			return speechkittest.Plan{Err: status.Error(codes.PermissionDenied,
				"fake says key Api-Key "+speechkittest.TestKey+" may not do this")}
		})
		c := mustClient(t, srv.Config())

		_, err := c.Submit(context.Background(), uriRequest)

		requireErr(t, err, errs.Unavailable, speechkit.CodeAccessDenied)
		requireNoSecret(t, err, speechkittest.TestKey)
		require.Contains(t, err.Error(), "[redacted]")
		require.Equal(t, codes.PermissionDenied, status.Code(err), "the gRPC code survives the scrubbing")
	})

	t.Run("an IAM token", func(t *testing.T) {
		srv := speechkittest.Start(t)
		meta := startMetadata(t)
		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			return speechkittest.Plan{Err: status.Error(codes.Unauthenticated, "fake says token t1.token-1 has expired")}
		})
		c := mustClient(t, iamConfig(srv, meta, clocktest.NewFake(t0)))

		_, err := c.Submit(context.Background(), uriRequest)

		requireErr(t, err, errs.Unavailable, speechkit.CodeAccessDenied)
		requireNoSecret(t, err, "t1.token-1")
	})

	t.Run("inside a failed operation", func(t *testing.T) {
		srv := speechkittest.Start(t)
		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			return speechkittest.Plan{OpErr: status.New(codes.InvalidArgument, "fake says "+speechkittest.TestKey)}
		})
		c := mustClient(t, srv.Config())
		id := mustSubmit(t, c, uriRequest)

		_, err := c.Check(context.Background(), id)

		requireErr(t, err, errs.Permanent, speechkit.CodeRejected)
		requireNoSecret(t, err, speechkittest.TestKey)
	})
}

// requireNoSecret checks every text err shows: its message for people, its
// full text for logs, and the text of each error in its chain.
func requireNoSecret(t *testing.T, err error, secret string) {
	t.Helper()
	require.NotContains(t, errs.MessageOf(err), secret)
	for e := err; e != nil; {
		require.False(t, strings.Contains(e.Error(), secret), "%q holds the secret", e.Error())
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
}

// A metadata answer with a lifetime no IAM token has is not taken: with
// expires_in of 1e10 s the lifetime used to overflow to a negative one.
func TestIAMTokenWithAnImpossibleLifetimeIsUnavailable(t *testing.T) {
	srv := speechkittest.Start(t)
	meta := startMetadata(t)
	meta.ttl.Store(1e10)
	c := mustClient(t, iamConfig(srv, meta, clocktest.NewFake(t0)))

	_, err := c.Submit(context.Background(), uriRequest)

	requireErr(t, err, errs.Unavailable, "speechkit_auth_unavailable")
	require.Empty(t, srv.Calls(), "no call goes out with it")
}

// The client's Authorizer is the one its calls use: another API given it
// (Translate) shares the token cache, and its Scrub knows the tokens handed
// out.
func TestAuthorizerIsTheClients(t *testing.T) {
	srv := speechkittest.Start(t)
	meta := startMetadata(t)
	c := mustClient(t, iamConfig(srv, meta, clocktest.NewFake(t0)))
	mustSubmit(t, c, uriRequest)

	value, folder, err := c.Authorizer().Authorization(context.Background())

	require.NoError(t, err)
	require.Equal(t, "Bearer t1.token-1", value)
	require.Equal(t, "b1gfolder", folder)
	require.Equal(t, int32(1), meta.fetches.Load(), "one token for both")
	require.Equal(t, "token [redacted] here", c.Authorizer().Scrub("token t1.token-1 here"))
}

func TestNewAuthorizer(t *testing.T) {
	a, err := speechkit.NewAuthorizer("the-key", "b1gfolder", "", nil)
	require.NoError(t, err)
	value, folder, err := a.Authorization(context.Background())
	require.NoError(t, err)
	require.Equal(t, "Api-Key the-key", value)
	require.Empty(t, folder, "the folder goes only with an IAM token")
	require.Equal(t, "a [redacted] b", a.Scrub("a the-key b"))

	_, err = speechkit.NewAuthorizer("", "b1gfolder", "not a url", nil)
	require.Error(t, err)
}
