package s3local_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/clock/clocktest"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3local"
	"transcriber/internal/storage/s3/s3test"
)

// strict is a verifying server whose clock the test moves, and a Store
// that signs with its key (presigning on the same clock).
type strict struct {
	srv   *s3test.Server
	clock *clocktest.Fake
	store *s3.Store
}

func startStrict(t *testing.T, origins ...string) *strict {
	t.Helper()
	fake := clocktest.NewFake(clock.System().Now())
	v := testKey()
	v.Clock = fake
	v.AllowedOrigins = origins
	srv := s3test.StartVerifying(t, v)
	cfg := srv.Config()
	cfg.Clock = fake
	store, err := s3.New(cfg)
	require.NoError(t, err)
	return &strict{srv: srv, clock: fake, store: store}
}

// s3err is an S3 error answer.
type s3err struct {
	Status      int
	ContentType string
	Code        string
	Message     string
}

// send sends req and reads an error answer (or just the status).
func send(t *testing.T, req *http.Request) s3err {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := s3err{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	if resp.StatusCode >= 300 && len(body) > 0 {
		var doc struct{ Code, Message string }
		require.NoError(t, xml.Unmarshal(body, &doc), "%s", body)
		out.Code, out.Message = doc.Code, doc.Message
	}
	return out
}

func newRequest(t *testing.T, method, u string, body []byte, header map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, u, bytes.NewReader(body))
	require.NoError(t, err)
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

// signed is a request signed in its headers with the test key, as any
// SigV4 client (the AWS SDK's signer) signs it.
func signed(t *testing.T, s *strict, method, path string, body []byte, header map[string]string) *http.Request {
	t.Helper()
	req := newRequest(t, method, s.srv.URL+path, body, header)
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	k := testKey()
	err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey},
		req, hash, "s3", s3.DefaultRegion, s.clock.Now(), func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	require.NoError(t, err)
	return req
}

// Everything the project's client sends is accepted: PUT, HEAD, GET,
// DELETE, a multipart upload, a copy, and presigned PUTs and GETs.
func TestVerifyingServerAcceptsTheClient(t *testing.T) {
	s := startStrict(t)
	created := record(s.srv)
	ctx := context.Background()

	require.NoError(t, s.store.Put(ctx, "sources/a b+c", []byte("hello"), "text/plain"))
	info, err := s.store.Head(ctx, "sources/a b+c")
	require.NoError(t, err)
	require.Equal(t, int64(5), info.Size)
	r, err := s.store.Get(ctx, "sources/a b+c")
	require.NoError(t, err)
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.Equal(t, "hello", string(b))

	big := bytes.Repeat([]byte("0123456789abcdef"), (12<<20)/16) // two parts and a bit
	big = append(big, "tail"...)
	n, err := s.store.Upload(ctx, "audio/x/000.ogg", bytes.NewReader(big), "audio/ogg")
	require.NoError(t, err)
	require.Equal(t, int64(len(big)), n)
	require.Equal(t, big, s.srv.Object(t, "audio/x/000.ogg"))

	require.NoError(t, s.store.Copy(ctx, "sources/a b+c", "audio/x/source", info.ETag))
	require.Equal(t, []byte("hello"), s.srv.Object(t, "audio/x/source"))

	put, err := s.store.PresignPut(ctx, "sources/page", 5, "audio/ogg", time.Minute)
	require.NoError(t, err)
	req := newRequest(t, put.Method, put.URL, []byte("voice"), put.Headers)
	require.Equal(t, http.StatusOK, send(t, req).Status)
	get, err := s.store.PresignGet(ctx, "sources/page", time.Minute)
	require.NoError(t, err)
	resp, err := http.Get(get) //nolint:noctx // a plain GET, as a browser makes it
	require.NoError(t, err)
	b, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "voice", string(b))

	require.NoError(t, s.store.Delete(ctx, "sources/page"))
	require.False(t, s.srv.Has("sources/page"))
	require.Equal(t, []event{
		{s.srv.Bucket, "sources/a b+c", 5},
		{s.srv.Bucket, "audio/x/000.ogg", int64(len(big))},
		{s.srv.Bucket, "audio/x/source", 5},
		{s.srv.Bucket, "sources/page", 5},
	}, created())
}

// Requests without a valid signature are refused with S3's error, and
// change nothing.
func TestVerifyingServerRefuses(t *testing.T) {
	s := startStrict(t)
	created := record(s.srv)
	ctx := context.Background()
	require.NoError(t, s.store.Put(ctx, "results/j.json", []byte(`{"ok":true}`), "application/json"))
	obj := s.srv.URL + "/" + s.srv.Bucket + "/"
	put, err := s.store.PresignPut(ctx, "sources/j", 5, "audio/ogg", time.Minute)
	require.NoError(t, err)

	forbidden := func(t *testing.T, req *http.Request, code string) {
		t.Helper()
		got := send(t, req)
		require.Equal(t, http.StatusForbidden, got.Status, "%+v", got)
		require.Equal(t, "application/xml", got.ContentType)
		require.Equal(t, code, got.Code, "%+v", got)
	}

	t.Run("unsigned requests", func(t *testing.T) {
		forbidden(t, newRequest(t, http.MethodGet, obj+"results/j.json", nil, nil), "AccessDenied")
		forbidden(t, newRequest(t, http.MethodPut, obj+"results/j.json", []byte("{}"), nil), "AccessDenied")
		forbidden(t, newRequest(t, http.MethodGet, obj+"?list-type=2&prefix=results/", nil, nil), "AccessDenied")
		forbidden(t, newRequest(t, http.MethodDelete, obj+"results/j.json", nil, nil), "AccessDenied")
		forbidden(t, newRequest(t, http.MethodPost, obj+"results/k?uploads", nil, nil), "AccessDenied")
		forbidden(t, newRequest(t, http.MethodOptions, obj+"results/j.json", nil, nil), "AccessDenied")
		got := send(t, newRequest(t, http.MethodHead, obj+"results/j.json", nil, nil))
		require.Equal(t, http.StatusForbidden, got.Status)
	})

	t.Run("a forged signature", func(t *testing.T) {
		u := put.URL[:len(put.URL)-1] + map[bool]string{true: "1", false: "0"}[!strings.HasSuffix(put.URL, "1")]
		forbidden(t, newRequest(t, put.Method, u, []byte("voice"), put.Headers), "SignatureDoesNotMatch")
	})

	t.Run("another key in the path", func(t *testing.T) {
		u := strings.Replace(put.URL, "/sources/j?", "/results/j.json?", 1)
		require.NotEqual(t, put.URL, u)
		forbidden(t, newRequest(t, put.Method, u, []byte("voice"), put.Headers), "SignatureDoesNotMatch")
	})

	t.Run("another length than the signed one", func(t *testing.T) {
		forbidden(t, newRequest(t, put.Method, put.URL, []byte("voices"), nil), "SignatureDoesNotMatch")
		forbidden(t, newRequest(t, put.Method, put.URL, []byte("voi"), nil), "SignatureDoesNotMatch")
	})

	t.Run("another content type than the signed one", func(t *testing.T) {
		forbidden(t, newRequest(t, put.Method, put.URL, []byte("voice"), map[string]string{"Content-Type": "text/html"}), "SignatureDoesNotMatch")
	})

	t.Run("an unsigned x-amz header", func(t *testing.T) {
		// A presigned PUT of sources/j made into a copy of another object.
		h := map[string]string{"X-Amz-Copy-Source": "/" + s.srv.Bucket + "/results/j.json"}
		for k, v := range put.Headers {
			h[k] = v
		}
		forbidden(t, newRequest(t, put.Method, put.URL, []byte("voice"), h), "AccessDenied")
		require.False(t, s.srv.Has("sources/j"), "nothing was written")
	})

	t.Run("host not signed", func(t *testing.T) {
		u := strings.Replace(put.URL, "X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost", "X-Amz-SignedHeaders=content-length%3Bcontent-type", 1)
		require.NotEqual(t, put.URL, u)
		forbidden(t, newRequest(t, put.Method, u, []byte("voice"), put.Headers), "AccessDenied")
	})

	t.Run("an expired URL", func(t *testing.T) {
		get, err := s.store.PresignGet(ctx, "results/j.json", time.Minute)
		require.NoError(t, err)
		s.clock.Advance(59 * time.Second)
		require.Equal(t, http.StatusOK, send(t, newRequest(t, http.MethodGet, get, nil, nil)).Status, "valid until it expires")
		s.clock.Advance(time.Second)
		req := newRequest(t, http.MethodGet, get, nil, nil)
		got := send(t, req)
		require.Equal(t, s3err{http.StatusForbidden, "application/xml", "AccessDenied", "Request has expired"}, got)
		s.clock.Set(clock.System().Now())
	})

	t.Run("a lifetime over 7 days", func(t *testing.T) {
		u := strings.Replace(put.URL, "X-Amz-Expires=60", "X-Amz-Expires=604801", 1)
		require.NotEqual(t, put.URL, u)
		got := send(t, newRequest(t, put.Method, u, []byte("voice"), put.Headers))
		require.Equal(t, http.StatusBadRequest, got.Status)
		require.Equal(t, "AuthorizationQueryParametersError", got.Code)
	})

	t.Run("another key id or secret", func(t *testing.T) {
		for code, mod := range map[string]func(*s3.Config){
			"InvalidAccessKeyId":    func(c *s3.Config) { c.AccessKeyID = "someone-else" },
			"SignatureDoesNotMatch": func(c *s3.Config) { c.SecretAccessKey = "a-guessed-secret" },
		} {
			cfg := s.srv.Config()
			mod(&cfg)
			other, err := s3.New(cfg)
			require.NoError(t, err)
			_, err = other.Get(ctx, "results/j.json")
			require.ErrorContains(t, err, "status 403, code "+code)
			err = other.Put(ctx, "results/j.json", []byte("{}"), "")
			require.ErrorContains(t, err, "status 403, code "+code)
			u, err := other.PresignGet(ctx, "results/j.json", time.Minute)
			require.NoError(t, err)
			forbidden(t, newRequest(t, http.MethodGet, u, nil, nil), code)
		}
	})

	t.Run("a header-signed request changed on the way", func(t *testing.T) {
		req := signed(t, s, http.MethodPut, "/"+s.srv.Bucket+"/results/j.json", []byte(`{"ok":1}`), nil)
		req.Body = io.NopCloser(strings.NewReader(`{"no":1}`))
		got := send(t, req)
		require.Equal(t, http.StatusBadRequest, got.Status)
		require.Equal(t, "XAmzContentSHA256Mismatch", got.Code)

		req = signed(t, s, http.MethodGet, "/"+s.srv.Bucket+"/results/j.json", nil, nil)
		req.URL.Path = "/" + s.srv.Bucket + "/sources/j"
		forbidden(t, req, "SignatureDoesNotMatch")

		req = signed(t, s, http.MethodDelete, "/"+s.srv.Bucket+"/results/j.json", nil, nil)
		req.Header.Set("Authorization", strings.Replace(req.Header.Get("Authorization"), "x-amz-content-sha256;", "", 1))
		forbidden(t, req, "AccessDenied")
	})

	t.Run("a large header-signed body changed on the way", func(t *testing.T) {
		body := bytes.Repeat([]byte("a"), 17<<20) // held in a file while checked
		req := signed(t, s, http.MethodPut, "/"+s.srv.Bucket+"/results/j.json", body, nil)
		changed := bytes.Clone(body)
		changed[len(changed)-1] = 'b'
		req.Body = io.NopCloser(bytes.NewReader(changed))
		got := send(t, req)
		require.Equal(t, http.StatusBadRequest, got.Status)
		require.Equal(t, "XAmzContentSHA256Mismatch", got.Code)

		req = signed(t, s, http.MethodPut, "/"+s.srv.Bucket+"/results/large", body, nil)
		require.Equal(t, http.StatusOK, send(t, req).Status)
		require.Equal(t, body, s.srv.Object(t, "results/large"))
		req = signed(t, s, http.MethodDelete, "/"+s.srv.Bucket+"/results/large", nil, nil)
		require.Equal(t, http.StatusNoContent, send(t, req).Status)
	})

	t.Run("a header-signed request too old", func(t *testing.T) {
		req := signed(t, s, http.MethodGet, "/"+s.srv.Bucket+"/results/j.json", nil, nil)
		s.clock.Advance(16 * time.Minute)
		forbidden(t, req, "RequestTimeTooSkewed")
		s.clock.Set(clock.System().Now())
	})

	t.Run("a header-signed request from a clock ahead", func(t *testing.T) {
		now := s.clock.Now()
		s.clock.Set(now.Add(14 * time.Minute))
		req := signed(t, s, http.MethodGet, "/"+s.srv.Bucket+"/results/j.json", nil, nil)
		s.clock.Set(now)
		require.Equal(t, http.StatusOK, send(t, req).Status, "within 15 minutes")
		s.clock.Set(now.Add(16 * time.Minute))
		req = signed(t, s, http.MethodGet, "/"+s.srv.Bucket+"/results/j.json", nil, nil)
		s.clock.Set(now)
		got := send(t, req)
		require.Equal(t, s3err{http.StatusForbidden, "application/xml", "RequestTimeTooSkewed",
			"The difference between the request time and the current time is too large."}, got)
		s.clock.Set(clock.System().Now())
	})

	t.Run("a URL presigned by a clock ahead", func(t *testing.T) {
		// Valid from its X-Amz-Date on, 15 minutes of skew allowed; before
		// that AWS S3 answers AccessDenied, "Request is not yet valid".
		now := s.clock.Now()
		s.clock.Set(now.Add(14 * time.Minute))
		soon, err := s.store.PresignGet(ctx, "results/j.json", time.Hour)
		require.NoError(t, err)
		s.clock.Set(now.Add(16 * time.Minute))
		later, err := s.store.PresignGet(ctx, "results/j.json", time.Hour)
		require.NoError(t, err)
		s.clock.Set(now)
		require.Equal(t, http.StatusOK, send(t, newRequest(t, http.MethodGet, soon, nil, nil)).Status, "within 15 minutes")
		got := send(t, newRequest(t, http.MethodGet, later, nil, nil))
		require.Equal(t, s3err{http.StatusForbidden, "application/xml", "AccessDenied", "Request is not yet valid"}, got)
		s.clock.Set(clock.System().Now())
	})

	t.Run("a malformed Authorization header", func(t *testing.T) {
		for name, edit := range map[string]func(string) string{
			"another region": func(a string) string { return strings.Replace(a, "/"+s3.DefaultRegion+"/", "/us-east-1/", 1) },
			"another day": func(a string) string {
				return strings.Replace(a, "/"+s.clock.Now().UTC().Format("20060102")+"/", "/20200101/", 1)
			},
			"no signature": func(a string) string { a, _, _ = strings.Cut(a, ", Signature="); return a },
			"a bare word":  func(a string) string { return a + ", Extra" },
		} {
			req := signed(t, s, http.MethodGet, "/"+s.srv.Bucket+"/results/j.json", nil, nil)
			a := req.Header.Get("Authorization")
			require.NotEqual(t, a, edit(a), name)
			req.Header.Set("Authorization", edit(a))
			got := send(t, req)
			require.Equal(t, http.StatusBadRequest, got.Status, "%s: %+v", name, got)
			require.Equal(t, "AuthorizationHeaderMalformed", got.Code, "%s: %+v", name, got)
		}
	})

	t.Run("a malformed presigned query", func(t *testing.T) {
		get, err := s.store.PresignGet(ctx, "results/j.json", time.Minute)
		require.NoError(t, err)
		for name, edit := range map[string]func(string) string{
			"another region":     func(u string) string { return strings.Replace(u, "%2F"+s3.DefaultRegion+"%2F", "%2Fus-east-1%2F", 1) },
			"no X-Amz-Date":      func(u string) string { return strings.Replace(u, "X-Amz-Date=", "X-Amz-Datum=", 1) },
			"a lifetime of 0":    func(u string) string { return strings.Replace(u, "X-Amz-Expires=60", "X-Amz-Expires=0", 1) },
			"another algorithm":  func(u string) string { return strings.Replace(u, "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA512", 1) },
			"a date not ISO8601": func(u string) string { return strings.Replace(u, "X-Amz-Date=", "X-Amz-Date=x", 1) },
		} {
			u := edit(get)
			require.NotEqual(t, get, u, name)
			got := send(t, newRequest(t, http.MethodGet, u, nil, nil))
			require.Equal(t, http.StatusBadRequest, got.Status, "%s: %+v", name, got)
			require.Equal(t, "AuthorizationQueryParametersError", got.Code, "%s: %+v", name, got)
		}
	})

	require.Equal(t, []byte(`{"ok":true}`), s.srv.Object(t, "results/j.json"), "nothing changed it")
	require.False(t, s.srv.Has("sources/j"))
	require.Len(t, created(), 2, "only the signed PUTs created objects")
}

// A browser's requests get CORS headers only from the origins allowed.
func TestVerifyingServerCORS(t *testing.T) {
	const page = "http://127.0.0.1:8080"
	s := startStrict(t, page)
	ctx := context.Background()
	for _, tc := range []struct {
		origin  string
		allowed bool
	}{{page, true}, {"https://evil.example", false}} {
		key := "sources/" + strconv.FormatBool(tc.allowed)
		put, err := s.store.PresignPut(ctx, key, 5, "", time.Minute)
		require.NoError(t, err)
		pre := newRequest(t, http.MethodOptions, put.URL, nil, map[string]string{"Origin": tc.origin, "Access-Control-Request-Method": http.MethodPut})
		resp, err := http.DefaultClient.Do(pre)
		require.NoError(t, err)
		_ = resp.Body.Close()
		if tc.allowed {
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, page, resp.Header.Get("Access-Control-Allow-Origin"))
		} else {
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
			require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
		}

		req := newRequest(t, put.Method, put.URL, []byte("voice"), map[string]string{"Origin": tc.origin})
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "the URL is the credential; CORS only keeps the answer from a page")
		if tc.allowed {
			require.Equal(t, page, resp.Header.Get("Access-Control-Allow-Origin"))
			require.Equal(t, "ETag", resp.Header.Get("Access-Control-Expose-Headers"))
		} else {
			require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
			require.Empty(t, resp.Header.Get("Access-Control-Expose-Headers"))
		}
	}
}

// A verifying server needs a key.
func TestVerifyingServerNeedsAKey(t *testing.T) {
	_, err := s3local.New("local", s3local.Options{AccessKeyID: "id"})
	require.Error(t, err)
}

// x-amz-copy-source-if-match is honoured by both servers: a copy of a
// source whose ETag changed is refused with 412 and creates nothing.
func TestCopyPrecondition(t *testing.T) {
	t.Run("lenient", func(t *testing.T) {
		srv := s3test.Start(t)
		created := record(srv)
		obj := srv.URL + "/" + srv.Bucket + "/"
		status, _ := do(t, http.MethodPut, obj+"sources/a%20b", []byte("first"), nil)
		require.Equal(t, http.StatusOK, status)
		etag := `"` + md5hex("first") + `"`
		status, body := do(t, http.MethodPut, obj+"audio/a/source", nil, map[string]string{
			"X-Amz-Copy-Source": "/" + srv.Bucket + "/sources/a%20b", "X-Amz-Copy-Source-If-Match": `"0123456789abcdef0123456789abcdef"`,
		})
		require.Equal(t, http.StatusPreconditionFailed, status, "%s", body)
		require.Contains(t, string(body), "<Code>PreconditionFailed</Code>")
		require.False(t, srv.Has("audio/a/source"))
		require.Len(t, created(), 1)

		status, body = do(t, http.MethodPut, obj+"audio/a/source", nil, map[string]string{
			"X-Amz-Copy-Source": "/" + srv.Bucket + "/sources/a%20b", "X-Amz-Copy-Source-If-Match": etag,
		})
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.Equal(t, []byte("first"), srv.Object(t, "audio/a/source"))
		require.Equal(t, event{srv.Bucket, "audio/a/source", 5}, created()[1], "a copy creates an object")

		status, _ = do(t, http.MethodPut, obj+"audio/a/other", nil, map[string]string{"X-Amz-Copy-Source": "nobucket"})
		require.Equal(t, http.StatusBadRequest, status)
		require.Len(t, created(), 2)
	})

	t.Run("verifying", func(t *testing.T) {
		s := startStrict(t)
		created := record(s.srv)
		ctx := context.Background()
		require.NoError(t, s.store.Put(ctx, "sources/x", []byte("first"), ""))
		info, err := s.store.Head(ctx, "sources/x")
		require.NoError(t, err)
		require.NoError(t, s.store.Put(ctx, "sources/x", []byte("second"), ""))
		copyReq := func(etag string) *http.Request {
			return signed(t, s, http.MethodPut, "/"+s.srv.Bucket+"/audio/x/source", nil, map[string]string{
				"X-Amz-Copy-Source": "/" + s.srv.Bucket + "/sources/x", "X-Amz-Copy-Source-If-Match": etag,
			})
		}
		got := send(t, copyReq(info.ETag))
		require.Equal(t, s3err{http.StatusPreconditionFailed, "application/xml", "PreconditionFailed",
			"At least one of the pre-conditions you specified did not hold"}, got)
		require.False(t, s.srv.Has("audio/x/source"))
		require.Len(t, created(), 2)

		now, err := s.store.Head(ctx, "sources/x")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, send(t, copyReq(now.ETag)).Status)
		require.Equal(t, []byte("second"), s.srv.Object(t, "audio/x/source"))
		require.Len(t, created(), 3)
	})
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
