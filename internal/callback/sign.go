package callback

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// SecretPrefix begins a webhook secret (apitoken.Token.WebhookSecret):
// the Standard Webhooks form, "whsec_" and the key in standard base64.
const SecretPrefix = "whsec_"

// errBadSecret: a stored webhook secret is not of the form made. The
// secret is never in the error.
var errBadSecret = errors.New("the token's webhook secret is malformed")

// Key returns the HMAC key of a webhook secret: the bytes its base64
// spells.
func Key(secret string) ([]byte, error) {
	if !strings.HasPrefix(secret, SecretPrefix) {
		return nil, errBadSecret
	}
	key, err := base64.StdEncoding.DecodeString(secret[len(SecretPrefix):])
	if err != nil || len(key) < 24 {
		return nil, errBadSecret
	}
	return key, nil
}

// Sign returns the webhook-signature header of a delivery: "v1," and the
// standard base64 of HMAC-SHA256, keyed by key, over
// "<webhook-id>.<webhook-timestamp>.<body>".
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
