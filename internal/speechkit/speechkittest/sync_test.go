package speechkittest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/media/oggopus/oggtest"
	"transcriber/internal/speechkit/speechkittest"
)

type answer struct {
	status  int
	billing string
	body    map[string]string
}

// post sends body to the fake's synchronous endpoint with query, as any
// client would.
func post(t *testing.T, s *speechkittest.Server, query string, body []byte, auth bool) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.SyncURL()+"?"+query, bytes.NewReader(body))
	require.NoError(t, err)
	if auth {
		req.Header.Set("Authorization", "Api-Key "+speechkittest.TestKey)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode, billing: resp.Header.Get("YaCloud-Billing-Units")}
	require.NoError(t, json.Unmarshal(raw, &a.body), "%s", raw)
	return a
}

// The fake refuses with 400 what SpeechKit documents it refuses, before
// any script: over 1 MB, over 30 s counted in the audio, more than one
// channel, a format other than oggopus or lpcm, an LPCM rate it does not
// take; 401 without credentials. Every request is counted.
func TestTheFakeKeepsTheDocumentedLimits(t *testing.T) {
	s := speechkittest.Start(t)
	scripted := 0
	s.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan { scripted++; return speechkittest.SyncPlan{} })

	for name, tc := range map[string]struct {
		query string
		body  []byte
	}{
		"over 1 MB":           {"format=lpcm&sampleRateHertz=8000", make([]byte, 1_000_002)},
		"over 30 s of Opus":   {"format=oggopus", oggtest.Synth(30_020, 0)},
		"a stream that lies":  {"", oggtest.Synth(60_000, 10_000)},
		"stereo":              {"", oggtest.SynthChannels(5_000, 2)},
		"not Ogg Opus":        {"format=oggopus", []byte("RIFF....WAVEfmt a wav file, or so it says")},
		"mp3":                 {"format=mp3", oggtest.Synth(5_000, 0)},
		"LPCM at 44.1 kHz":    {"format=lpcm&sampleRateHertz=44100", make([]byte, 88_200)},
		"LPCM over 30 s":      {"format=lpcm&sampleRateHertz=16000", make([]byte, 960_002)},
		"empty":               {"", nil},
		"LPCM over 30 s at 8": {"format=lpcm&sampleRateHertz=8000", make([]byte, 480_002)},
	} {
		t.Run(name, func(t *testing.T) {
			a := post(t, s, tc.query, tc.body, true)
			require.Equal(t, http.StatusBadRequest, a.status)
			require.NotEmpty(t, a.body["error_code"])
			require.NotEmpty(t, a.body["error_message"])
		})
	}
	a := post(t, s, "", oggtest.Synth(2_000, 0), false)
	require.Equal(t, http.StatusUnauthorized, a.status)
	require.Equal(t, 11, s.SyncCallCount())
	require.Zero(t, scripted, "nothing refused reached the script")

	// The edges pass: 30 s of Opus, 30 s of LPCM at 16 kHz (960 000
	// bytes), and the same bytes at the default 48 kHz, 10 s.
	require.Equal(t, http.StatusOK, post(t, s, "format=oggopus", oggtest.Synth(30_000, 0), true).status)
	require.Equal(t, http.StatusOK, post(t, s, "format=lpcm&sampleRateHertz=16000", make([]byte, 960_000), true).status)
	require.Equal(t, http.StatusOK, post(t, s, "format=lpcm", make([]byte, 960_000), true).status)
	require.Equal(t, int64(10_000), s.SyncCalls()[13].DurationMs)
	require.Equal(t, 3, scripted)
}

// Without a script the fake recognizes DefaultSyncText and bills by
// SpeechKit's rule for what it counted; a script answers what it is told,
// and sees what was sent.
func TestTheFakeAnswersAsScripted(t *testing.T) {
	s := speechkittest.Start(t)
	a := post(t, s, "lang=ru-RU&format=oggopus", oggtest.Synth(16_000, 0), true)
	require.Equal(t, http.StatusOK, a.status)
	require.Equal(t, speechkittest.DefaultSyncText, a.body["result"])
	require.Equal(t, "30", a.billing)
	call := s.SyncCalls()[0]
	require.Equal(t, int64(16_000), call.DurationMs)
	require.Equal(t, 1, call.Channels)
	require.Equal(t, "ru-RU", call.Query.Get("lang"))
	require.Equal(t, http.StatusOK, call.Status)

	var seen []url.Values
	s.SyncScript(func(c speechkittest.SyncCall) speechkittest.SyncPlan {
		seen = append(seen, c.Query)
		switch c.Query.Get("topic") {
		case "quota":
			return speechkittest.SyncPlan{Status: http.StatusTooManyRequests}
		case "down":
			return speechkittest.SyncPlan{Status: http.StatusServiceUnavailable, ErrorCode: "UNAVAILABLE", ErrorMessage: "try later"}
		case "silent":
			return speechkittest.SyncPlan{NoSpeech: true, NoBillingHeader: true}
		}
		return speechkittest.SyncPlan{Text: "сказано", BillingUnits: "45"}
	})
	a = post(t, s, "topic=quota", oggtest.Synth(2_000, 0), true)
	require.Equal(t, http.StatusTooManyRequests, a.status)
	require.Equal(t, "Too Many Requests", a.body["error_code"])
	a = post(t, s, "topic=down", oggtest.Synth(2_000, 0), true)
	require.Equal(t, answer{status: http.StatusServiceUnavailable, body: map[string]string{"error_code": "UNAVAILABLE", "error_message": "try later"}}, a)
	a = post(t, s, "topic=silent", oggtest.Synth(2_000, 0), true)
	require.Equal(t, answer{status: http.StatusOK, body: map[string]string{"result": ""}}, a)
	a = post(t, s, "topic=general", oggtest.Synth(2_000, 0), true)
	require.Equal(t, answer{status: http.StatusOK, billing: "45", body: map[string]string{"result": "сказано"}}, a)
	require.Len(t, seen, 4)
	require.Equal(t, 5, s.SyncCallCount())
	require.Equal(t, http.StatusTooManyRequests, s.SyncCalls()[1].Status)
}

// The handler serves only its path and POST.
func TestTheFakeServesOnlyItsEndpoint(t *testing.T) {
	s := speechkittest.Start(t)
	resp, err := http.Get(s.SyncURL())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	u, err := url.Parse(s.SyncURL())
	require.NoError(t, err)
	u.Path = "/speech/v2/other"
	resp, err = http.Post(u.String(), "application/octet-stream", bytes.NewReader(oggtest.Synth(1_000, 0)))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
