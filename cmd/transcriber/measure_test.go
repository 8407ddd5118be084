package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/oggopus/oggtest"
	"transcriber/internal/speechkit/speechkittest"
)

// measureEnv is the environment of a measure-sync run against the fake
// SpeechKit sk.
func measureEnv(sk *speechkittest.Server) func(string) string {
	c := sk.Config()
	env := map[string]string{
		"SPEECHKIT_ENDPOINT": c.Endpoint, "SPEECHKIT_OPERATION_ENDPOINT": c.OperationEndpoint,
		"SPEECHKIT_SYNC_URL": c.SyncURL, "SPEECHKIT_API_KEY": c.APIKey, "SPEECHKIT_INSECURE": "true",
	}
	return func(k string) string { return env[k] }
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// measure-sync sends the voice note as it is, once a run, and prints each
// answer's time and bill, then the median beside the load model's
// assumption for that length.
func TestMeasureSyncTimesEachAnswer(t *testing.T) {
	sk := speechkittest.Start(t)
	sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Text: "привет", BillingUnits: "15"}
	})
	voice := oggtest.Synth(6_000, 0)
	path := writeFile(t, "note.ogg", voice)
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"measure-sync", "--runs", "2", "--lang", "en-US", path}, measureEnv(sk), &out))

	calls := sk.SyncCalls()
	require.Len(t, calls, 2)
	for _, c := range calls {
		require.Equal(t, voice, c.Audio, "sent as the service sends a voice note: as it is")
		require.Equal(t, "en-US", c.Query.Get("lang"))
		require.Equal(t, "oggopus", c.Query.Get("format"))
	}
	text := out.String()
	require.Contains(t, text, "note.ogg: 6.00 s of audio, one channel, ")
	require.Contains(t, text, "; 2 requests to "+sk.SyncURL()+", language en-US")
	require.Regexp(t, `request 1: answered in \d+\.\d\d s, billed 15 s, 6 characters of text`, text)
	require.Regexp(t, `request 2: answered in \d+\.\d\d s, billed 15 s`, text)
	require.Regexp(t, `median: \d+\.\d\d s for 6\.00 s of audio \(the load model assumes 1\.30 s: 0\.30 s and 10\.00 s a minute of audio\); 30 s billed in all`, text)
	require.NotContains(t, text, speechkittest.TestKey)
}

// A refusal ends the run with which request it was, and the key is
// nowhere in it.
func TestMeasureSyncSaysWhichRequestFailed(t *testing.T) {
	sk := speechkittest.Start(t)
	sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Status: http.StatusTooManyRequests}
	})
	path := writeFile(t, "note.ogg", oggtest.Synth(6_000, 0))
	err := run(context.Background(), []string{"measure-sync", path}, measureEnv(sk), &bytes.Buffer{})
	require.ErrorContains(t, err, "request 1, after ")
	require.NotContains(t, err.Error(), speechkittest.TestKey)
	require.Equal(t, 1, sk.SyncCallCount(), "stops at the first refusal")
}

// Anything but one mono Ogg Opus file the service would send as it is,
// and any flag it does not know, is refused before a request is sent.
func TestMeasureSyncRefusesWhatTheServiceWouldNotSendAsItIs(t *testing.T) {
	sk := speechkittest.Start(t)
	env := measureEnv(sk)
	voice := writeFile(t, "note.ogg", oggtest.Synth(6_000, 0))
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"no file":         {nil, "takes one file"},
		"two files":       {[]string{voice, voice}, "takes one file"},
		"an unknown flag": {[]string{"--fast", voice}, "flag provided but not defined: -fast"},
		"no runs":         {[]string{"--runs", "0", voice}, "want 1 to 10"},
		"eleven runs":     {[]string{"--runs", "11", voice}, "want 1 to 10"},
		"auto language":   {[]string{"--lang", "auto", voice}, "is not a language the synchronous API takes"},
		"a missing file":  {[]string{filepath.Join(t.TempDir(), "none.ogg")}, "no such file"},
		"stereo":          {[]string{writeFile(t, "s.ogg", oggtest.SynthChannels(6_000, 2))}, "has 2 channels"},
		"a lying file":    {[]string{writeFile(t, "l.ogg", oggtest.Synth(6_000, 60_000))}, "is not a plain Ogg Opus file"},
		"40 seconds":      {[]string{writeFile(t, "long.ogg", oggtest.Synth(40_000, 0))}, "over the synchronous API's 30s"},
		"over 1 MB":       {[]string{writeFile(t, "big.ogg", make([]byte, 1_000_001))}, "over the synchronous API's 1000000 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), append([]string{"measure-sync"}, c.args...), env, &bytes.Buffer{})
			require.ErrorContains(t, err, c.want)
		})
	}
	require.Zero(t, sk.SyncCallCount(), "nothing was sent")
}
