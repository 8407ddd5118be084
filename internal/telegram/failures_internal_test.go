package telegram

import (
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
)

// A file the service refuses for good gets words of its own, never the
// general "try again later", which would send the same file back.
func TestPermanentMediaFailuresHaveTheirOwnWords(t *testing.T) {
	for _, sentinel := range []*errs.Error{ffmpeg.ErrUnsupported, ffmpeg.ErrUnreadable, ffmpeg.ErrNoAudio, ffmpeg.ErrEmptyFile, ffmpeg.ErrTooLong} {
		_, ok := failures[sentinel.Code]
		require.True(t, ok, "no words for %s", sentinel.Code)
		for _, l := range []lang{en, ru} {
			got := failureText(l, job.Job{ErrorCode: sentinel.Code, ErrorMessage: sentinel.Message})
			require.NotContains(t, got, "later", "%s in %v: %q", sentinel.Code, l, got)
			require.NotContains(t, got, "позже", "%s in %v: %q", sentinel.Code, l, got)
		}
	}
}
