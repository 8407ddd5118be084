package trigger_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"unicode/utf8"

	"transcriber/internal/trigger"
)

// handled runs HandleObjects on ev for bucket and returns the keys it
// passed on.
func handled(t *testing.T, bucket string, ev trigger.ObjectEvent) []string {
	t.Helper()
	r := &recorder{}
	if err := trigger.HandleObjects(context.Background(), slog.New(slog.NewJSONHandler(io.Discard, nil)), bucket, ev, r); err != nil {
		t.Fatalf("no upload failed, yet: %v", err)
	}
	return r.keys
}

// FuzzObjectEvent: whatever JSON the storage trigger sends, decoding and
// handling never panic; exactly the ObjectCreate messages of the bucket are
// passed on, in order, each with its object key as decoded (valid UTF-8);
// and the event encoded again and decoded gives the same keys.
func FuzzObjectEvent(f *testing.F) {
	f.Add([]byte(objectEvent), "data")
	f.Add([]byte(objectEvent), "")
	f.Add([]byte(`{"messages":[{"event_metadata":{"event_type":"yandex.cloud.events.storage.ObjectCreate"},"details":{"bucket_id":"data","object_id":"sources/a\u0000b\ud800\\u2028"}}]}`), "data")
	f.Add([]byte("{\"messages\":[{\"event_metadata\":{\"event_type\":\"yandex.cloud.events.storage.ObjectCreate\"},\"details\":{\"bucket_id\":\"d\",\"object_id\":\"\xff/../x\"}}]}"), "d")
	f.Add([]byte(`{"messages":null}`), "data")
	f.Add([]byte(`{"messages":[{}]}`), "")
	f.Add([]byte(`{"messages":[{"details":{"object_id":1}}]}`), "")
	f.Fuzz(func(t *testing.T, body []byte, bucket string) {
		var ev trigger.ObjectEvent
		if json.Unmarshal(body, &ev) != nil {
			return
		}
		keys := handled(t, bucket, ev)

		var want []string
		for _, m := range ev.Messages {
			if m.Metadata.EventType == trigger.TypeObjectCreate && (bucket == "" || m.Details.BucketID == bucket) {
				want = append(want, m.Details.ObjectID)
			}
		}
		if !reflect.DeepEqual(keys, want) {
			t.Fatalf("passed on %q, want %q", keys, want)
		}
		for _, k := range keys {
			if !utf8.ValidString(k) {
				t.Fatalf("key %q is not valid UTF-8", k)
			}
		}

		again, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("a decoded event does not encode: %v", err)
		}
		var back trigger.ObjectEvent
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("an encoded event does not decode: %v", err)
		}
		if got := handled(t, bucket, back); !reflect.DeepEqual(got, keys) {
			t.Fatalf("after a round trip passed on %q, before %q", got, keys)
		}
	})
}

// FuzzTimerEvent: whatever JSON the timer trigger sends, decoding never
// panics, and what was decoded encodes and decodes to the same event.
func FuzzTimerEvent(f *testing.F) {
	f.Add([]byte(`{"messages":[{"event_metadata":{"event_id":"t1","event_type":"yandex.cloud.events.serverless.triggers.TimerMessage","created_at":"2026-11-29T10:00:00Z"},"details":{"trigger_id":"a1b2","payload":""}}]}`))
	f.Add([]byte(`{"messages":[{"details":{"payload":"\u0000\ud800"}}]}`))
	f.Add([]byte("{\"messages\":[{\"details\":{\"payload\":\"\xff\"}}]}"))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var ev trigger.TimerEvent
		if json.Unmarshal(body, &ev) != nil {
			return
		}
		again, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("a decoded event does not encode: %v", err)
		}
		var back trigger.TimerEvent
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("an encoded event does not decode: %v", err)
		}
		if !reflect.DeepEqual(back, ev) {
			t.Fatalf("round trip changed the event: %+v, was %+v", back, ev)
		}
	})
}
