package httpapi

import (
	"bytes"
	"net/http"
)

// recorder keeps a handler's answer, as httptest.ResponseRecorder does
// (which would link a test package into the binary): the first status
// wins, a body written first is 200 with its Content-Type sniffed, and
// snap is the header as it was when the status was written.
type recorder struct {
	Code         int
	Body         bytes.Buffer
	header, snap http.Header
}

func newRecorder() *recorder { return &recorder{Code: http.StatusOK, header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.snap == nil {
		r.Code, r.snap = code, r.header.Clone()
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if _, ok := r.header["Content-Type"]; r.snap == nil && !ok && r.header.Get("Transfer-Encoding") == "" {
		r.header.Set("Content-Type", http.DetectContentType(b))
	}
	r.WriteHeader(http.StatusOK)
	return r.Body.Write(b)
}

// sent is the header as the client would get it.
func (r *recorder) sent() http.Header {
	if r.snap == nil {
		return r.header.Clone()
	}
	return r.snap
}
