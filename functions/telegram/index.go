// Function telegram is the bot's webhook behind API Gateway: it checks the
// secret header, records the job for a voice message, audio, video or
// document, answers in the chat and streams the file into storage, whose
// upload event starts ingest. Entrypoint: index.Handler.
package main

import (
	"context"
	"os"

	"transcriber/internal/app"
	"transcriber/internal/app/withbot"
	"transcriber/internal/httpapi"
)

var instance = app.Instance{Build: app.CloudBuild(os.Getenv, app.NoMedia, withbot.Option)}

// Handler answers one webhook request passed on by API Gateway.
func Handler(ctx context.Context, ev *httpapi.GatewayRequest) (*httpapi.GatewayResponse, error) {
	a, err := instance.Get(ctx)
	if err != nil {
		return nil, err
	}
	return a.OnTelegram(ctx, ev)
}
