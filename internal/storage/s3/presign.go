package s3

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

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
// A size of 0 is errs.Invalid (empty_file: an empty file has nothing to
// transcribe, and SigV4 leaves a zero length unsigned), above MaxPutSize
// errs.Invalid (object_too_large); a ttl outside 1s..MaxPresignTTL, a
// negative size or an empty key is errs.Internal: the caller's bug. ctx is
// not used: presigning makes no request.
func (s *Store) PresignPut(ctx context.Context, key string, size int64, contentType string, ttl time.Duration) (Presigned, error) {
	if err := checkPresign(key, ttl); err != nil {
		return Presigned{}, err
	}
	if size < 0 {
		return Presigned{}, errs.New(errs.Internal, codeFailed, "a negative upload size cannot be signed")
	}
	if size == 0 {
		// SigV4 signs Content-Length only when it is more than zero, which
		// would let the URL take any size; an empty file has nothing to
		// transcribe.
		return Presigned{}, errs.New(errs.Invalid, codeEmpty, "the file is empty")
	}
	if size > MaxPutSize {
		return Presigned{}, errs.New(errs.Invalid, codeTooLarge, "the file is larger than the 5 GiB one upload may carry")
	}
	req := s.presignRequest(http.MethodPut, key, "PutObject")
	// Signed as the SDK's PresignPutObject signs ContentLength and
	// ContentType: the store refuses any other length or type.
	req.ContentLength = size
	headers := map[string]string{"Content-Length": strconv.FormatInt(size, 10)}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
		headers["Content-Type"] = contentType
	}
	now := s.signingTime()
	signed, err := s.signer.presign(req, ttl, now)
	if err != nil {
		return Presigned{}, translate(err, "presign put")
	}
	return Presigned{
		Method:    http.MethodPut,
		URL:       signed,
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
	req := s.presignRequest(http.MethodGet, key, "GetObject")
	signed, err := s.signer.presign(req, ttl, s.signingTime())
	if err != nil {
		return "", translate(err, "presign get")
	}
	return signed, nil
}

// presignRequest is the request a presigned URL stands for: method on key,
// with the operation's name in x-id as the SDK writes it.
func (s *Store) presignRequest(method, key, op string) *http.Request {
	return &http.Request{
		Method: method,
		URL:    s.objectURL(key, url.Values{"x-id": {op}}),
		Header: http.Header{},
	}
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

// signingTime is the clock's now to the second, which is all SigV4 keeps:
// X-Amz-Date and Presigned.ExpiresAt come from the same clock reading (and a
// test's fake clock shows in the URL).
func (s *Store) signingTime() time.Time { return s.clock.Now().Truncate(time.Second) }
