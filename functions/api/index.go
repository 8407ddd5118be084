// Function api serves the HTTP API behind API Gateway: jobs with presigned
// uploads, their transcripts, deletion. Entrypoint: index.Handler.
package main

import (
	"context"
	"log/slog"
	"os"

	"transcriber/internal/app"
	"transcriber/internal/clock"
	"transcriber/internal/httpapi"
)

var instance = app.Instance{Build: app.CloudBuild(os.Getenv, app.NoMedia)}

// Handler answers one API Gateway request (payload format 1.0). The
// deadline comes first: the instance's start and the request share the
// function's timeout, and the answer comes before the platform stops it.
func Handler(ctx context.Context, ev *httpapi.GatewayRequest) (*httpapi.GatewayResponse, error) {
	ctx, cancel := httpapi.CallContext(ctx, clock.System().Now())
	defer cancel()
	a, err := instance.Get(ctx)
	if err != nil {
		return httpapi.NotReady(ctx, slog.Default(), err), nil
	}
	return httpapi.ServeGateway(ctx, a.API, a.Log, ev)
}
