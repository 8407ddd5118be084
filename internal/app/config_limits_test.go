package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A setting that cannot work is refused at start, naming the variable,
// rather than accepted and then failing every request that uses it.
func TestDurationSettingsOutsideTheirRangeAreRefused(t *testing.T) {
	refused := []struct{ name, value, says string }{
		// The presign limit: with 200h every POST /v1/jobs answered 500.
		{"UPLOAD_URL_TTL", "200h", "longest a presigned URL can live"},
		{"UPLOAD_URL_TTL", "5s", "shorter than 1m0s"},
		{"MAX_AUDIO_DURATION", "13h", "10-minute limit"},
		{"SEGMENT_LENGTH", "4h1m", "4 hours per file"},
		{"SEGMENT_LENGTH", "30s", "shorter than 1m0s"},
		{"POLL_FOR", "11m", "function call"},
		{"POLL_FOR", "-1s", "want a duration"},
		{"UPLOAD_URL_TTL", "soon", "want a duration"},
		{"JOB_RETENTION", "12h", "shorter than 24h0m0s"},
	}
	for _, tc := range refused {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			_, err := FromEnv(envOf(tc.name, tc.value))
			require.Error(t, err)
			require.ErrorContains(t, err, tc.name+":")
			require.ErrorContains(t, err, tc.says)
		})
	}
}

func TestRequestsPerHour(t *testing.T) {
	c, err := FromEnv(envOf())
	require.NoError(t, err)
	require.Equal(t, 500, c.Pipeline.RequestsPerHour, "SpeechKit's quota unless told")
	c, err = FromEnv(envOf("SPEECHKIT_REQUESTS_PER_HOUR", "0"))
	require.NoError(t, err)
	require.Zero(t, c.Pipeline.RequestsPerHour, "0 turns pacing off")
	for _, bad := range []string{"1", "-5", "lots", "2000000"} {
		_, err = FromEnv(envOf("SPEECHKIT_REQUESTS_PER_HOUR", bad))
		require.ErrorContains(t, err, "SPEECHKIT_REQUESTS_PER_HOUR:", bad)
	}
}

func TestPieceSettings(t *testing.T) {
	c, err := FromEnv(envOf())
	require.NoError(t, err)
	require.Zero(t, c.Media.PieceLength, "the media's default, 5 min")
	require.Equal(t, 24, c.Media.MaxPieces)
	require.Equal(t, 24, c.Pipeline.JobInFlight, "a job's pieces all go at once")
	c, err = FromEnv(envOf("PIECE_LENGTH", "2m", "PARALLEL_FROM", "30m", "MAX_PIECES", "40"))
	require.NoError(t, err)
	require.Equal(t, 2*time.Minute, c.Media.PieceLength)
	require.Equal(t, 30*time.Minute, c.Media.ParallelFrom)
	require.Equal(t, 40, c.Media.MaxPieces)
	require.Equal(t, 40, c.Pipeline.JobInFlight)
	for name, bad := range map[string]string{"MAX_PIECES": "0", "PIECE_LENGTH": "30s", "PARALLEL_FROM": "13h"} {
		_, err = FromEnv(envOf(name, bad))
		require.ErrorContains(t, err, name+":", bad)
	}
	_, err = FromEnv(envOf("MAX_PIECES", "101"))
	require.ErrorContains(t, err, "MAX_PIECES: want a number from 1 to 100, such as 24")
	_, err = FromEnv(envOf("PIECE_LENGTH", "2h", "SEGMENT_LENGTH", "1h"))
	require.ErrorContains(t, err, "PIECE_LENGTH: 2h0m0s is longer than SEGMENT_LENGTH (1h0m0s)")
}

func TestDurationSettingsAtTheirEdgesAreTaken(t *testing.T) {
	c, err := FromEnv(envOf("UPLOAD_URL_TTL", "168h", "MAX_AUDIO_DURATION", "12h", "SEGMENT_LENGTH", "4h",
		"POLL_FOR", "5s", "JOB_RETENTION", "720h"))
	require.NoError(t, err)
	require.Equal(t, 7*24*time.Hour, c.API.UploadURLTTL)
	require.Equal(t, 12*time.Hour, c.Media.MaxDuration)
	require.Equal(t, 4*time.Hour, c.Media.SegmentLength)
	require.Equal(t, 5*time.Second, c.Pipeline.PollFor)
	require.Equal(t, 30*24*time.Hour, c.Pipeline.JobRetention)

	c, err = FromEnv(envOf("UPLOAD_URL_TTL", "0"))
	require.NoError(t, err)
	require.Zero(t, c.API.UploadURLTTL, "0 takes the default")
}

func TestJobRetention(t *testing.T) {
	d, err := JobRetention(envOf())
	require.NoError(t, err)
	require.Equal(t, 90*24*time.Hour, d, "90 days unless set")
	d, err = JobRetention(envOf("JOB_RETENTION", "720h"))
	require.NoError(t, err)
	require.Equal(t, 30*24*time.Hour, d)
	d, err = JobRetention(envOf("JOB_RETENTION", "0"))
	require.NoError(t, err)
	require.Equal(t, 90*24*time.Hour, d, "0 is the default, as the functions read it")
	for _, bad := range []string{"90d", "soon", "-1h", "30m", "12h", "100000h"} {
		_, err = JobRetention(envOf("JOB_RETENTION", bad))
		require.ErrorContains(t, err, "JOB_RETENTION", bad)
	}
}
