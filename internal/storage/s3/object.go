package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"transcriber/internal/errs"
)

// abortTimeout bounds the clean-up of a multipart upload whose context was
// cancelled (see Upload).
const abortTimeout = 10 * time.Second

// ObjectInfo is what Head tells about an object.
type ObjectInfo struct {
	Size        int64
	ContentType string
}

// Head returns the object's size and type. A missing object is errs.NotFound.
func (s *Store) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := checkKey(key); err != nil {
		return ObjectInfo{}, err
	}
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(key),
	})
	if err != nil {
		return ObjectInfo{}, translate(err, "head")
	}
	return ObjectInfo{Size: aws.ToInt64(out.ContentLength), ContentType: aws.ToString(out.ContentType)}, nil
}

// Upload streams r to key and returns the number of bytes stored. It reads
// r once, in parts of Config.PartSize, and sends up to Config.Concurrency
// parts at once, so memory stays bounded whatever r's length (see
// Config.Concurrency). A stream shorter than one part is sent with one PUT,
// so an empty r makes an empty object. On error nothing is left behind: the
// multipart upload is aborted, even when ctx was cancelled (then with a
// fresh context of its own, for up to 10 s). An error from r itself keeps
// its classification if it has one.
func (s *Store) Upload(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	// Hiding r behind a plain Reader keeps the uploader on its streaming
	// path (it would seek or ReadAt anything that can) and counts the bytes.
	body := &countingReader{r: r}
	in := &awss3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key), Body: body}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	if _, err := s.uploader.Upload(ctx, in); err != nil { //nolint:staticcheck // as on Store.uploader
		var failed manager.MultiUploadFailure
		if errors.As(err, &failed) && ctx.Err() != nil {
			// The uploader's own abort ran on the cancelled ctx and failed.
			s.abort(ctx, key, failed.UploadID())
		}
		return 0, translate(err, "upload")
	}
	return body.n, nil
}

func (s *Store) abort(ctx context.Context, key, uploadID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	// Best effort: a lifecycle rule for incomplete multipart uploads is the
	// backstop, and the caller's error is the upload's, not this one's.
	_, _ = s.client.AbortMultipartUpload(ctx, &awss3.AbortMultipartUploadInput{
		Bucket:   aws.String(s.bucket),
		Key:      aws.String(key),
		UploadId: aws.String(uploadID),
	})
}

// Put stores a small object (a transcript) in one request.
func (s *Store) Put(ctx context.Context, key string, body []byte, contentType string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	in := &awss3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
	}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	if _, err := s.client.PutObject(ctx, in); err != nil {
		return translate(err, "put")
	}
	return nil
}

// Get opens the object for reading; the caller closes it. A missing object
// is errs.NotFound. A failure while reading is classified like any other
// (usually errs.Unavailable).
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(key),
	})
	if err != nil {
		return nil, translate(err, "get")
	}
	return &objectReader{body: out.Body}, nil
}

// Delete removes the object. Deleting a missing object is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{
		Bucket: aws.String(s.bucket),
		Key:    aws.String(key),
	})
	if err = translate(err, "delete"); err != nil && !errs.Is(err, errs.NotFound) {
		return err
	}
	return nil
}

// checkKey refuses an empty key, which the SDK would turn into a request on
// the bucket itself.
func checkKey(key string) error {
	if key == "" {
		return errs.New(errs.Internal, codeFailed, "an object needs a key")
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
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
