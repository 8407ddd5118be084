package s3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/storage/s3"
	"transcriber/internal/storage/s3/s3test"
)

// The Store's presigned URLs and signed requests are checked against the
// AWS SDK (which the package used before, and which the store accepts): the
// SDK is a test dependency only.

// crossKeys are keys whose escaping could go wrong.
var crossKeys = []string{
	"jobs/01jabc/input.ogg",
	"with space/and  two spaces",
	"unicode/привет/日本語",
	"plus+sign/a+b",
	"equals=sign/a=b&c=d",
	"reserved/!*'();:@$,[]~",
	"percent/%41%2F",
}

// fixedPresigner makes the SDK presign at a time of ours, as the Store's
// clock does.
type fixedPresigner struct {
	signer *v4.Signer
	at     time.Time
}

func (p fixedPresigner) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request,
	payloadHash, service, region string, _ time.Time, optFns ...func(*v4.SignerOptions),
) (string, http.Header, error) {
	return p.signer.PresignHTTP(ctx, creds, r, payloadHash, service, region, p.at, optFns...)
}

// sdkPresigner is the presign client the package used to build, on cfg.
func sdkPresigner(cfg s3.Config, at time.Time) (*awss3.PresignClient, func(*awss3.PresignOptions)) {
	client := awss3.New(awss3.Options{
		Region:                     cfg.Region,
		BaseEndpoint:               aws.String(cfg.Endpoint),
		UsePathStyle:               cfg.PathStyle,
		Credentials:                credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	return awss3.NewPresignClient(client), func(o *awss3.PresignOptions) {
		o.Presigner = fixedPresigner{signer: signer, at: at}
	}
}

func TestPresignedURLsMatchTheSDK(t *testing.T) {
	ctx := context.Background()
	base := s3.Config{
		Region: s3.DefaultRegion, Bucket: "transcriber-media",
		AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	}
	configs := map[string]func(*s3.Config){
		"the default endpoint, virtual-hosted": func(*s3.Config) {},
		"the default endpoint, path style":     func(c *s3.Config) { c.PathStyle = true },
		"an IP endpoint (path style)":          func(c *s3.Config) { c.Endpoint = "http://127.0.0.1:9000" },
		"a named http endpoint":                func(c *s3.Config) { c.Endpoint = "http://localhost:9000" },
		"an explicit default port":             func(c *s3.Config) { c.Endpoint = "https://storage.yandexcloud.net:443" },
		"a dotted bucket over https":           func(c *s3.Config) { c.Bucket = "media.transcriber.example" },
		"a dotted bucket over http": func(c *s3.Config) {
			c.Bucket, c.Endpoint = "media.transcriber.example", "http://minio.local:9000"
		},
		"another region": func(c *s3.Config) { c.Region = "us-east-1"; c.Endpoint = "https://s3.us-east-1.amazonaws.com" },
	}
	for name, edit := range configs {
		t.Run(name, func(t *testing.T) {
			cfg := base
			if cfg.Endpoint == "" {
				cfg.Endpoint = s3.DefaultEndpoint
			}
			edit(&cfg)
			cfg.Clock = clock.NewFake(signedAt)
			st, err := s3.New(cfg)
			require.NoError(t, err)
			sdk, at := sdkPresigner(cfg, signedAt)

			for _, key := range crossKeys {
				for _, ttl := range []time.Duration{time.Second, 15 * time.Minute, s3.MaxPresignTTL} {
					for _, put := range []struct {
						size        int64
						contentType string
					}{{1, ""}, {70_001, "audio/ogg"}, {s3.MaxPutSize, "video/mp4; codecs=\"avc1\""}} {
						got, err := st.PresignPut(ctx, key, put.size, put.contentType, ttl)
						require.NoError(t, err)
						in := &awss3.PutObjectInput{Bucket: aws.String(cfg.Bucket), Key: aws.String(key), ContentLength: aws.Int64(put.size)}
						if put.contentType != "" {
							in.ContentType = aws.String(put.contentType)
						}
						want, err := sdk.PresignPutObject(ctx, in, awss3.WithPresignExpires(ttl), at)
						require.NoError(t, err)
						require.Equal(t, want.URL, got.URL, "PUT %q", key)
						require.Equal(t, want.Method, got.Method)
						wantHeaders := map[string]string{}
						for name, values := range want.SignedHeader {
							if name = http.CanonicalHeaderKey(name); name != "Host" {
								wantHeaders[name] = values[0]
							}
						}
						require.Equal(t, wantHeaders, got.Headers, "PUT %q", key)
					}

					got, err := st.PresignGet(ctx, key, ttl)
					require.NoError(t, err)
					want, err := sdk.PresignGetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(cfg.Bucket), Key: aws.String(key)},
						awss3.WithPresignExpires(ttl), at)
					require.NoError(t, err)
					require.Equal(t, want.URL, got, "GET %q", key)
				}
			}
		})
	}
}

// sentRequest is a request as the Store sent it, with its body.
type sentRequest struct {
	req  *http.Request
	body []byte
}

// recordingTransport keeps a copy of each request before sending it on.
type recordingTransport struct {
	mu   sync.Mutex
	sent []sentRequest
}

func (rt *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
	}
	out := req.Clone(req.Context())
	out.Body = http.NoBody
	if len(body) > 0 {
		out.Body = io.NopCloser(bytes.NewReader(body))
	}
	rt.mu.Lock()
	rt.sent = append(rt.sent, sentRequest{req.Clone(context.Background()), body})
	rt.mu.Unlock()
	return http.DefaultTransport.RoundTrip(out)
}

func (rt *recordingTransport) requests() []sentRequest {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]sentRequest(nil), rt.sent...)
}

// TestRequestsAreSignedLikeTheSDK runs every operation against the
// in-process server and signs each request sent again with the SDK's
// signer, at the time and with the payload hash the request carries: the
// Authorization must be the same, and the payload hash the body's.
func TestRequestsAreSignedLikeTheSDK(t *testing.T) {
	srv := s3test.Start(t)
	rt := &recordingTransport{}
	st := mustStore(t, srv, withParts(5*mib, 2), func(c *s3.Config) {
		c.HTTPClient = &http.Client{Transport: rt}
	})
	ctx := context.Background()
	for i, key := range crossKeys {
		require.NoError(t, st.Put(ctx, key, []byte("transcript of "+key), "application/json"))
		require.NoError(t, st.Put(ctx, key+".empty", nil, ""))
		_, err := st.Upload(ctx, key+".small", strings.NewReader("small"), "")
		require.NoError(t, err)
		if i < 2 { // multipart uploads are slow under -race: two keys show the signing
			_, err = st.Upload(ctx, key+".big", newGen(5*mib+1), "audio/ogg")
			require.NoError(t, err)
			_, err = st.Upload(ctx, key+".broken", io.MultiReader(newGen(10*mib+1), errReader{errs.New(errs.Permanent, "x", "x")}), "")
			require.Error(t, err)
			info, err := st.Head(ctx, key+".big")
			require.NoError(t, err)
			require.Equal(t, int64(5*mib+1), info.Size)
		}
		info, err := st.Head(ctx, key+".small")
		require.NoError(t, err)
		require.Equal(t, int64(5), info.Size)
		rc, err := st.Get(ctx, key)
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		require.Equal(t, "transcript of "+key, string(got))
		require.NoError(t, st.Delete(ctx, key))
		require.False(t, srv.Has(key))
	}
	require.Zero(t, srv.PendingUploads(t))

	ops := map[string]int{}
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	creds := aws.Credentials{AccessKeyID: srv.Config().AccessKeyID, SecretAccessKey: srv.Config().SecretAccessKey}
	for _, sent := range rt.requests() {
		q := sent.req.URL.Query()
		op := sent.req.Method + " " + strings.Join(slices.Sorted(maps.Keys(q)), "&")
		ops[op]++

		hash := sent.req.Header.Get("X-Amz-Content-Sha256")
		sum := sha256.Sum256(sent.body)
		require.Equal(t, hex.EncodeToString(sum[:]), hash, "%s: the payload hash is the body's", op)
		at, err := time.Parse("20060102T150405Z", sent.req.Header.Get("X-Amz-Date"))
		require.NoError(t, err)

		again := sent.req.Clone(context.Background())
		again.Header.Del("Authorization")
		require.NoError(t, signer.SignHTTP(context.Background(), creds, again, hash, "s3", s3.DefaultRegion, at))
		require.Equal(t, again.Header.Get("Authorization"), sent.req.Header.Get("Authorization"), "%s %s", op, sent.req.URL)
	}
	for _, op := range []string{
		"PUT x-id", "HEAD ", "GET x-id", "DELETE x-id", // objects
		"POST uploads", "PUT partNumber&uploadId&x-id", "POST uploadId", "DELETE uploadId&x-id", // multipart
	} {
		require.Positive(t, ops[op], "%s was sent and checked (sent: %v)", op, ops)
	}
}
