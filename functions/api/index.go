// Function api serves the HTTP API behind API Gateway: jobs with presigned
// uploads, their transcripts, deletion. Entrypoint: index.Handler.
package main

import (
	"context"
	"os"

	"transcriber/internal/app"
	"transcriber/internal/httpapi"
)

var instance = app.Instance{Build: app.CloudBuild(os.Getenv, app.NoMedia)}

// Handler answers one API Gateway request (payload format 1.0).
func Handler(ctx context.Context, ev *httpapi.GatewayRequest) (*httpapi.GatewayResponse, error) {
	a, err := instance.Get(ctx)
	if err != nil {
		return nil, err
	}
	return a.API.Gateway(ctx, ev)
}
