package callback_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/callback"
)

// The pauses grow from 30 s, doubling, to an hour, and the attempts fit
// in 24 h: the schedule docs/api.md states.
func TestPauseSchedule(t *testing.T) {
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour, time.Hour}
	for i, w := range want {
		require.Equal(t, w, callback.Pause(i+1), "after attempt %d", i+1)
	}
	require.Equal(t, time.Hour, callback.Pause(1000))

	total, attempts := time.Duration(0), 1
	for total+callback.Pause(attempts) <= callback.GiveUpAfter {
		total += callback.Pause(attempts)
		attempts++
	}
	require.Equal(t, 30, attempts, "attempts within 24 h of the first")
}

// The signature is the Standard Webhooks one, over a known vector.
func TestSign(t *testing.T) {
	key, err := callback.Key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	got := callback.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", got)

	for _, bad := range []string{"", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!!", "whsec_AAAA"} {
		_, err := callback.Key(bad)
		require.Error(t, err, bad)
		if bad != "" {
			require.NotContains(t, err.Error(), bad)
		}
	}
}
