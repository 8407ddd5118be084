package speechkit_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/clock/clocktest"
	"transcriber/internal/errs"
	"transcriber/internal/media/oggopus/oggtest"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/transcript"
)

// voiceNote is a mono Ogg Opus stream of ms, as Telegram sends a voice
// note.
func voiceNote(ms int64) []byte { return oggtest.Synth(ms, 0) }

// lpcm is ms of silence as 16-bit mono LPCM at rate.

func recognizeSync(t *testing.T, c *speechkit.Client, r speechkit.SyncRequest) (speechkit.SyncResult, error) {
	t.Helper()
	return c.RecognizeSync(context.Background(), r)
}

// A voice note goes as it is, in one POST, and its text comes back with
// what the answer says it billed.
func TestRecognizeSyncSendsTheVoiceNoteAsItIs(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	audio := voiceNote(6_000)

	res, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: audio, DurationMs: 5_990, Language: "en-us"})
	require.NoError(t, err)
	require.Equal(t, speechkittest.DefaultSyncText, res.Text)
	require.Equal(t, int64(6_000), res.DurationMs, "the audio counted, longer than declared")
	require.Equal(t, int64(15), res.BilledSeconds)

	calls := srv.SyncCalls()
	require.Len(t, calls, 1)
	call := calls[0]
	require.Equal(t, http.StatusOK, call.Status)
	require.True(t, bytes.Equal(audio, call.Audio), "the body is the voice note, unconverted")
	require.Equal(t, "en-US", call.Query.Get("lang"), "the language in SpeechKit's spelling")
	require.Equal(t, "general", call.Query.Get("topic"))
	require.Equal(t, "oggopus", call.Query.Get("format"))
	require.False(t, call.Query.Has("sampleRateHertz"), "OggOpus says its own rate")
	require.False(t, call.Query.Has("folderId"), "no folder with an API key")
	require.Equal(t, "Api-Key "+speechkittest.TestKey, call.Authorization)
	require.NotEmpty(t, call.RequestID)
	require.Equal(t, "application/octet-stream", call.ContentType)
	require.Zero(t, srv.RecognizeCalls(), "nothing asynchronous")

	tr := res.Transcript()
	require.Equal(t, transcript.FromText(speechkittest.DefaultSyncText, 6_000).Utterances, tr.Utterances)
	require.Equal(t, int64(15), tr.BilledSeconds)
	require.Equal(t, int64(6_000), tr.DurationMs)
}

// With an IAM token the folder goes as folderId, as x-folder-id goes with
// the asynchronous calls.
func TestRecognizeSyncWithAnIAMTokenNamesTheFolder(t *testing.T) {
	srv := speechkittest.Start(t)
	meta := startMetadata(t)
	c := mustClient(t, iamConfig(srv, meta, clocktest.NewFake(t0)))

	_, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	require.NoError(t, err)
	call := srv.SyncCalls()[0]
	require.Equal(t, "Bearer t1.token-1", call.Authorization)
	require.Equal(t, "b1gfolder", call.Query.Get("folderId"))
	require.Equal(t, "ru-RU", call.Query.Get("lang"), "the default language")
}

// The billed seconds are the header's when it is a whole number of
// 15-second units SpeechKit could bill for one request, else the rule's
// for the audio's length (the larger of declared and counted).
func TestRecognizeSyncBilledSeconds(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	for _, tc := range []struct {
		header string
		none   bool
		want   int64
	}{
		{header: "30", want: 30}, // more than the rule: SpeechKit's word goes
		{header: "15", want: 15},
		{header: " 45 ", want: 45},
		{none: true, want: 30},  // the rule, for the 16 s declared
		{header: "1", want: 30}, // an older copy of the docs shows units, not seconds
		{header: "7", want: 30},
		{header: "0", want: 30},
		{header: "-15", want: 30},
		{header: "+15", want: 30},
		{header: "15.0", want: 30},
		{header: "75", want: 30}, // more than a request of 30 s could be billed
		{header: "15, 15", want: 30},
		{header: "99999999999999999999", want: 30},
	} {
		srv.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
			return speechkittest.SyncPlan{BillingUnits: tc.header, NoBillingHeader: tc.none}
		})
		res, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(6_000), DurationMs: 16_000})
		require.NoError(t, err, tc.header)
		require.Equal(t, tc.want, res.BilledSeconds, "header %q", tc.header)
		require.Equal(t, int64(16_000), res.DurationMs)
	}
}

// No speech is an empty text, not an error, and an empty transcript.
func TestRecognizeSyncWithoutSpeech(t *testing.T) {
	srv := speechkittest.Start(t)
	srv.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan { return speechkittest.SyncPlan{NoSpeech: true} })
	c := mustClient(t, srv.Config())
	res, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(3_000)})
	require.NoError(t, err)
	require.Empty(t, res.Text)
	require.True(t, res.Transcript().Empty())
	require.Equal(t, int64(15), res.Transcript().BilledSeconds)
}

// What does not fit the API is refused here, before anything is sent:
// one that is sent is refused by SpeechKit all the same, a request later.
func TestRecognizeSyncRefusesWhatDoesNotFit(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	for name, r := range map[string]speechkit.SyncRequest{
		"over 1 MB":                 {Audio: make([]byte, speechkit.MaxSyncBytes+1)},
		"declared over 30 s":        {Audio: voiceNote(5_000), DurationMs: 30_001},
		"counted over 30 s":         {Audio: voiceNote(30_020), DurationMs: 29_000},
		"a stream that lies":        {Audio: oggtest.Synth(45_000, 20_000), DurationMs: 20_000},
		"stereo":                    {Audio: oggtest.SynthChannels(5_000, 2)},
		"not Ogg Opus":              {Audio: []byte("ID3\x04\x00\x00\x00\x00\x00\x00 an mp3, or says so")},
		"Ogg Opus cut short":        {Audio: voiceNote(5_000)[:200]},
		"LPCM, which is never sent": {Audio: make([]byte, 32_000)},
		"language detection":        {Audio: voiceNote(5_000), Language: "AUTO"},
		"over 1 MB, declared short": {Audio: make([]byte, speechkit.MaxSyncBytes+2), DurationMs: 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := recognizeSync(t, c, r)
			requireErr(t, err, errs.Invalid, speechkit.CodeSyncUnfit) // refused here: nothing was sent
			require.Contains(t, errs.MessageOf(err), "30 s")
		})
	}
	_, err := recognizeSync(t, c, speechkit.SyncRequest{})
	requireErr(t, err, errs.Invalid, speechkit.CodeNoAudio)
	_, err = recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(1_000), Language: "xx-XX"})
	requireErr(t, err, errs.Invalid, speechkit.CodeUnsupportedLanguage)
	require.Zero(t, srv.SyncCallCount(), "nothing that does not fit is sent")

	// The edge passes: 30 s exactly.
	_, err = recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(30_000), DurationMs: 30_000})
	require.NoError(t, err)
	require.Equal(t, 1, srv.SyncCallCount())
}

// Each refusal of SpeechKit's has its meaning: the quota and a server's
// trouble may pass, a bad request will not, credentials need someone.
func TestRecognizeSyncRefusals(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	for _, tc := range []struct {
		status int
		kind   errs.Kind
		code   string
	}{
		{http.StatusTooManyRequests, errs.Unavailable, speechkit.CodeSyncQuota},
		{http.StatusInternalServerError, errs.Unavailable, speechkit.CodeUnavailable},
		{http.StatusNotImplemented, errs.Unavailable, speechkit.CodeUnavailable},
		{http.StatusServiceUnavailable, errs.Unavailable, speechkit.CodeUnavailable},
		{http.StatusGatewayTimeout, errs.Unavailable, speechkit.CodeUnavailable},
		{http.StatusRequestTimeout, errs.Unavailable, speechkit.CodeUnavailable},
		{http.StatusBadRequest, errs.Permanent, speechkit.CodeSyncUnfit},
		{http.StatusRequestEntityTooLarge, errs.Permanent, speechkit.CodeSyncUnfit},
		{http.StatusUnauthorized, errs.Unavailable, speechkit.CodeAccessDenied},
		{http.StatusForbidden, errs.Unavailable, speechkit.CodeAccessDenied},
		{http.StatusNotFound, errs.Internal, "speechkit_error"},
		{http.StatusFound, errs.Internal, "speechkit_error"},
	} {
		srv.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
			return speechkittest.SyncPlan{Status: tc.status, ErrorCode: "FAKE", ErrorMessage: "fake says no"}
		})
		_, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
		requireErr(t, err, tc.kind, tc.code)
		require.Contains(t, err.Error(), "fake says no", "SpeechKit's words are kept for the log")
	}
	require.Equal(t, 12, srv.SyncCallCount())
}

// A redirect is not followed: the key and the audio go only to the URL
// configured.
func TestRecognizeSyncFollowsNoRedirect(t *testing.T) {
	elsewhere := speechkittest.Start(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.SyncURL()+"?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	cfg := elsewhere.Config()
	cfg.SyncURL = redirect.URL + speechkittest.SyncPath
	c := mustClient(t, cfg)

	_, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	requireErr(t, err, errs.Internal, "speechkit_error")
	require.Zero(t, elsewhere.SyncCallCount())
}

// An answer that is not the API's is an error, never a text; an answer
// larger than any recognition of 30 s is not read whole.
func TestRecognizeSyncOddAnswers(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	for name, tc := range map[string]struct {
		body []byte
		kind errs.Kind
		code string
	}{
		"not JSON":     {[]byte("<html>gateway</html>"), errs.Internal, "speechkit_error"},
		"no result":    {[]byte(`{"text": "hi"}`), errs.Internal, "speechkit_error"},
		"null result":  {[]byte(`{"result": null}`), errs.Internal, "speechkit_error"},
		"result not a": {[]byte(`{"result": 5}`), errs.Internal, "speechkit_error"},
		"over 64 KiB":  {[]byte(`{"result": "` + strings.Repeat("a", 64<<10) + `"}`), errs.Permanent, speechkit.CodeAnswerTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			srv.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan { return speechkittest.SyncPlan{Body: tc.body} })
			_, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
			requireErr(t, err, tc.kind, tc.code)
		})
	}
	// Just under the bound is a text.
	text := strings.Repeat("a", 64<<10-len(`{"result": ""}`))
	srv.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Body: []byte(`{"result": "` + text + `"}`)}
	})
	res, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	require.NoError(t, err)
	require.Equal(t, text, res.Text)
}

// A slow answer is given up at the client's time-out, or the caller's, and
// a recognizer that cannot be reached is unavailable: all may pass.
func TestRecognizeSyncTimeOutsAndTransport(t *testing.T) {
	srv := speechkittest.Start(t)
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	srv.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan { return speechkittest.SyncPlan{Hold: never} })

	cfg := srv.Config()
	cfg.SyncTimeout = 50 * time.Millisecond
	c := mustClient(t, cfg)
	_, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	requireErr(t, err, errs.Unavailable, speechkit.CodeUnavailable)

	patient := mustClient(t, srv.Config())
	ctx, cancel := context.WithCancel(context.Background())
	srv.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		cancel() // the caller gives up while the answer is held
		return speechkittest.SyncPlan{Hold: never}
	})
	_, err = patient.RecognizeSync(ctx, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	requireErr(t, err, errs.Unavailable, speechkit.CodeUnavailable)

	// A slow answer within the time-out is an answer.
	srv.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Delay: 20 * time.Millisecond, Text: "не спеша"}
	})
	res, err := patient.RecognizeSync(context.Background(), speechkit.SyncRequest{Audio: voiceNote(2_000)})
	require.NoError(t, err)
	require.Equal(t, "не спеша", res.Text)

	gone := httptest.NewServer(http.NotFoundHandler())
	cfg = srv.Config()
	cfg.SyncURL = gone.URL + speechkittest.SyncPath
	gone.Close()
	c = mustClient(t, cfg)
	_, err = recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	requireErr(t, err, errs.Unavailable, speechkit.CodeUnavailable)
}

// Neither the API key nor an IAM token reaches an error's text, even when
// SpeechKit's answer quotes them.
func TestRecognizeSyncKeepsSecretsOutOfErrors(t *testing.T) {
	srv := speechkittest.Start(t)
	srv.SyncScript(func(call speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Status: http.StatusForbidden, ErrorCode: "PERMISSION_DENIED",
			ErrorMessage: "fake says " + call.Authorization + " may not"}
	})
	c := mustClient(t, srv.Config())
	_, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	requireErr(t, err, errs.Unavailable, speechkit.CodeAccessDenied)
	requireNoSecret(t, err, speechkittest.TestKey)
	require.Contains(t, err.Error(), "[redacted]")

	meta := startMetadata(t)
	c = mustClient(t, iamConfig(srv, meta, clocktest.NewFake(t0)))
	_, err = recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	requireErr(t, err, errs.Unavailable, speechkit.CodeAccessDenied)
	requireNoSecret(t, err, "t1.token-1")

	// A long message is cut for the log.
	srv.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Status: http.StatusBadRequest, ErrorMessage: strings.Repeat("x", 5_000)}
	})
	_, err = recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	requireErr(t, err, errs.Permanent, speechkit.CodeSyncUnfit)
	require.Less(t, len(err.Error()), 600)
}

// The endpoint must be https, or http only where gRPC is plaintext too
// (tests, the local fake), and must not carry credentials of its own.
func TestSyncURLIsChecked(t *testing.T) {
	for _, bad := range []string{"http://stt.example/speech/v1/stt:recognize", "ftp://stt.example/x",
		"https://user:pass@stt.example/x", "stt.example/x", "https:///x", "::"} {
		_, err := speechkit.New(speechkit.Config{APIKey: "k", SyncURL: bad})
		require.Error(t, err, bad)
		require.NotContains(t, err.Error(), "pass", "the URL is not echoed")
	}
	_, err := speechkit.New(speechkit.Config{APIKey: "k", SyncURL: "http://127.0.0.1:1/x", Insecure: true})
	require.NoError(t, err)
	_, err = speechkit.New(speechkit.Config{APIKey: "k"})
	require.NoError(t, err, "the default, %s", speechkit.DefaultSyncURL)
}

// The configured URL's own parameters stay, under the request's.
func TestSyncURLKeepsItsParameters(t *testing.T) {
	srv := speechkittest.Start(t)
	cfg := srv.Config()
	cfg.SyncURL = srv.SyncURL() + "?trace=1&lang=xx"
	c := mustClient(t, cfg)
	_, err := recognizeSync(t, c, speechkit.SyncRequest{Audio: voiceNote(2_000)})
	require.NoError(t, err)
	q := srv.SyncCalls()[0].Query
	require.Equal(t, "1", q.Get("trace"))
	require.Equal(t, []string{"ru-RU"}, q["lang"])
}

func TestRecognizeSyncAfterClose(t *testing.T) {
	srv := speechkittest.Start(t)
	c, err := speechkit.New(srv.Config())
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = c.RecognizeSync(context.Background(), speechkit.SyncRequest{Audio: voiceNote(2_000)})
	require.Error(t, err)
	require.Zero(t, srv.SyncCallCount())
}
