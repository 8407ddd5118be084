// Package trigger decodes Cloud Functions trigger events (raw integration;
// docs/events.md) for the pipeline.
package trigger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

const (
	TypeObjectCreate = "yandex.cloud.events.storage.ObjectCreate"
	TypeTimer        = "yandex.cloud.events.serverless.triggers.TimerMessage"
)

type Metadata struct {
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	CreatedAt string `json:"created_at"`
	CloudID   string `json:"cloud_id"`
	FolderID  string `json:"folder_id"`
}

// ObjectEvent is 1 to 10 Object Storage notifications.
type ObjectEvent struct {
	Messages []ObjectMessage `json:"messages"`
}

type ObjectMessage struct {
	Metadata Metadata `json:"event_metadata"`
	Details  struct {
		BucketID string `json:"bucket_id"`
		ObjectID string `json:"object_id"`
	} `json:"details"`
}

type TimerEvent struct {
	Messages []struct {
		Metadata Metadata `json:"event_metadata"`
		Details  struct {
			TriggerID string `json:"trigger_id"`
			Payload   string `json:"payload"`
		} `json:"details"`
	} `json:"messages"`
}

// Uploads is the pipeline's Uploaded.
type Uploads interface {
	Uploaded(ctx context.Context, key string) error
}

// HandleObjects passes each created object of bucket to u, skipping
// others. Handling is idempotent, so the whole batch may be redelivered
// on the joined error.
func HandleObjects(ctx context.Context, log *slog.Logger, bucket string, ev ObjectEvent, u Uploads) error {
	if len(ev.Messages) == 0 {
		log.WarnContext(ctx, "event empty")
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
