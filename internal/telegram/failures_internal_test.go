package telegram

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/speechkit"
)

// A file the service refuses for good gets words of its own, never the
// general "try again later", which would send the same file back.
func TestPermanentMediaFailuresHaveTheirOwnWords(t *testing.T) {
	codes := []string{speechkit.CodeRequestTooLarge, speechkit.CodeAnswerTooLarge}
	for _, sentinel := range []*errs.Error{ffmpeg.ErrUnsupported, ffmpeg.ErrUnreadable, ffmpeg.ErrNoAudio, ffmpeg.ErrEmptyFile, ffmpeg.ErrTooLong} {
		codes = append(codes, sentinel.Code)
	}
	for _, code := range codes {
		_, ok := failures[code]
		require.True(t, ok, "no words for %s", code)
		for _, l := range []lang{en, ru} {
			got := failureText(l, job.Job{ErrorCode: code, ErrorMessage: "the message"})
			require.NotContains(t, got, "later", "%s in %v: %q", code, l, got)
			require.NotContains(t, got, "позже", "%s in %v: %q", code, l, got)
			require.NotContains(t, got, "the message", "%s in %v: %q", code, l, got)
		}
	}
}
