package speechkit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"transcriber/internal/clock"
)

// answer is a metadata service that answers every request with one status
// and body, without a network.
type answer struct {
	status int
	body   []byte
}

func (a answer) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: a.status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(a.body))}, nil
}

// FuzzMetadataToken: whatever the metadata service answers, fetch never
// panics; it takes a token only from a 200 answer in the documented JSON,
// with a non-empty token, a lifetime of 1 s to 12 h and a Bearer (or no) type,
// and its errors never quote the token the answer held.
func FuzzMetadataToken(f *testing.F) {
	f.Add(200, []byte(`{"access_token":"t1.secret-token-value","expires_in":43200,"token_type":"Bearer"}`))
	f.Add(200, []byte(`{"access_token":"t1.secret-token-value","expires_in":0}`))
	f.Add(200, []byte(`{"access_token":"t1.secret-token-value","expires_in":10000000000}`))
	f.Add(200, []byte(`{"access_token":"t1.secret-token-value","expires_in":5,"token_type":"MAC"}`))
	f.Add(500, []byte(`{"access_token":"t1.secret-token-value","expires_in":5}`))
	f.Add(200, []byte(`{"ACCESS_TOKEN":"x","expires_in":1e3}`))
	f.Add(200, []byte(`t1.secret-token-value`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			status = 200 // net/http answers only three-digit statuses
		}
		src := &tokenSource{url: "http://metadata.invalid/token", clock: clock.System(), http: &http.Client{Transport: answer{status, body}}}

		tok, ttl, err := src.fetch(context.Background())

		var mt metadataToken
		decoded := json.Unmarshal(body, &mt) == nil
		if err == nil {
			if status != http.StatusOK || !decoded || tok == "" || tok != mt.AccessToken {
				t.Fatalf("took %q from a %d answer %q", tok, status, body)
			}
			if mt.TokenType != "" && !strings.EqualFold(mt.TokenType, "Bearer") {
				t.Fatalf("took a token of type %q", mt.TokenType)
			}
			if mt.ExpiresIn <= 0 || mt.ExpiresIn > 43200 || ttl != time.Duration(mt.ExpiresIn)*time.Second {
				t.Fatalf("lifetime %v from expires_in %d", ttl, mt.ExpiresIn)
			}
			return
		}
		if tok != "" || ttl != 0 {
			t.Fatalf("an error (%v) with token %q and lifetime %v", err, tok, ttl)
		}
		// A token of one or two characters may occur in any sentence; the
		// token type is quoted when it is refused, so one holding the token
		// may show it.
		if decoded && len(mt.AccessToken) > 2 && !strings.Contains(mt.TokenType, mt.AccessToken) &&
			strings.Contains(err.Error(), mt.AccessToken) {
			t.Fatalf("the error quotes the token: %v", err)
		}
	})
}
