package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"transcriber/internal/errs"
)

// ObjectInfo is what Head tells about an object.
type ObjectInfo struct {
	Size        int64
	ContentType string
}

// defaultContentType is what a PUT without a type says it sends (the SDK
// sent it too), so the store does not guess.
const defaultContentType = "application/octet-stream"

// Head returns the object's size and type. A missing object is errs.NotFound.
func (s *Store) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := checkKey(key); err != nil {
		return ObjectInfo{}, err
	}
	var info ObjectInfo
	err := s.do(ctx, &request{
		method: http.MethodHead,
		key:    key,
		read: func(resp *http.Response) error {
			info = ObjectInfo{Size: max(resp.ContentLength, 0), ContentType: resp.Header.Get("Content-Type")}
			if v := resp.Header.Get("Content-Length"); v != "" {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					return fmt.Errorf("head: the store answered a Content-Length of %q", v)
				}
				info.Size = n
			}
			return nil
		},
	})
	if err != nil {
		return ObjectInfo{}, translate(err, "head")
	}
	return info, nil
}

// Put stores a small object (a transcript) in one request.
func (s *Store) Put(ctx context.Context, key string, body []byte, contentType string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.putObject(ctx, key, body, contentType); err != nil {
		return translate(err, "put")
	}
	return nil
}

// putObject stores body under key in one PUT.
func (s *Store) putObject(ctx context.Context, key string, body []byte, contentType string) error {
	if contentType == "" {
		contentType = defaultContentType
	}
	return s.do(ctx, &request{
		method: http.MethodPut,
		key:    key,
		query:  url.Values{"x-id": {"PutObject"}},
		header: http.Header{"Content-Type": {contentType}},
		body:   body,
	})
}

// Get opens the object for reading; the caller closes it. A missing object
// is errs.NotFound. A failure while reading is classified like any other
// (usually errs.Unavailable).
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	resp, err := s.open(ctx, &request{ //nolint:bodyclose // the caller closes the objectReader, which closes it
		method: http.MethodGet,
		key:    key,
		query:  url.Values{"x-id": {"GetObject"}},
	})
	if err != nil {
		return nil, translate(err, "get")
	}
	return &objectReader{body: resp.Body}, nil
}

// Delete removes the object. Deleting a missing object is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	err := s.do(ctx, &request{
		method: http.MethodDelete,
		key:    key,
		query:  url.Values{"x-id": {"DeleteObject"}},
	})
	if err = translate(err, "delete"); err != nil && !errs.Is(err, errs.NotFound) {
		return err
	}
	return nil
}

// checkKey refuses an empty key, which would make a request on the bucket
// itself.
func checkKey(key string) error {
	if key == "" {
		return errs.New(errs.Internal, codeFailed, "an object needs a key")
	}
	return nil
}

// objectReader classifies errors met while reading an object's body.
type objectReader struct {
	body io.ReadCloser
}

func (o *objectReader) Read(p []byte) (int, error) {
	n, err := o.body.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = translate(err, "get: read")
	}
	return n, err
}

func (o *objectReader) Close() error { return o.body.Close() }
