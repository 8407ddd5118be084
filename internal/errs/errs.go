// Package errs is the service's small vocabulary of errors.
//
// Every error that crosses a boundary (an HTTP answer, a bot reply, a job's
// recorded failure) is read through this package: its Kind decides the
// status code or the retry, its Code is a stable machine word, and its
// Message is text fit for a person. The wrapped cause is for logs only:
// adapters put SDK errors there, never in Message, because SDK text can carry
// object keys, presigned URLs or Telegram file URLs (which hold the bot
// token). An error this package does not know is Internal: logged in full,
// shown as a generic message.
package errs

import (
	"context"
	"errors"
)

// Kind is what a caller can do about an error.
type Kind uint8

// The kinds. The zero Kind is Internal, so an unclassified error is never
// mistaken for a harmless one.
const (
	Internal     Kind = iota // a bug or an unknown failure: log it, show a generic message
	NotFound                 // the thing does not exist (or the caller may not know it does)
	Invalid                  // the input is wrong and will stay wrong
	Conflict                 // the thing is not in a state that allows this, right now
	Unauthorized             // the caller is not who it must be
	Unavailable              // a dependency failed in a way that may pass: retry later
	Permanent                // a provider or the input makes success impossible: give up
)

var kindNames = [...]string{
	Internal:     "internal",
	NotFound:     "not_found",
	Invalid:      "invalid",
	Conflict:     "conflict",
	Unauthorized: "unauthorized",
	Unavailable:  "unavailable",
	Permanent:    "permanent",
}

// String returns the kind's name, which is also its default code.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return kindNames[Internal]
}

// Error is a classified error.
type Error struct {
	Kind    Kind
	Code    string // stable machine word, e.g. "no_audio_stream"; defaults to Kind's name
	Message string // fit to show a person; never holds keys, URLs, tokens or SDK text
	Err     error  // the cause, for logs only
}

// Error joins the message and the cause for logs.
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

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, sentinel) match any *Error with the sentinel's Kind
// and Code, so a wrapped copy of a sentinel still matches it.
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

// New returns an error of kind k with a code and a message for people.
func New(k Kind, code, message string) *Error {
	return &Error{Kind: k, Code: code, Message: message}
}

// Wrap classifies cause as kind k with a code and a message for people. The
// cause is kept for logs and errors.Is/As.
func Wrap(cause error, k Kind, code, message string) *Error {
	return &Error{Kind: k, Code: code, Message: message, Err: cause}
}

// KindOf returns the kind of the outermost classified error in err's chain.
// A cancelled or timed-out context is Unavailable; anything else unknown is
// Internal.
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

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// CodeOf returns the machine code of err, or "internal" for an unknown error.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.code()
	}
	return KindOf(err).String()
}

var genericMessages = [...]string{
	Internal:     "something went wrong on our side",
	NotFound:     "not found",
	Invalid:      "the request is not valid",
	Conflict:     "that cannot be done right now",
	Unauthorized: "authentication required",
	Unavailable:  "a service we depend on is unavailable; try again later",
	Permanent:    "this cannot succeed",
}

// MessageOf returns text about err that may be shown to a person: the
// classified error's own message, or a generic one for its kind. An
// unclassified error never shows its text.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return genericMessages[KindOf(err)]
}
