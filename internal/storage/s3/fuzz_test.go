package s3

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// countingReader counts what is read of it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// plain reports whether s survives an XML document unchanged and untrimmed.
func plain(s string) bool {
	if !utf8.ValidString(s) || s != strings.TrimSpace(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// FuzzReadError: whatever a failed answer holds — an S3 error document or
// any bytes, of any length, with any status — readError never panics, reads
// at most errorBodyLimit of the body, and returns an error whose text is
// bounded by what it read, with a non-empty trimmed Code and a trimmed
// Message; an error document's Code and Message are what it says.
func FuzzReadError(f *testing.F) {
	f.Add(404, "req-1", true, "NoSuchKey", "The specified key does not exist.", []byte(nil), uint8(0))
	f.Add(503, "", true, " SlowDown ", "\n reduce your rate \n", []byte(nil), uint8(0))
	f.Add(403, "h", false, "", "", []byte(`<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>no</Message><RequestId>r</RequestId></Error>`), uint8(0))
	f.Add(500, "", false, "", "", []byte(`<Error><Code>a</Code><Code>b</Code><Message><![CDATA[x]]></Message>`), uint8(200))
	f.Add(999, "", false, "", "", []byte(`<NotError><Code>X</Code></NotError>`), uint8(0))
	f.Add(0, "", false, "", "", []byte("\xff\x00<Error>"), uint8(80))
	f.Fuzz(func(t *testing.T, status int, headerID string, document bool, code, message string, body []byte, extraKiB uint8) {
		if document {
			var err error
			body, err = xml.Marshal(errorDocument{XMLName: xml.Name{Local: "Error"}, Code: code, Message: message})
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
		}
		full := append(body, bytes.Repeat([]byte("x"), int(extraKiB)*1024)...)
		src := &countingReader{r: bytes.NewReader(full)}
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(src)}
		if headerID != "" {
			resp.Header.Set("X-Amz-Request-Id", headerID)
		}

		e := readError(resp)

		if src.n > errorBodyLimit {
			t.Fatalf("read %d bytes of the body, the limit is %d", src.n, errorBodyLimit)
		}
		if e.Status != status {
			t.Fatalf("status %d, was %d", e.Status, status)
		}
		if e.Code == "" || e.Code != strings.TrimSpace(e.Code) || e.Message != strings.TrimSpace(e.Message) {
			t.Fatalf("code %q, message %q", e.Code, e.Message)
		}
		// The text holds the status, fixed words, the header's request id
		// and, from the body read, at most that many bytes.
		if limit := src.n + len(resp.Header.Get("X-Amz-Request-Id")) + 128; len(e.Error()) > limit {
			t.Fatalf("error text of %d bytes from a body of %d", len(e.Error()), src.n)
		}
		if document && plain(code) && plain(message) && len(full) <= errorBodyLimit {
			if code != "" && e.Code != code || e.Message != message {
				t.Fatalf("document with code %q, message %q read as %q, %q", code, message, e.Code, e.Message)
			}
		}
	})
}
