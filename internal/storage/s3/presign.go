package s3

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"transcriber/internal/errs"
)

const (
	MaxPresignTTL       = 7 * 24 * time.Hour // SigV4's limit (AWS refuses more; Yandex takes 30 days)
	MaxPutSize    int64 = 5 << 30            // the most one PUT, so a presigned one, may carry
)

// Presigned is a request a client makes without our keys, with every one
// of Headers (signed: Content-Length, and Content-Type when given) set as
// given.
type Presigned struct {
	Method    string
	URL       string
	Headers   map[string]string
	ExpiresAt time.Time // refused from then on
}

// PresignPut returns a PUT of exactly size bytes to key, with contentType
// if not empty: both signed, so the store refuses any other. Size 0 is
// empty_file, over MaxPutSize object_too_large (errs.Invalid).
func (s *Store) PresignPut(ctx context.Context, key string, size int64, contentType string, ttl time.Duration) (Presigned, error) {
	if err := checkPresign(key, ttl); err != nil {
		return Presigned{}, err
	}
	if size < 0 {
		return Presigned{}, errs.New(errs.Internal, codeFailed, "a negative upload size cannot be signed")
	}
	if size == 0 { // SigV4 would leave a zero length unsigned: any size would pass
		return Presigned{}, errs.New(errs.Invalid, codeEmpty, "the file is empty")
	}
	if size > MaxPutSize {
		return Presigned{}, errs.New(errs.Invalid, codeTooLarge, "the file is larger than the 5 GiB one upload may carry")
	}
	req := s.presignRequest(http.MethodPut, key, "PutObject")
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

// PresignGet returns a GET URL (Range included) valid for ttl, as
// PresignPut's. It is a bearer secret: never log it.
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

// signingTime is now to the second, all SigV4 keeps: X-Amz-Date and
// ExpiresAt come from one reading.
func (s *Store) signingTime() time.Time { return s.clock.Now().Truncate(time.Second) }
