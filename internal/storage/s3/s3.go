// Package s3 is the Object Storage adapter: uploads, downloads, presigned
// URLs and object metadata on Yandex Object Storage through its S3 API.
//
// It is a thin S3 client on net/http: the few S3 operations the service
// uses (object.go, presign.go), multipart uploads (upload.go), and requests
// with retries and S3's XML error answers (client.go). From aws-sdk-go-v2
// it takes only what its core module and smithy-go hold (sign.go): the
// SigV4 signer (aws/signer/v4, set up as the SDK's S3 client sets it up),
// the standard retryer's rules and backoff (aws/retry) and S3's path
// escaping; a function's plugin build pays a few seconds for them. It does
// not use the SDK's S3 client (service/s3), whose compilation alone took
// about a fifth of a function's plugin build (docs/architecture.md, "Build
// budget"). S3's XML error answers are read with encoding/xml into one
// struct: smithy-go's helper for them does the same but drops the request
// id and does not check the root element, which tells a copy's late error
// from its result. testdata/signatures.json holds the Authorization headers
// and presigned URLs of the package's earlier, hand-written signer: the
// tests check the SDK's signer gives the same bytes.
//
// The client is configured by hand: static keys, an explicit endpoint and
// region, no checksums beyond the SHA-256 of each payload that SigV4 signs
// (S3-compatible stores often reject the CRC32 headers recent SDKs add), and
// a fixed number of attempts per request with jittered exponential backoff.
//
// Every error a Store returns is classified through the errs vocabulary by
// one function, translate. The errs.Error Message is always one of a few
// fixed sentences: transport errors carry full URLs (bucket and key) and
// the store's answers quote keys, so they go only into the wrapped cause,
// which is for logs. No error text ever holds a signature or the secret key:
// requests are signed in headers, which errors do not quote, and a
// presigned URL is never sent by the Store. The codes are:
//
//	object_not_found       errs.NotFound     the object (or its bucket, on HEAD) does not exist
//	storage_unavailable    errs.Unavailable  throttling, 5xx, timeouts, broken connections
//	storage_access_denied  errs.Unavailable  the keys or the bucket policy refuse us: fix the config
//	storage_bucket_missing errs.Unavailable  the configured bucket does not exist: fix the config
//	storage_failed         errs.Internal     anything else
//	object_too_large       errs.Invalid      PresignPut for more than one PUT may carry (5 GiB)
//	empty_file             errs.Invalid      PresignPut for 0 bytes
package s3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"transcriber/internal/clock"
)

// Defaults and limits. docs/settings.md lists them with their reasons.
const (
	// DefaultEndpoint is Yandex Object Storage's S3 endpoint.
	DefaultEndpoint = "https://storage.yandexcloud.net"
	// DefaultRegion is the only region Yandex Object Storage signs for.
	DefaultRegion = "ru-central1"
	// DefaultPartSize is the multipart part size: big enough that a 1 GiB
	// upload takes 128 requests, small enough that a 128 MB function holds
	// its buffers with room to spare.
	DefaultPartSize int64 = 8 << 20
	// MinPartSize is S3's smallest part (all parts but the last).
	MinPartSize int64 = 5 << 20
	// maxParts is the most parts one multipart upload may have (S3 and
	// Yandex).
	maxParts = 10_000
	// DefaultConcurrency is how many parts are uploaded at once.
	DefaultConcurrency = 2
	// DefaultMaxAttempts is how many times a Store tries one request (the
	// first try included) before the error reaches the caller: the AWS
	// SDKs' standard, enough for a blip; longer outages are the job retry
	// policy's business (internal/job), which waits minutes, not seconds.
	DefaultMaxAttempts = 3
)

// Config configures a Store. Only Bucket and the keys are required.
type Config struct {
	Endpoint        string // default DefaultEndpoint; scheme and host only
	Region          string // default DefaultRegion
	Bucket          string
	AccessKeyID     string // a static key: presigned URLs need one
	SecretAccessKey string
	PathStyle       bool // path-style addressing (needed for the in-process server)

	// PartSize is the multipart part size, default DefaultPartSize, at least
	// MinPartSize. It also caps an upload at 10 000 parts: 78 GiB at 8 MiB.
	PartSize int64
	// Concurrency is how many parts Upload sends at once, default
	// DefaultConcurrency. Each Upload in flight holds at most Concurrency+1
	// part buffers (the parts being sent and the one being read): with the
	// defaults 24 MiB, none of it kept once the upload is over.
	// BenchmarkUploadMemory measures it.
	Concurrency int
	// MaxAttempts is how many times a Store tries one request, default
	// DefaultMaxAttempts (3); 1 turns retries off. Retried are answers of
	// 500, 502, 503, 504 and 429, throttling and timeout error codes, and
	// requests that got no answer, unless ctx ended.
	MaxAttempts int

	// Clock gives the signing time and ExpiresAt of presigned URLs; default
	// clock.System(). The Store's own requests are signed with the real
	// time whatever Clock says: the store refuses a request more than 15
	// minutes off (RequestTimeTooSkewed), and a test's fake clock would be.
	Clock      clock.Clock
	HTTPClient *http.Client // optional; default a client of the Store's own (see New)
}

// Store reads and writes objects in one bucket. It is safe for concurrent
// use; make one per process and keep it: it holds one HTTP client and its
// connections.
type Store struct {
	http        *http.Client
	signer      signer
	clock       clock.Clock // presigned URLs
	wallClock   clock.Clock // requests: always the real time
	bucket      string
	endpoint    string // scheme://host, no trailing slash
	scheme      string
	host        string // the endpoint's host[:port]
	virtualHost bool   // bucket.host/key rather than host/bucket/key
	partSize    int64
	concurrency int
	maxAttempts int

	// sleep waits between attempts; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	// onUploadDone, if set, learns how many part buffers an Upload made
	// (tests check the memory bound).
	onUploadDone func(buffers int)
}

// bucketName is S3's rule for bucket names (Yandex's too), loosened only in
// not checking for IP-address-looking names.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// New checks cfg, fills in its defaults and builds the client. It makes no
// network call, so a wrong key or bucket shows up on first use, as
// storage_access_denied or storage_bucket_missing.
//
// Without Config.HTTPClient the Store makes its own, with the SDK's
// transport settings: proxy from the environment, 30 s to connect, 10 s for
// TLS (1.2 at least), up to 10 idle connections to the store kept 90 s,
// HTTP/2 when the store offers it. It follows no redirect: S3 redirects
// only a request sent to the wrong region or host, an error to surface, not
// to follow with a signature made for another host.
func New(cfg Config) (*Store, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil { // cleanEndpoint parsed it already
		return nil, fmt.Errorf("s3: endpoint %q: %w", cfg.Endpoint, err)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = defaultHTTPClient()
	}
	st := &Store{
		http:        client,
		signer:      newSigner(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.Region),
		clock:       cfg.Clock,
		wallClock:   clock.System(),
		bucket:      cfg.Bucket,
		endpoint:    cfg.Endpoint,
		scheme:      u.Scheme,
		host:        u.Host,
		virtualHost: virtualHosted(cfg.Bucket, u, cfg.PathStyle),
		partSize:    cfg.PartSize,
		concurrency: cfg.Concurrency,
		maxAttempts: cfg.MaxAttempts,
		sleep:       clock.Sleep,
	}
	return st, nil
}

func defaultHTTPClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   10,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
			TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// virtualHosted tells whether requests go to bucket.host/key, as the SDK
// decides with a custom endpoint: not when PathStyle asks for path style,
// not when the endpoint's host is an IP address, and with a dotted bucket
// name only over plain HTTP (a dotted name breaks the TLS certificate's
// wildcard).
func virtualHosted(bucket string, endpoint *url.URL, pathStyle bool) bool {
	if pathStyle || net.ParseIP(endpoint.Hostname()) != nil {
		return false
	}
	if !strings.Contains(bucket, ".") {
		return true
	}
	if endpoint.Scheme != "http" || net.ParseIP(bucket) != nil {
		return false
	}
	for _, label := range strings.Split(bucket, ".") {
		if len(label) < 3 { // the SDK's rule for each label of a dotted name
			return false
		}
	}
	return true
}

func withDefaults(cfg Config) (Config, error) {
	if cfg.Endpoint == "" {
		cfg.Endpoint = DefaultEndpoint
	}
	endpoint, err := cleanEndpoint(cfg.Endpoint)
	if err != nil {
		return cfg, err
	}
	cfg.Endpoint = endpoint
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.Bucket == "" {
		return cfg, errors.New("s3: bucket is required")
	}
	if !bucketName.MatchString(cfg.Bucket) {
		return cfg, fmt.Errorf("s3: bucket %q is not a valid bucket name", cfg.Bucket)
	}
	if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return cfg, errors.New("s3: a static access key id and secret are required (presigned URLs need one)")
	}
	switch {
	case cfg.PartSize == 0:
		cfg.PartSize = DefaultPartSize
	case cfg.PartSize < MinPartSize:
		return cfg, fmt.Errorf("s3: part size %d is below S3's minimum of %d bytes", cfg.PartSize, MinPartSize)
	}
	switch {
	case cfg.Concurrency == 0:
		cfg.Concurrency = DefaultConcurrency
	case cfg.Concurrency < 0:
		return cfg, fmt.Errorf("s3: concurrency %d is negative", cfg.Concurrency)
	}
	switch {
	case cfg.MaxAttempts == 0:
		cfg.MaxAttempts = DefaultMaxAttempts
	case cfg.MaxAttempts < 0:
		return cfg, fmt.Errorf("s3: max attempts %d is negative", cfg.MaxAttempts)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System()
	}
	return cfg, nil
}

// cleanEndpoint accepts scheme://host[:port] with an optional trailing slash:
// a path would be silently dropped from requests and then missing from URI.
func cleanEndpoint(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("s3: endpoint %q: %w", raw, err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("s3: endpoint %q must be http(s)://host[:port] with nothing after it", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// Origin is scheme://host of every URL the Store makes for an object,
// presigned ones included: the endpoint, with the bucket in the host when
// addressing is virtual-hosted.
func (s *Store) Origin() string {
	u := s.objectURL("k", nil)
	return u.Scheme + "://" + u.Host
}

// Bucket returns the bucket the Store works in.
func (s *Store) Bucket() string { return s.bucket }

// URI returns the object's https URL on the endpoint in path style,
// endpoint/bucket/key, whatever PathStyle says: the form SpeechKit's
// RecognizeFile takes as uri. Each key segment is escaped; the slashes
// between them are kept.
func (s *Store) URI(key string) string {
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return s.endpoint + "/" + s.bucket + "/" + strings.Join(segs, "/")
}
