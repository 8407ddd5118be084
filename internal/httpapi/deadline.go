package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"transcriber/internal/errs"
)

const (
	// FunctionTimeout is the api function's execution_timeout
	// (terraform/functions.tf; terraform/tftest holds them equal): past it
	// the client gets the gateway's error, not ours.
	FunctionTimeout = 30 * time.Second
	// AnswerMargin is kept at a call's end to answer; the platform counts
	// the instance's start in the call's time too.
	AnswerMargin          = 5 * time.Second
	DefaultRequestTimeout = FunctionTimeout - AnswerMargin
)

// errTimedOut is a 503 with Retry-After: a slow store may recover.
var errTimedOut = errs.New(errs.Unavailable, "request_timeout", "the request took too long; try again")

// CallContext bounds one call of the api function, its start included:
// AnswerMargin before FunctionTimeout after start or before ctx's own
// deadline, whichever is first. The store calls share this one deadline
// (the YDB store would give a call without one the function's whole 30 s).
func CallContext(ctx context.Context, start time.Time) (context.Context, context.CancelFunc) {
	deadline := start.Add(FunctionTimeout - AnswerMargin)
	if d, ok := ctx.Deadline(); ok && d.Add(-AnswerMargin).Before(deadline) {
		deadline = d.Add(-AnswerMargin)
	}
	return context.WithDeadline(ctx, deadline)
}

// within runs serve under the request's deadline and answers what it
// wrote or, past the deadline (or an error caused by it), 503
// request_timeout before the platform stops the call. serve writes into a
// buffer, so what it writes late reaches no one.
func (a *API) within(w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter, *http.Request)) {
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.RequestTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	rec := newRecorder()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		serve(rec, r)
	}()
	select {
	case p := <-done:
		switch {
		case p != nil:
			writeError(w, r, a.Log, errs.Wrap(fmt.Errorf("handler panicked: %v", p), errs.Internal, "internal", ""))
		case rec.Code >= http.StatusInternalServerError && ctx.Err() != nil:
			writeError(w, r, a.Log, errTimedOut)
		default:
			for k, vs := range rec.sent() {
				w.Header()[k] = vs
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		}
	case <-ctx.Done():
		writeError(w, r, a.Log, errTimedOut)
	}
}
