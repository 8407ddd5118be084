package s3

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

const abortTimeout = 10 * time.Second

// Upload streams r to key in parts of PartSize, Concurrency at once, and
// returns the bytes stored; at most one part is one PUT (an empty r an
// empty object). On error the multipart upload is aborted on a fresh
// context, even when ctx was cancelled; r's own errors keep their
// classification.
func (s *Store) Upload(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	bufs := &partBuffers{size: s.partSize}
	if s.onUploadDone != nil {
		defer func() { s.onUploadDone(bufs.made) }()
	}
	first := bufs.get()
	n, eof, err := readPart(r, first)
	if err != nil {
		return 0, translate(err, "upload")
	}
	var second []byte
	var m int
	if !eof { // multipart unless nothing follows
		second = bufs.get()
		if m, eof, err = readPart(r, second); err != nil {
			return 0, translate(err, "upload")
		}
	}
	if m == 0 {
		if err := s.putObject(ctx, key, first[:n], contentType); err != nil {
			return 0, translate(err, "upload")
		}
		return int64(n), nil
	}

	id, err := s.initiate(ctx, key, contentType)
	if err != nil {
		return 0, translate(err, "upload")
	}
	parts, total, err := s.uploadParts(ctx, key, id, bufs, r, []filledPart{{first, n}, {second, m}}, eof)
	if err == nil {
		err = s.complete(ctx, key, id, parts)
	}
	if err != nil {
		s.abort(ctx, key, id)
		return 0, translate(err, "upload")
	}
	return total, nil
}

// partBuffers are one upload's part buffers, none kept after it (the
// memory is ffmpeg's then); a new one is made only when none is free.
type partBuffers struct {
	size int64
	mu   sync.Mutex
	free [][]byte
	made int
}

func (p *partBuffers) get() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	p.made++
	return make([]byte, p.size)
}

func (p *partBuffers) put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, b)
}

// readPart fills b from r; eof: r ended after the n bytes (a full b
// without eof may still be all there is).
func readPart(r io.Reader, b []byte) (n int, eof bool, err error) {
	for n < len(b) {
		var k int
		k, err = r.Read(b[n:])
		n += k
		if errors.Is(err, io.EOF) {
			return n, true, nil
		}
		if err != nil {
			return n, false, fmt.Errorf("read upload data: %w", err)
		}
	}
	return n, false, nil
}

type filledPart struct {
	buf []byte
	n   int
}

type completedPart struct {
	XMLName    xml.Name `xml:"Part"`
	ETag       string   `xml:"ETag"`
	PartNumber int      `xml:"PartNumber"`
}

// uploadParts sends ready and then the rest of r as parts 1, 2, …,
// concurrency at once, reading the next while they go; eof: nothing
// follows ready. It returns the parts in order and the bytes sent, or the
// first error, which cancels the parts in flight.
func (s *Store) uploadParts(ctx context.Context, key, id string, bufs *partBuffers, r io.Reader, ready []filledPart, eof bool) ([]completedPart, int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu        sync.Mutex
		firstErr  error
		completed []completedPart
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}

	slots := make(chan struct{}, s.concurrency)
	var wg sync.WaitGroup
	var total int64
	num := 0
	for {
		if len(ready) == 0 {
			if eof {
				break
			}
			if err := ctx.Err(); err != nil {
				fail(err)
				break
			}
			buf := bufs.get()
			n, end, err := readPart(r, buf)
			if err != nil || n == 0 {
				bufs.put(buf)
				if err != nil {
					fail(err)
				}
				break
			}
			ready, eof = append(ready, filledPart{buf, n}), end
		}
		part := ready[0]
		ready = ready[1:]
		if num == maxParts {
			bufs.put(part.buf)
			fail(fmt.Errorf("s3: the stream is longer than %d parts of %d bytes", maxParts, s.partSize))
			break
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if err := ctx.Err(); err != nil { // a part failed, or ctx ended
			bufs.put(part.buf)
			fail(err)
			break
		}
		num++
		total += int64(part.n)
		wg.Add(1)
		go func(num int, part filledPart) {
			defer wg.Done()
			defer func() { <-slots }()
			defer bufs.put(part.buf)
			etag, err := s.uploadPart(ctx, key, id, num, part.buf[:part.n])
			if err != nil {
				fail(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			completed = append(completed, completedPart{ETag: etag, PartNumber: num})
		}(num, part)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, 0, firstErr
	}
	slices.SortFunc(completed, func(a, b completedPart) int { return a.PartNumber - b.PartNumber })
	return completed, total, nil
}

func (s *Store) initiate(ctx context.Context, key, contentType string) (string, error) {
	rq := &request{method: http.MethodPost, key: key, query: url.Values{"uploads": {""}}}
	if contentType != "" {
		rq.header = http.Header{"Content-Type": {contentType}}
	}
	var id string
	rq.read = func(resp *http.Response) error {
		var out struct {
			UploadID string `xml:"UploadId"`
		}
		if err := decodeResult(resp, "InitiateMultipartUploadResult", &out); err != nil {
			return err
		}
		if out.UploadID == "" {
			return errors.New("s3: the store started a multipart upload without an upload id")
		}
		id = out.UploadID
		return nil
	}
	if err := s.do(ctx, rq); err != nil {
		return "", err
	}
	return id, nil
}

func (s *Store) uploadPart(ctx context.Context, key, uploadID string, num int, data []byte) (string, error) {
	var etag string
	err := s.do(ctx, &request{
		method: http.MethodPut,
		key:    key,
		query: url.Values{
			"partNumber": {strconv.Itoa(num)},
			"uploadId":   {uploadID},
			"x-id":       {"UploadPart"},
		},
		header: http.Header{"Content-Type": {defaultContentType}},
		body:   data,
		read: func(resp *http.Response) error {
			etag = resp.Header.Get("ETag")
			if etag == "" {
				return fmt.Errorf("s3: the store took part %d without an ETag", num)
			}
			return nil
		},
	})
	return etag, err
}

func (s *Store) complete(ctx context.Context, key, uploadID string, parts []completedPart) error {
	body, err := xml.Marshal(struct {
		XMLName xml.Name        `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CompleteMultipartUpload"`
		Parts   []completedPart `xml:"Part"`
	}{Parts: parts})
	if err != nil {
		return fmt.Errorf("s3: complete multipart upload: %w", err)
	}
	return s.do(ctx, &request{
		method: http.MethodPost,
		key:    key,
		query:  url.Values{"uploadId": {uploadID}},
		header: http.Header{"Content-Type": {"application/xml"}},
		body:   body,
		read: func(resp *http.Response) error {
			var out struct{}
			return decodeResult(resp, "CompleteMultipartUploadResult", &out)
		},
	})
}

// abort drops a multipart upload on a fresh context: ctx may be what
// failed it.
func (s *Store) abort(ctx context.Context, key, uploadID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	// Best effort: a lifecycle rule is the backstop.
	_ = s.do(ctx, &request{
		method: http.MethodDelete,
		key:    key,
		query:  url.Values{"uploadId": {uploadID}, "x-id": {"AbortMultipartUpload"}},
	})
}

// decodeResult decodes a 200's XML body rooted at want; a root of Error
// (S3 failing after the 200) is an *apiError.
func decodeResult(resp *http.Response, want string, out any) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	if err != nil {
		return err
	}
	if e := errorIn(resp, body); e != nil {
		return e
	}
	var root struct{ XMLName xml.Name }
	if err := xml.Unmarshal(body, &root); err == nil && root.XMLName.Local != want {
		return fmt.Errorf("s3: the store answered <%s>, not <%s>", root.XMLName.Local, want)
	}
	if err := xml.Unmarshal(body, out); err != nil {
		return fmt.Errorf("s3: the store's answer is not the XML expected (%s): %w", want, err)
	}
	return nil
}
