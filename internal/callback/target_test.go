package callback

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/outbox"
)

// A target needs its URL, token and webhook id; it round-trips through
// its payload, a URL's & kept one byte.
func TestTargetPayload(t *testing.T) {
	good := Target{URL: "https://hooks.example.com/x?a=1&b=2", TokenHash: "h", WebhookID: "msg_1"}
	p, err := good.payload()
	require.NoError(t, err)
	require.Equal(t, good, DeliveryOf(outbox.Entry{Payload: p}).Target)
	require.Contains(t, p, "a=1&b=2")

	long := good
	long.URL = "https://x.example.com/?" + strings.Repeat("&", MaxURLLen-len("https://x.example.com/?"))
	p, err = long.payload()
	require.NoError(t, err)
	require.LessOrEqual(t, len(p), outbox.MaxPayloadLen, "the longest URL fits")

	for what, bad := range map[string]Target{
		"no url":     {TokenHash: "h", WebhookID: "w"},
		"long url":   {URL: "https://x.example.com/" + strings.Repeat("a", MaxURLLen), TokenHash: "h", WebhookID: "w"},
		"no token":   {URL: "https://x.example.com/", WebhookID: "w"},
		"no webhook": {URL: "https://x.example.com/", TokenHash: "h"},
	} {
		_, err := bad.payload()
		require.ErrorIs(t, err, outbox.ErrInvalid, what)
		require.Equal(t, errs.Invalid, errs.KindOf(err), what)
	}
}
