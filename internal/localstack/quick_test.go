package localstack

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/speechkit"
)

// Short recordings go where SPEECHKIT_SYNC_URL says, SpeechKit's own by
// default; a stand-in for SpeechKit without a synchronous endpoint of its
// own turns them off, so audio meant for it never reaches SpeechKit.
func TestQuickRecognitionInTheLocalStack(t *testing.T) {
	on := 30 * time.Second
	for name, tc := range map[string]struct {
		sk       speechkit.Config
		max      time.Duration
		wantMax  time.Duration
		wantLine string
	}{
		"SpeechKit itself": {speechkit.Config{APIKey: "k"}, on, on,
			"  quick recognition: recordings up to 30s in one request to " + speechkit.DefaultSyncURL},
		"a stand-in with both endpoints": {speechkit.Config{Endpoint: "127.0.0.1:1", SyncURL: "http://127.0.0.1:2/speech/v1/stt:recognize", Insecure: true},
			10 * time.Second, 10 * time.Second, "  quick recognition: recordings up to 10s in one request to http://127.0.0.1:2/speech/v1/stt:recognize"},
		"a stand-in without a synchronous endpoint": {speechkit.Config{Endpoint: "127.0.0.1:1", Insecure: true}, on, 0,
			"  quick recognition: off — SPEECHKIT_ENDPOINT is set without SPEECHKIT_SYNC_URL; set both to use a stand-in for short recordings"},
		"turned off":            {speechkit.Config{APIKey: "k"}, 0, 0, "  quick recognition: off (SPEECHKIT_SYNC_MAX_DURATION=0)"},
		"no recognition at all": {speechkit.Config{}, on, on, ""},
	} {
		t.Run(name, func(t *testing.T) {
			c, line := quickRecognition(app.Config{SpeechKit: tc.sk, SyncMaxDuration: tc.max})
			require.Equal(t, tc.wantMax, c.SyncMaxDuration)
			require.Equal(t, tc.wantLine, line)
			_, again := quickRecognition(c)
			require.Equal(t, tc.wantLine, again, "the announcement reads the config turned off")
		})
	}
}
