// Package trigger decodes the events Cloud Functions triggers send
// (integration "raw": the body is the event JSON) and hands each message to
// the pipeline. The shapes are the documented ones; docs/events.md has
// examples.
package trigger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Event types this service handles.
const (
	TypeObjectCreate = "yandex.cloud.events.storage.ObjectCreate"
	TypeTimer        = "yandex.cloud.events.serverless.triggers.TimerMessage"
)

// Metadata is common to every trigger message.
type Metadata struct {
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	CreatedAt string `json:"created_at"`
	CloudID   string `json:"cloud_id"`
	FolderID  string `json:"folder_id"`
}

// ObjectEvent is a batch of Object Storage notifications (1 to 10 messages).
type ObjectEvent struct {
	Messages []ObjectMessage `json:"messages"`
}

// ObjectMessage is one object's notification.
type ObjectMessage struct {
	Metadata Metadata `json:"event_metadata"`
	Details  struct {
		BucketID string `json:"bucket_id"`
		ObjectID string `json:"object_id"`
	} `json:"details"`
}

// TimerEvent is a timer trigger's call.
type TimerEvent struct {
	Messages []struct {
		Metadata Metadata `json:"event_metadata"`
		Details  struct {
			TriggerID string `json:"trigger_id"`
			Payload   string `json:"payload"`
		} `json:"details"`
	} `json:"messages"`
}

// Uploads is what the ingest trigger feeds: the pipeline's Uploaded.
type Uploads interface {
	Uploaded(ctx context.Context, key string) error
}

// HandleObjects passes each created object of bucket to u. Messages of
// another type or bucket are logged and skipped. The error joins the
// messages that should be delivered again; since handling is idempotent,
// the trigger may redeliver the whole batch.
func HandleObjects(ctx context.Context, log *slog.Logger, bucket string, ev ObjectEvent, u Uploads) error {
	if len(ev.Messages) == 0 {
		log.WarnContext(ctx, "object storage event with no messages")
	}
	var failed []error
	for _, m := range ev.Messages {
		d := m.Details
		if m.Metadata.EventType != TypeObjectCreate || (bucket != "" && d.BucketID != bucket) {
			log.WarnContext(ctx, "event skipped", "event_type", m.Metadata.EventType, "bucket", d.BucketID, "event_id", m.Metadata.EventID)
			continue
		}
		if err := u.Uploaded(ctx, d.ObjectID); err != nil {
			failed = append(failed, fmt.Errorf("event %s: %w", m.Metadata.EventID, err))
		}
	}
	return errors.Join(failed...)
}
