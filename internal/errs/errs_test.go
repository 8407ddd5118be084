package errs_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
)

var errSentinel = errs.New(errs.Conflict, "claim_lost", "the job was claimed by someone else")

func TestKindOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want errs.Kind
	}{
		{"classified", errs.New(errs.NotFound, "job_not_found", "no such job"), errs.NotFound},
		{"wrapped by fmt", fmt.Errorf("get job: %w", errs.New(errs.Invalid, "", "bad")), errs.Invalid},
		{"outermost classification wins", errs.Wrap(errs.New(errs.NotFound, "", ""), errs.Unavailable, "", ""), errs.Unavailable},
		{"unknown is internal", errors.New("boom"), errs.Internal},
		{"cancelled context may pass", fmt.Errorf("x: %w", context.Canceled), errs.Unavailable},
		{"deadline may pass", context.DeadlineExceeded, errs.Unavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, errs.KindOf(tc.err))
			require.True(t, errs.Is(tc.err, tc.want))
		})
	}
	require.False(t, errs.Is(nil, errs.Internal), "nil is no error of any kind")
}

func TestMessageNeverShowsTheCause(t *testing.T) {
	secret := errors.New("GET https://api.telegram.org/file/bot123:SECRET/voice.ogg: 500")
	err := errs.Wrap(secret, errs.Unavailable, "telegram_download", "could not fetch the file from Telegram")
	require.Equal(t, "could not fetch the file from Telegram", errs.MessageOf(err))
	require.NotContains(t, errs.MessageOf(fmt.Errorf("ctx: %w", err)), "SECRET")
	require.ErrorIs(t, err, secret, "the cause stays reachable for logs")

	require.Equal(t, "something went wrong on our side", errs.MessageOf(secret),
		"an unclassified error shows a generic message, not its text")
	require.Equal(t, "not found", errs.MessageOf(errs.New(errs.NotFound, "", "")))
}

func TestCodeOf(t *testing.T) {
	require.Equal(t, "claim_lost", errs.CodeOf(fmt.Errorf("save: %w", errSentinel)))
	require.Equal(t, "not_found", errs.CodeOf(errs.New(errs.NotFound, "", "")))
	require.Equal(t, "internal", errs.CodeOf(errors.New("x")))
	require.Equal(t, "unavailable", errs.CodeOf(context.Canceled))
}

func TestIsMatchesSentinelsThroughCopies(t *testing.T) {
	wrapped := errs.Wrap(errors.New("cause"), errs.Conflict, "claim_lost", "other text")
	require.ErrorIs(t, wrapped, errSentinel, "same kind and code match")
	require.ErrorIs(t, fmt.Errorf("outer: %w", errSentinel), errSentinel)
	require.NotErrorIs(t, errs.New(errs.Conflict, "not_claimable", ""), errSentinel, "another code does not")
	require.NotErrorIs(t, errs.New(errs.NotFound, "claim_lost", ""), errSentinel, "another kind does not")
}

func TestErrorTextForLogs(t *testing.T) {
	err := errs.Wrap(errors.New("disk full"), errs.Unavailable, "", "could not save")
	require.Equal(t, "could not save: disk full", err.Error())
	require.Equal(t, "invalid", errs.New(errs.Invalid, "", "").Error())
	require.Equal(t, "internal", errs.Kind(200).String())
}
