package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"transcriber/internal/errs"
)

// FunctionTimeout is the api function's execution_timeout
// (terraform/functions.tf; terraform/tftest holds the two equal). The
// platform stops a call that runs longer, and the client then gets the
// gateway's error, not ours.
const FunctionTimeout = 30 * time.Second

// AnswerMargin is what a call keeps at its end to answer: the error
// written, the response encoded and handed back to the platform, which
// also counts the instance's start in the call's time.
const AnswerMargin = 5 * time.Second

// DefaultRequestTimeout is how long the API lets a request's work run
// when nothing gave it an earlier deadline: the function's timeout less
// the margin to answer.
const DefaultRequestTimeout = FunctionTimeout - AnswerMargin

// codeTimedOut is the error of a request whose work outran its deadline.
const codeTimedOut = "request_timeout"

// errTimedOut answers a request whose work did not end by its deadline.
// It is Unavailable, so it is a 503 with Retry-After: what was slow (a
// store reconnecting after the instance slept, a dependency overloaded)
// may pass.
var errTimedOut = errs.New(errs.Unavailable, codeTimedOut, "the request took too long; try again")

// CallContext bounds one call of the api function: its work, the
// instance's start included (opening the job store on a first call), ends
// by FunctionTimeout after start less AnswerMargin, or AnswerMargin before
// a deadline ctx already has, whichever is first. Everything the call does
// draws on this one deadline: the store calls share what remains rather
// than each taking a timeout of its own (the YDB store gives a call
// without a deadline 30 s, the whole of the function's time).
func CallContext(ctx context.Context, start time.Time) (context.Context, context.CancelFunc) {
	deadline := start.Add(FunctionTimeout - AnswerMargin)
	if d, ok := ctx.Deadline(); ok && d.Add(-AnswerMargin).Before(deadline) {
		deadline = d.Add(-AnswerMargin)
	}
	return context.WithDeadline(ctx, deadline)
}

// within runs serve under the request's deadline and answers what it
// wrote, or, when the deadline passes first, 503 request_timeout with a
// Retry-After: before the platform stops the call and the client gets the
// gateway's error, with nothing to say when to retry. serve writes into a
// buffer of its own, so what it writes after the deadline (a dependency
// that did not heed its context) reaches no one; it goes on until its
// calls see the cancelled context. A handler whose answer is an error
// because the deadline passed is answered request_timeout too.
func (a *API) within(w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter, *http.Request)) {
	// The API's own timeout, when it ends before the deadline the context
	// has (CallContext's, in the function).
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
			copyRecorded(w, rec)
		}
	case <-ctx.Done():
		writeError(w, r, a.Log, errTimedOut)
	}
}

// copyRecorded writes what rec recorded to w.
func copyRecorded(w http.ResponseWriter, rec *recorder) {
	h := w.Header()
	for k, vs := range rec.sent() {
		h[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}
