package speechkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"transcriber/internal/errs"
)

// FuzzSyncAnswer: whatever synchronous recognition answers (status, body,
// billing header), reading it never panics; a text comes only from a 200
// whose body is at most 64 KiB of JSON with a string "result"; the billed
// seconds are the header's only when it is a positive multiple of 15 up to
// 60, else the rule's, never 0; an error's text is bounded and never
// quotes the API key, even from a body that holds it.
func FuzzSyncAnswer(f *testing.F) {
	const key = "fuzz-api-key-value"
	f.Add(200, []byte(`{"result": "привет мир"}`), "15")
	f.Add(200, []byte(`{"result": ""}`), "")
	f.Add(200, []byte(`{"result": null}`), "30")
	f.Add(200, []byte(`{"error_code": "X"}`), "1")
	f.Add(429, []byte(`{"error_code": "RESOURCE_EXHAUSTED", "error_message": "quota"}`), "")
	f.Add(400, []byte(`{"error_code": "BAD_REQUEST", "error_message": "Api-Key `+key+` is bad"}`), "")
	f.Add(503, []byte(`<html>`), "")
	f.Add(200, []byte(`{"result": "a"}`), "-15")
	f.Fuzz(func(t *testing.T, status int, body []byte, billing string) {
		if status < 100 || status > 999 {
			status = 200 // net/http answers only three-digit statuses
		}
		c := &Client{cfg: Config{APIKey: key}, auth: &Authorizer{apiKey: key}}
		h := http.Header{}
		if billing != "" {
			h.Set(SyncBillingHeader, billing)
		}
		resp := &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(bytes.NewReader(body))}

		res, err := c.syncAnswer(resp, 12_000)

		if err == nil {
			var a struct{ Result *string }
			if status != http.StatusOK || len(body) > maxSyncAnswer || json.Unmarshal(body, &a) != nil || a.Result == nil || *a.Result != res.Text {
				t.Fatalf("took %q from a %d answer %q", res.Text, status, body)
			}
			n, ok := billedHeader(h.Values(SyncBillingHeader))
			switch {
			case ok && (n != res.BilledSeconds || n%15 != 0 || n <= 0 || n > 60):
				t.Fatalf("billing header %q gave %d", billing, res.BilledSeconds)
			case !ok && res.BilledSeconds != 15:
				t.Fatalf("12 s by the rule billed %d", res.BilledSeconds)
			}
			return
		}
		if errs.KindOf(err) == errs.Internal && errs.CodeOf(err) == "" {
			t.Fatalf("an unclassified error: %v", err)
		}
		if strings.Contains(err.Error(), key) || strings.Contains(errs.MessageOf(err), key) {
			t.Fatalf("the error quotes the key: %v", err)
		}
		if len(err.Error()) > 1024 {
			t.Fatalf("an error of %d bytes", len(err.Error()))
		}
	})
}

// A key quoted where the message is cut for the log leaves no part of
// itself: secrets go before the cut.
func TestSyncRefusalCutsAfterScrubbing(t *testing.T) {
	const key = "a-long-secret-api-key-0123456789"
	c := &Client{cfg: Config{APIKey: key}, auth: &Authorizer{apiKey: key}}
	msg := strings.Repeat("x", maxErrorQuoted-10) + key
	body, err := json.Marshal(map[string]string{"error_code": "BAD_REQUEST", "error_message": msg})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.syncAnswer(&http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body))}, 1000)
	if err == nil || strings.Contains(err.Error(), key[:10]) {
		t.Fatalf("a part of the key is in %v", err)
	}
}
