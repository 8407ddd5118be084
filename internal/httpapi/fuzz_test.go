package httpapi

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/storage/s3"
)

// FuzzParseCreate: whatever the body, decoding answers a request that keeps
// the rules or an Invalid error, and never panics.
func FuzzParseCreate(f *testing.F) {
	cfg := Config{ValidLanguage: func(l string) bool { return l == "ru-RU" }}.withDefaults()
	for _, s := range []string{
		`{"filename":"a.ogg","size_bytes":10}`,
		`{"filename":"a.ogg","size_bytes":10,"content_type":"audio/ogg; codecs=opus","language":"ru-RU"}`,
		`{"filename":"","size_bytes":-1}`, `{}`, `[]`, `null`, `{"filename":"a","size_bytes":1e30}`,
		`{"filename":"a\u0000b","size_bytes":1}`, `{"x":1}`, `{"filename":"a\u202egpm.exe\u001b[31m","size_bytes":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseCreate(body, cfg)
		if err != nil {
			if errs.KindOf(err) != errs.Invalid {
				t.Fatalf("a bad body must be Invalid, got %v", err)
			}
			return
		}
		if req.Filename == "" || len(req.Filename) > 255 || !utf8.ValidString(req.Filename) ||
			strings.IndexFunc(req.Filename, job.UnsafeFilenameRune) >= 0 {
			t.Fatalf("accepted filename %q", req.Filename)
		}
		if req.SizeBytes <= 0 || req.SizeBytes > s3.MaxPutSize {
			t.Fatalf("accepted size %d", req.SizeBytes)
		}
		if !cfg.ValidLanguage(req.Language) {
			t.Fatalf("accepted language %q", req.Language)
		}
	})
}

// FuzzGatewayPath: whatever the event's path fields, the request built from
// them is refused (an event of format 0.1, with url, as the deployment's
// fault) or has exactly the event's path, which starts with a slash.
func FuzzGatewayPath(f *testing.F) {
	f.Add("/v1/jobs/01jd0m3y8k9q2r5t7v4w6x8z0a", "")
	f.Add("/v1/jobs/{id}", "/v1/jobs/01jd0m3y8k9q2r5t7v4w6x8z0a?format=vtt")
	f.Add("/v1/jobs/../../etc", "")
	f.Add("//evil.example/x", "")
	f.Fuzz(func(t *testing.T, path, rawURL string) {
		ev := &GatewayRequest{HTTPMethod: "GET", Path: path, URL: rawURL}
		r, err := ev.request(context.Background())
		if err != nil {
			want := errs.Invalid
			if rawURL != "" {
				want = errs.Internal
			}
			if errs.KindOf(err) != want {
				t.Fatalf("the event (path %q, url %q) must be %v, got %v", path, rawURL, want, err)
			}
			return
		}
		if rawURL != "" {
			t.Fatalf("an event of format 0.1 (url %q) was served", rawURL)
		}
		if r.URL.Path != path || path == "" || path[0] != '/' || r.Host != "" {
			t.Fatalf("event path %q became %q on host %q", path, r.URL.Path, r.Host)
		}
	})
}
