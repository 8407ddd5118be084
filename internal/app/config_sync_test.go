package app

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/speechkit"
)

// Synchronous recognition is on by default for recordings up to SpeechKit's
// 30 s, at SpeechKit's URL; 0 turns it off; longer than 30 s cannot work
// and stops the start, naming the variable.
func TestSyncSettings(t *testing.T) {
	c, err := FromEnv(envOf())
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, c.SyncMaxDuration)
	require.Empty(t, c.SpeechKit.SyncURL, "the client's default, "+speechkit.DefaultSyncURL)

	for value, want := range map[string]time.Duration{"0": 0, "0s": 0, "6s": 6 * time.Second, "30s": 30 * time.Second, "1s": time.Second} {
		c, err = FromEnv(envOf("SPEECHKIT_SYNC_MAX_DURATION", value))
		require.NoError(t, err, value)
		require.Equal(t, want, c.SyncMaxDuration, value)
	}
	for value, says := range map[string]string{
		"31s":   "SpeechKit's limit of 30 seconds",
		"1m":    "SpeechKit's limit of 30 seconds",
		"500ms": "shorter than 1s",
		"-5s":   "want a duration",
		"soon":  "want a duration",
	} {
		_, err = FromEnv(envOf("SPEECHKIT_SYNC_MAX_DURATION", value))
		require.ErrorContains(t, err, "SPEECHKIT_SYNC_MAX_DURATION:", value)
		require.ErrorContains(t, err, says, value)
	}

	c, err = FromEnv(envOf("SPEECHKIT_SYNC_URL", "https://stt.example/speech/v1/stt:recognize"))
	require.NoError(t, err)
	require.Equal(t, "https://stt.example/speech/v1/stt:recognize", c.SpeechKit.SyncURL)
	c, err = FromEnv(envOf("SPEECHKIT_SYNC_URL", "http://127.0.0.1:9000/speech/v1/stt:recognize", "SPEECHKIT_INSECURE", "true"))
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9000/speech/v1/stt:recognize", c.SpeechKit.SyncURL)
	for _, bad := range []string{"http://stt.example/x", "https://user:hunter22@stt.example/x", "stt.example", "::"} {
		_, err = FromEnv(envOf("SPEECHKIT_SYNC_URL", bad))
		require.ErrorContains(t, err, "SPEECHKIT_SYNC_URL: want an https URL", bad)
		require.NotContains(t, err.Error(), "hunter22", "the value is not echoed")
	}
}

// The URL read is the one the client is built with.
func TestSyncURLReachesTheClient(t *testing.T) {
	c, err := FromEnv(envOf("SPEECHKIT_SYNC_URL", "https://stt.example/speech/v1/stt:recognize", "SPEECHKIT_API_KEY", "k"))
	require.NoError(t, err)
	_, err = speechkit.New(c.SpeechKit)
	require.NoError(t, err)
}

// Where no recognizer is configured, a synchronous recognition fails as
// an asynchronous one does, plainly.
func TestUnconfiguredRecognizesNothingSynchronously(t *testing.T) {
	_, err := Unconfigured{}.RecognizeSync(context.Background(), speechkit.SyncRequest{Audio: []byte("x")})
	require.ErrorIs(t, err, ErrRecognitionNotConfigured)
	_, err = Unconfigured{}.Submit(context.Background(), speechkit.Request{})
	require.ErrorIs(t, err, ErrRecognitionNotConfigured)
}
