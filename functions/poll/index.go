// Function poll runs on a timer, every minute: it checks recognitions in
// flight, writes finished transcripts, and sweeps jobs whose attempt failed,
// whose claim expired or whose upload never came. Entrypoint: index.Handler.
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

func Handler(ctx context.Context, ev *trigger.TimerEvent) (*Response, error) {
	a, err := instance.Get(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.OnTimer(ctx, ev); err != nil {
		return nil, err
	}
	return &Response{StatusCode: 200}, nil
}
