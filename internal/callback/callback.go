// Package callback tells an API client that its job ended: a signed POST
// to the job's callback_url, in the Standard Webhooks convention
// (standardwebhooks.com). Its outbox entry is put with the job and due a
// while after, the net under a lost end notification. Receivers dedupe by
// the webhook-id, the same on every attempt.
package callback

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"transcriber/internal/outbox"
)

// Target is where a callback goes and who signs it: its entry's payload.
type Target struct {
	URL       string `json:"url"`        // checked by CheckURL
	TokenHash string `json:"token_hash"` // the token that made the job: its webhook secret signs
	WebhookID string `json:"webhook_id"`
}

// Delivery is a job's callback: its entry and its target.
type Delivery struct {
	outbox.Entry
	Target
}

// DeliveryOf reads e's target; a payload that does not parse leaves it
// empty.
func DeliveryOf(e outbox.Entry) Delivery {
	d := Delivery{Entry: e}
	_ = json.Unmarshal([]byte(e.Payload), &d.Target)
	return d
}

func (t Target) payload() (string, error) {
	const maxID = 64
	switch {
	case t.URL == "" || len(t.URL) > MaxURLLen:
		return "", fmt.Errorf("%w: a URL of 1 to %d bytes is needed", outbox.ErrInvalid, MaxURLLen)
	case t.TokenHash == "" || len(t.TokenHash) > maxID:
		return "", fmt.Errorf("%w: the token's hash is needed", outbox.ErrInvalid)
	case t.WebhookID == "" || len(t.WebhookID) > maxID:
		return "", fmt.Errorf("%w: a webhook id of 1 to %d bytes is needed", outbox.ErrInvalid, maxID)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a URL's & stays one byte: twice MaxURLLen fits the payload
	err := enc.Encode(t)
	return strings.TrimSpace(b.String()), err
}

// Key returns the HMAC key a webhook secret spells: "whsec_" and the key
// in standard base64, the Standard Webhooks form. The error never carries
// the secret.
func Key(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, "whsec_")
	key, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(key) < 24 {
		return nil, errors.New("the token's webhook secret is malformed")
	}
	return key, nil
}

// Sign returns the webhook-signature header: "v1," and the base64 of
// HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>".
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
