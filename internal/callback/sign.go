package callback

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// SecretPrefix begins a webhook secret: "whsec_" and the key in standard
// base64, the Standard Webhooks form.
const SecretPrefix = "whsec_"

// errBadSecret never carries the secret.
var errBadSecret = errors.New("the token's webhook secret is malformed")

// Key returns the HMAC key a webhook secret spells.
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

// Sign returns the webhook-signature header: "v1," and the base64 of
// HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>".
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
