// Package callback tells an API client that its job ended: a signed POST
// to the job's callback_url, in the Standard Webhooks convention
// (standardwebhooks.com). Its outbox entry is put with the job and due a
// while after, the net under a lost end notification. Receivers dedupe by
// the webhook-id, the same on every attempt.
package callback

import (
	"encoding/json"
	"fmt"
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
