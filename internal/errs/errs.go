// Package errs is the service's error vocabulary: Kind decides the status
// or the retry, Code is a stable word, Message is fit for a person. The
// cause is for logs only, since SDK text can carry keys, presigned URLs or
// the bot token. An unknown error is Internal.
package errs

import (
	"context"
	"errors"
)

// Kind is what a caller can do about an error.
type Kind uint8

// The zero Kind is Internal, never mistaken for a harmless one.
const (
	Internal Kind = iota
	NotFound      // or the caller may not know it exists
	Invalid       // and will stay so
	Conflict      // not in a state that allows it now
	Unauthorized
	Unavailable // may pass: retry later
	Permanent   // success is impossible: give up
)

// kinds are each kind's name (its default code) and generic message.
var kinds = [...]struct{ name, message string }{
	Internal:     {"internal", "something went wrong on our side"},
	NotFound:     {"not_found", "not found"},
	Invalid:      {"invalid", "the request is not valid"},
	Conflict:     {"conflict", "that cannot be done right now"},
	Unauthorized: {"unauthorized", "authentication required"},
	Unavailable:  {"unavailable", "a service we depend on is unavailable; try again later"},
	Permanent:    {"permanent", "this cannot succeed"},
}

func (k Kind) String() string {
	if int(k) < len(kinds) {
		return kinds[k].name
	}
	return kinds[Internal].name
}

// Error is a classified error.
type Error struct {
	Kind    Kind
	Code    string // e.g. "no_audio_stream"; defaults to Kind's name
	Message string // never keys, URLs, tokens or SDK text
	Err     error  // for logs only
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Kind.String()
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches a sentinel's Kind and Code, so a wrapped copy matches it.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) || t == e {
		return false
	}
	return t.Kind == e.Kind && t.code() == e.code() && t.Err == nil
}

func (e *Error) code() string {
	if e.Code != "" {
		return e.Code
	}
	return e.Kind.String()
}

func New(k Kind, code, message string) *Error {
	return &Error{Kind: k, Code: code, Message: message}
}

func Wrap(cause error, k Kind, code, message string) *Error {
	return &Error{Kind: k, Code: code, Message: message, Err: cause}
}

// KindOf is the outermost classified kind; a context's end is Unavailable.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Unavailable
	}
	return Internal
}

func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.code()
	}
	return KindOf(err).String()
}

// MessageOf is err's own message or its kind's; unclassified text never shows.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return kinds[KindOf(err)].message
}
