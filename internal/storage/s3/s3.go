// Package s3 is the Object Storage adapter: uploads, downloads, presigned
// URLs and object metadata on Yandex Object Storage through its S3 API, with
// aws-sdk-go-v2.
//
// The SDK is configured by hand (no shared config files, no environment):
// static keys, an explicit endpoint and region, checksums only when an
// operation requires them (S3-compatible stores often reject the CRC32
// headers the SDK adds by default), and the SDK's standard retryer with a
// fixed number of attempts.
//
// Every error a Store returns is classified through the errs vocabulary by
// one function, translate. The errs.Error Message is always one of a few
// fixed sentences: SDK errors carry full URLs (bucket, key, sometimes a
// signature), so they go only into the wrapped cause, which is for logs.
// The codes are:
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
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

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
	MinPartSize int64 = manager.MinUploadPartSize
	// DefaultConcurrency is how many parts are uploaded at once.
	DefaultConcurrency = 2
	// DefaultMaxAttempts is how many times the SDK tries one request (the
	// first try included) before the error reaches the caller: the SDK's own
	// standard, enough for a blip; longer outages are the job retry
	// policy's business (internal/job), which waits minutes, not seconds.
	DefaultMaxAttempts = retry.DefaultMaxAttempts
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
	// part buffers from the uploader's pool plus the first part, which the
	// uploader reads with io.ReadAll before it knows the upload is multipart
	// (up to 1.25 PartSize): about (Concurrency+2.25)*PartSize, 34 MiB with
	// the defaults. BenchmarkUploadMemory measures it.
	Concurrency int
	// MaxAttempts is how many times the SDK tries one request, default
	// DefaultMaxAttempts (3); 1 turns retries off.
	MaxAttempts int

	Clock      clock.Clock  // signing time and ExpiresAt of presigned URLs; default clock.System()
	HTTPClient *http.Client // optional; default the SDK's client
}

// Store reads and writes objects in one bucket. It is safe for concurrent
// use; make one per process and keep it.
type Store struct {
	client  *awss3.Client
	presign *awss3.PresignClient
	// The SDK deprecates manager for feature/s3/transfermanager, which is
	// still v0.x and would pull aws-sdk-go-v2/config into go.mod; manager
	// v1.22.4 is the pinned, Go 1.23 build.
	uploader *manager.Uploader //nolint:staticcheck // deprecated; see the comment above
	signer   *v4.Signer
	clock    clock.Clock
	bucket   string
	endpoint string // scheme://host, no trailing slash
}

// bucketName is S3's rule for bucket names (Yandex's too), loosened only in
// not checking for IP-address-looking names.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// New checks cfg, fills in its defaults and builds the SDK client. It makes
// no network call, so a wrong key or bucket shows up on first use, as
// storage_access_denied or storage_bucket_missing.
func New(cfg Config) (*Store, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	opts := awss3.Options{
		Region:       cfg.Region,
		BaseEndpoint: aws.String(cfg.Endpoint),
		UsePathStyle: cfg.PathStyle,
		Credentials:  credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		// Since s3 v1.73 the SDK sends CRC32 checksums (and asks for them
		// back) by default; S3-compatible stores may reject or lack them.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = cfg.MaxAttempts
		}),
	}
	if cfg.HTTPClient != nil {
		opts.HTTPClient = cfg.HTTPClient
	}
	client := awss3.New(opts)
	return &Store{
		client:  client,
		presign: awss3.NewPresignClient(client),
		uploader: manager.NewUploader(client, func(u *manager.Uploader) { //nolint:staticcheck // as on Store.uploader
			u.PartSize = cfg.PartSize
			u.Concurrency = cfg.Concurrency
			u.LeavePartsOnError = false // abort the multipart upload on error
			// The uploader has its own checksum switch; left alone it adds
			// CRC32 to every part whatever the client says.
			u.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		}),
		// The same signer the SDK builds for S3 (no double escaping of
		// the path), driven by our clock when presigning.
		signer: v4.NewSigner(func(o *v4.SignerOptions) {
			o.DisableURIPathEscaping = true
		}),
		clock:    cfg.Clock,
		bucket:   cfg.Bucket,
		endpoint: cfg.Endpoint,
	}, nil
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
// a path would be silently dropped by the SDK and then missing from URI.
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
