// Function ingest runs on Object Storage "ObjectCreate" events under
// sources/: it claims the object's job, probes and converts the audio, and
// submits it for recognition. Entrypoint: index.Handler.
package main

import (
	"context"
	"os"

	"transcriber/internal/app"
	"transcriber/internal/app/withbot"
	"transcriber/internal/trigger"
)

var instance = app.Instance{Build: app.CloudBuild(os.Getenv, withbot.Option)}

type Response struct {
	StatusCode int `json:"statusCode"`
}

// Handler handles a batch of events; on error the trigger delivers it
// again, which is safe: handling is idempotent.
func Handler(ctx context.Context, ev *trigger.ObjectEvent) (*Response, error) {
	a, err := instance.Get(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.OnObjects(ctx, ev); err != nil {
		return nil, err
	}
	return &Response{StatusCode: 200}, nil
}
