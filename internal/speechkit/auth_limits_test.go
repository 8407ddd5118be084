package speechkit

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock"
)

// fetchFrom runs fetch against a metadata service answering body.
func fetchFrom(t *testing.T, body string) (string, time.Duration, error) {
	t.Helper()
	src := &tokenSource{url: "http://metadata.invalid/token", clock: clock.System(), http: &http.Client{Transport: answer{http.StatusOK, []byte(body)}}}
	return src.fetch(context.Background())
}

// An IAM token lives at most 12 hours: a longer expires_in is refused, so
// it can neither overflow time.Duration (1e10 s would be a negative
// lifetime) nor keep a token cached past its real life.
func TestMetadataLifetimeIsAnIAMTokens(t *testing.T) {
	for _, expiresIn := range []int64{-5, 0, 43201, 1e10, 9223372036854775807} {
		tok, ttl, err := fetchFrom(t, `{"access_token":"t1.tok","expires_in":`+strconv.FormatInt(expiresIn, 10)+`}`)
		require.Error(t, err, "expires_in %d", expiresIn)
		require.Empty(t, tok)
		require.Zero(t, ttl)
		require.NotContains(t, err.Error(), "t1.tok")
	}
	tok, ttl, err := fetchFrom(t, `{"access_token":"t1.tok","expires_in":43200,"token_type":"Bearer"}`)
	require.NoError(t, err)
	require.Equal(t, "t1.tok", tok)
	require.Equal(t, 12*time.Hour, ttl)
}

// The metadata service's own strings are quoted in errors only in part.
func TestMetadataErrorsQuoteLittle(t *testing.T) {
	long := strings.Repeat("Я", 5000)
	_, _, err := fetchFrom(t, `{"access_token":"t1.tok","expires_in":60,"token_type":"`+long+`"}`)
	require.Error(t, err)
	require.Less(t, len(err.Error()), 200, "%s", err)
	require.Contains(t, err.Error(), "ЯЯЯ", "the start of the type is shown")
	require.True(t, strings.ToValidUTF8(err.Error(), "") == err.Error(), "cut at a character boundary")
}
