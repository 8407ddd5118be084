// Package callback tells an API client that its job ended: a signed POST
// to the callback_url the job was made with, in the Standard Webhooks
// convention (standardwebhooks.com).
//
// A job made with a callback_url has an outbox entry (kind Callback, keyed
// by the job id), put when the job is made and due a while after it (the
// sweep then finds a job whose end notification was lost, and puts back
// one not ended). Receivers dedupe by the webhook-id, the same on every
// attempt. Attempts counts POSTs only.
package callback

import (
	"encoding/json"
	"fmt"
	"strings"

	"transcriber/internal/outbox"
)

// Target is where a callback goes and who signs it: its entry's payload.
type Target struct {
	URL       string `json:"url"`        // the job's callback_url, checked by CheckURL
	TokenHash string `json:"token_hash"` // the API token whose webhook secret signs it: the one that made the job
	WebhookID string `json:"webhook_id"` // the webhook-id header, the same on every attempt
}

// Delivery is a job's callback: its entry and its target.
type Delivery struct {
	outbox.Entry
	Target
}

// DeliveryOf reads e's target; a payload that does not parse leaves it
// empty (never written so).
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
