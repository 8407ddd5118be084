// Package s3 is the Object Storage adapter: a thin S3 client on net/http
// for the few operations the service uses, multipart uploads, retries and
// S3's XML errors. Of aws-sdk-go-v2 it takes only the core module (SigV4
// signer, standard retryer, S3's path escaping): the SDK's S3 client took a
// fifth of a function's plugin build (docs/architecture.md, "Build
// budget"); testdata/signatures.json holds the earlier signer's output,
// which the SDK's must match byte for byte. No checksums beyond SigV4's
// payload SHA-256: S3-compatible stores often refuse the CRC32 headers
// recent SDKs add. translate (errors.go) classifies every error with a
// fixed message; URLs and keys go only into the wrapped cause, and no
// error holds a signature or the secret.
package s3

import (
	"cmp"
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

// Defaults and limits; docs/settings.md gives their reasons.
const (
	DefaultEndpoint = "https://storage.yandexcloud.net"
	DefaultRegion   = "ru-central1" // the only region Object Storage signs for
	// DefaultPartSize: a 1 GiB upload is 128 requests, and a 128 MB
	// function holds the buffers with room to spare.
	DefaultPartSize    int64 = 8 << 20
	MinPartSize        int64 = 5 << 20 // S3's smallest part but the last
	maxParts                 = 10_000
	DefaultConcurrency       = 2 // parts uploaded at once
	// DefaultMaxAttempts, the first try included, is the AWS SDKs'
	// standard: enough for a blip; outages are the job retry policy's.
	DefaultMaxAttempts = 3
)

// Config configures a Store. Only Bucket and the keys are required.
type Config struct {
	Endpoint        string // default DefaultEndpoint; scheme and host only
	Region          string // default DefaultRegion
	Bucket          string
	AccessKeyID     string // a static key: presigned URLs need one
	SecretAccessKey string
	PathStyle       bool // host/bucket/key (the local store)

	// Clock signs presigned URLs and gives their ExpiresAt. Requests are
	// signed with the real time whatever it says: the store refuses one 15
	// minutes off (RequestTimeTooSkewed).
	Clock clock.Clock
}

// Store reads and writes objects in one bucket, safe for concurrent use;
// one per process keeps its connections.
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
	partSize    int64  // also caps an upload at 10 000 parts: 78 GiB at 8 MiB
	concurrency int    // an Upload holds at most concurrency+1 part buffers (BenchmarkUploadMemory)
	// maxAttempts per request, the first included. Retried: 429, 500,
	// 502-504, throttling and timeout codes, no answer (unless ctx ended).
	maxAttempts int

	sleep        func(ctx context.Context, d time.Duration) error // between attempts; tests replace it
	onUploadDone func(buffers int)                                // tests: the part buffers an Upload made
}

// bucketName is S3's rule for bucket names, but for IP-address-like ones.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// New checks cfg and builds the client without a network call: a wrong key
// or bucket shows on first use.
func New(cfg Config) (*Store, error) {
	u, err := endpointURL(cmp.Or(cfg.Endpoint, DefaultEndpoint))
	switch {
	case err != nil:
		return nil, err
	case cfg.Bucket == "":
		return nil, errors.New("s3: bucket is required")
	case !bucketName.MatchString(cfg.Bucket):
		return nil, fmt.Errorf("s3: bucket %q is not a valid bucket name", cfg.Bucket)
	case cfg.AccessKeyID == "" || cfg.SecretAccessKey == "":
		return nil, errors.New("s3: a static access key id and secret are required (presigned URLs need one)")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System()
	}
	return &Store{
		http:        defaultHTTPClient(),
		signer:      newSigner(cfg.AccessKeyID, cfg.SecretAccessKey, cmp.Or(cfg.Region, DefaultRegion)),
		clock:       cfg.Clock,
		wallClock:   clock.System(),
		bucket:      cfg.Bucket,
		endpoint:    u.Scheme + "://" + u.Host,
		scheme:      u.Scheme,
		host:        u.Host,
		virtualHost: virtualHosted(cfg.Bucket, u, cfg.PathStyle),
		partSize:    DefaultPartSize,
		concurrency: DefaultConcurrency,
		maxAttempts: DefaultMaxAttempts,
		sleep:       clock.Sleep,
	}, nil
}

// defaultHTTPClient has the SDK's transport settings, and follows no
// redirect: S3 redirects only a request sent to the wrong region or host,
// an error to surface, not to follow with a signature for another host.
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
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// virtualHosted tells whether requests go to bucket.host/key, as the SDK
// decides: not with PathStyle or an IP host, and with a dotted bucket only
// over plain HTTP (it breaks the certificate's wildcard).
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

// endpointURL accepts scheme://host[:port][/]: a path would be dropped.
func endpointURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("s3: endpoint %q: %w", raw, err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("s3: endpoint %q must be http(s)://host[:port] with nothing after it", raw)
	}
	return u, nil
}

// Origin is scheme://host of every object URL the Store makes, presigned
// ones included.
func (s *Store) Origin() string {
	u := s.objectURL("k", nil)
	return u.Scheme + "://" + u.Host
}

func (s *Store) Bucket() string { return s.bucket }

// URI is the object's path-style URL whatever PathStyle says: the form
// SpeechKit's RecognizeFile takes.
func (s *Store) URI(key string) string {
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return s.endpoint + "/" + s.bucket + "/" + strings.Join(segs, "/")
}
