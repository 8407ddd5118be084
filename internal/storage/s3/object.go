package s3

import (
	"cmp"
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
	ETag        string // as answered, quotes included: Copy's ifMatch takes it
}

// defaultContentType keeps the store from guessing (the SDK sent it too).
const defaultContentType = "application/octet-stream"

// Head returns the object's size, type and ETag; missing is errs.NotFound.
func (s *Store) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := checkKey(key); err != nil {
		return ObjectInfo{}, err
	}
	var info ObjectInfo
	err := s.do(ctx, &request{
		method: http.MethodHead,
		key:    key,
		read: func(resp *http.Response) error {
			info = ObjectInfo{Size: max(resp.ContentLength, 0), ContentType: resp.Header.Get("Content-Type"), ETag: resp.Header.Get("ETag")}
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

func (s *Store) putObject(ctx context.Context, key string, body []byte, contentType string) error {
	return s.do(ctx, &request{
		method: http.MethodPut,
		key:    key,
		query:  url.Values{"x-id": {"PutObject"}},
		header: http.Header{"Content-Type": {cmp.Or(contentType, defaultContentType)}},
		body:   body,
	})
}

// Copy makes dst a copy of src on the store's side. With ifMatch (Head's
// ETag) it copies only what was looked at, else fails storage_object_changed
// (errs.Unavailable: look again). A missing src is errs.NotFound.
func (s *Store) Copy(ctx context.Context, src, dst, ifMatch string) error {
	if err := checkKey(src); err != nil {
		return err
	}
	if err := checkKey(dst); err != nil {
		return err
	}
	h := http.Header{"X-Amz-Copy-Source": {"/" + s.bucket + "/" + escapeKey(src)}}
	if ifMatch != "" {
		h.Set("X-Amz-Copy-Source-If-Match", ifMatch)
	}
	err := s.do(ctx, &request{
		method: http.MethodPut,
		key:    dst,
		query:  url.Values{"x-id": {"CopyObject"}},
		header: h,
		read:   readCopyResult,
	})
	return translate(err, "copy")
}

// readCopyResult reads a copy's 200 answer, which holds an Error document
// when the copy failed once the answer had begun.
func readCopyResult(resp *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	if err != nil {
		return err
	}
	if e := errorIn(resp, body); e != nil {
		return e
	}
	return nil
}

// Get opens the object for reading; the caller closes it. A missing object
// is errs.NotFound; read errors are classified too.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	resp, err := s.send(ctx, &request{ //nolint:bodyclose // the caller closes the objectReader, which closes it
		method: http.MethodGet,
		open:   true,
		key:    key,
		query:  url.Values{"x-id": {"GetObject"}},
	})
	if err != nil {
		return nil, translate(err, "get")
	}
	return &objectReader{body: resp.Body}, nil
}

// Delete removes the object; a missing one is no error.
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

// checkKey refuses an empty key: a request on the bucket itself.
func checkKey(key string) error {
	if key == "" {
		return errs.New(errs.Internal, codeFailed, "an object needs a key")
	}
	return nil
}

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
