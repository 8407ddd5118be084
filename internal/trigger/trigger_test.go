package trigger_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/trigger"
)

// The event as Object Storage triggers send it (docs/platform.md, "Triggers").
const objectEvent = `{"messages":[
 {"event_metadata":{"event_id":"e1","event_type":"yandex.cloud.events.storage.ObjectCreate","created_at":"2026-11-29T10:00:00.000Z","cloud_id":"c","folder_id":"f"},
  "details":{"bucket_id":"data","object_id":"sources/01jd0m3y8k9q2r5t7v4w6x8z0a"}},
 {"event_metadata":{"event_id":"e2","event_type":"yandex.cloud.events.storage.ObjectDelete"},
  "details":{"bucket_id":"data","object_id":"sources/01jd0m3y8k9q2r5t7v4w6x8z0b"}},
 {"event_metadata":{"event_id":"e3","event_type":"yandex.cloud.events.storage.ObjectCreate"},
  "details":{"bucket_id":"other","object_id":"sources/01jd0m3y8k9q2r5t7v4w6x8z0c"}},
 {"event_metadata":{"event_id":"e4","event_type":"yandex.cloud.events.storage.ObjectCreate"},
  "details":{"bucket_id":"data","object_id":"sources/01jd0m3y8k9q2r5t7v4w6x8z0d"}}
]}`

type recorder struct {
	keys []string
	fail map[string]error
}

func (r *recorder) Uploaded(_ context.Context, key string) error {
	r.keys = append(r.keys, key)
	return r.fail[key]
}

func TestHandleObjectsPassesCreatedObjectsOfTheBucket(t *testing.T) {
	var ev trigger.ObjectEvent
	require.NoError(t, json.Unmarshal([]byte(objectEvent), &ev))
	r := &recorder{}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	require.NoError(t, trigger.HandleObjects(context.Background(), log, "data", ev, r))
	require.Equal(t, []string{"sources/01jd0m3y8k9q2r5t7v4w6x8z0a", "sources/01jd0m3y8k9q2r5t7v4w6x8z0d"}, r.keys)
}

func TestHandleObjectsReportsFailuresAndGoesOn(t *testing.T) {
	var ev trigger.ObjectEvent
	require.NoError(t, json.Unmarshal([]byte(objectEvent), &ev))
	boom := errors.New("store down")
	r := &recorder{fail: map[string]error{"sources/01jd0m3y8k9q2r5t7v4w6x8z0a": boom}}
	err := trigger.HandleObjects(context.Background(), slog.New(slog.NewJSONHandler(io.Discard, nil)), "data", ev, r)
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "event e1")
	require.Len(t, r.keys, 2, "a failed message does not stop the batch")
}

func TestTimerEventDecodes(t *testing.T) {
	const timer = `{"messages":[{"event_metadata":{"event_id":"t1","event_type":"yandex.cloud.events.serverless.triggers.TimerMessage","created_at":"2026-11-29T10:00:00Z"},"details":{"trigger_id":"a1b2","payload":""}}]}`
	var ev trigger.TimerEvent
	require.NoError(t, json.Unmarshal([]byte(timer), &ev))
	require.Equal(t, trigger.TypeTimer, ev.Messages[0].Metadata.EventType)
	require.Equal(t, "a1b2", ev.Messages[0].Details.TriggerID)
}
