package s3

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"transcriber/internal/errs"
)

// Limits of presigned URLs.
const (
	// MaxPresignTTL is the longest a presigned URL may live: SigV4's limit
	// (AWS refuses more; Yandex documents up to 30 days, so 7 is safe on
	// both).
	MaxPresignTTL = 7 * 24 * time.Hour
	// MaxPutSize is the most one PUT may carry (S3 and Yandex: 5 GiB);
	// more needs a multipart upload, which a presigned PUT is not.
	MaxPutSize int64 = 5 << 30
)

// Presigned is a request a client makes without our keys: Method to URL,
// with every header in Headers set exactly as given (they are signed; any
// other value is refused). Headers holds Content-Length, which HTTP clients
// (browsers included) set from the body, so it tells the client what is
// enforced; and Content-Type when one was given. Host is not listed: HTTP
// clients set it from URL.
type Presigned struct {
	Method    string
	URL       string
	Headers   map[string]string
	ExpiresAt time.Time // the URL is refused from this moment on
}

// PresignPut returns a PUT that uploads exactly size bytes to key, with
// Content-Type contentType when it is not empty. Both are signed, so the
// store refuses any other length or type: the size the client declared is
// the size it sends. ExpiresAt is the signing time (the Store's clock, to
// the second, as SigV4 writes it) plus ttl in whole seconds.
//
// A size of 0 is errs.Invalid (empty_file: the SDK would leave a zero length
// unsigned), above MaxPutSize errs.Invalid (object_too_large); a ttl outside
// 1s..MaxPresignTTL, a negative size or an empty key is errs.Internal: the
// caller's bug.
func (s *Store) PresignPut(ctx context.Context, key string, size int64, contentType string, ttl time.Duration) (Presigned, error) {
	if err := checkPresign(key, ttl); err != nil {
		return Presigned{}, err
	}
	if size < 0 {
		return Presigned{}, errs.New(errs.Internal, codeFailed, "a negative upload size cannot be signed")
	}
	if size == 0 {
		// The SDK leaves a zero Content-Length unsigned, which would let
		// the URL take any size; an empty file has nothing to transcribe.
		return Presigned{}, errs.New(errs.Invalid, codeEmpty, "the file is empty")
	}
	if size > MaxPutSize {
		return Presigned{}, errs.New(errs.Invalid, codeTooLarge, "the file is larger than the 5 GiB one upload may carry")
	}
	in := &awss3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		ContentLength: aws.Int64(size),
	}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	now := s.signingTime()
	req, err := s.presign.PresignPutObject(ctx, in, s.presignOptions(now, ttl))
	if err != nil {
		return Presigned{}, translate(err, "presign put")
	}
	headers := make(map[string]string, len(req.SignedHeader))
	for name, values := range req.SignedHeader {
		name = http.CanonicalHeaderKey(name)
		if name == "Host" || len(values) == 0 {
			continue
		}
		headers[name] = values[0]
	}
	// The size limit rests on the signature; never hand out a URL without it.
	if headers["Content-Length"] != strconv.FormatInt(size, 10) ||
		(contentType != "" && headers["Content-Type"] != contentType) {
		return Presigned{}, errs.New(errs.Internal, codeFailed, "the upload URL came out without its size or type signed")
	}
	return Presigned{
		Method:    req.Method,
		URL:       req.URL,
		Headers:   headers,
		ExpiresAt: now.Add(ttl.Truncate(time.Second)),
	}, nil
}

// PresignGet returns a URL that fetches the object with a plain GET (Range
// requests included) until ttl has passed. The same ttl rules as PresignPut
// apply. The URL is a bearer secret: never log it.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	if err := checkPresign(key, ttl); err != nil {
		return "", err
	}
	in := &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}
	req, err := s.presign.PresignGetObject(ctx, in, s.presignOptions(s.signingTime(), ttl))
	if err != nil {
		return "", translate(err, "presign get")
	}
	return req.URL, nil
}

func checkPresign(key string, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if ttl < time.Second || ttl > MaxPresignTTL {
		return errs.New(errs.Internal, codeFailed, "a presigned URL's lifetime must be between 1 second and 7 days")
	}
	return nil
}

// signingTime is the clock's now to the second, which is all SigV4 keeps.
func (s *Store) signingTime() time.Time { return s.clock.Now().Truncate(time.Second) }

func (s *Store) presignOptions(at time.Time, ttl time.Duration) func(*awss3.PresignOptions) {
	return func(o *awss3.PresignOptions) {
		o.Expires = ttl
		o.Presigner = clockPresigner{signer: s.signer, at: at}
	}
}

// clockPresigner signs at a time we chose rather than the SDK's, so that
// X-Amz-Date and Presigned.ExpiresAt come from the same clock reading (and a
// test's fake clock shows in the URL).
type clockPresigner struct {
	signer *v4.Signer
	at     time.Time
}

func (p clockPresigner) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request,
	payloadHash, service, region string, _ time.Time, optFns ...func(*v4.SignerOptions),
) (string, http.Header, error) {
	return p.signer.PresignHTTP(ctx, creds, r, payloadHash, service, region, p.at, optFns...)
}
