package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/localstack"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/telegram/telegramtest"
	"transcriber/internal/telegram/tgconf"
	"transcriber/internal/transcript"
)

// selftestStack is a local stack run in this process, with SpeechKit and
// the Bot API faked.
type selftestStack struct {
	api, token string
	sk         *speechkittest.Server
	tg         *telegramtest.Server
}

// startSelftestStack runs the local stack on free ports until the test
// ends. The fake SpeechKit recognizes every recording, asynchronously and
// synchronously, as the bundled sample's text.
func startSelftestStack(t *testing.T) selftestStack {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is needed on PATH (apt-get install ffmpeg)")
	}
	st := selftestStack{sk: speechkittest.Start(t), tg: telegramtest.Start(t)}
	st.hearTheSample()

	cfg := localstack.Config{
		HTTPAddr: "127.0.0.1:0", S3Addr: "127.0.0.1:0", DataDir: t.TempDir(),
		PollInterval: 200 * time.Millisecond, Shutdown: time.Second, Log: logs.Logger(t),
	}
	cfg.App.SpeechKit = st.sk.Config()
	cfg.App.SyncMaxDuration = speechkit.MaxSyncDuration
	cfg.App.Telegram = tgconf.Config{Token: telegramtest.Token, WebhookSecret: "selftest-webhook-secret",
		APIURL: st.tg.URL, Allowed: tgconf.Allowed{Everyone: true}}
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- localstack.Run(ctx, cfg, w)
		_ = w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	sc := bufio.NewScanner(r)
	for st.token == "" && sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 2 && f[0] == "api:":
			st.api = f[1]
		case len(f) >= 2 && f[0] == "token:":
			st.token = f[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	require.True(t, strings.HasPrefix(st.token, "trk_"), "the stack did not start")
	logs.Secret("the stack's API token", st.token)
	return st
}

// hearTheSample makes the fake SpeechKit recognize every recording, at
// both endpoints, as the bundled sample's text.
func (st selftestStack) hearTheSample() {
	st.sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		return speechkittest.Plan{Utterances: []transcript.Utterance{{
			EndMs: 4600, Text: strings.ToLower(strings.TrimSpace(sampleText)), Normal: strings.TrimSpace(sampleText),
		}}}
	})
	st.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Text: strings.TrimSpace(sampleText)}
	})
}

// registerWebhook sets the bot's webhook at the fake Bot API, as
// Terraform's terraform_data.webhook does at Telegram.
func (st selftestStack) registerWebhook(t *testing.T, u string) {
	t.Helper()
	resp, err := http.PostForm(st.tg.URL+"/bot"+telegramtest.Token+"/setWebhook", url.Values{"url": {u}})
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// selftestEnv is the environment of a selftest with --bot against st.
func (st selftestStack) env() func(string) string {
	return env(map[string]string{"TELEGRAM_BOT_TOKEN": telegramtest.Token, "TELEGRAM_API_URL": st.tg.URL})
}

// runSelftest runs `transcriber selftest` with args and returns its
// output and error.
func runSelftest(t *testing.T, getenv func(string) string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"selftest"}, args...), getenv, &out)
	require.False(t, errors.Is(err, errUsage), "%v", err)
	return out.String(), err
}

// jobsOf lists the jobs of the stack's token, deleted ones included.
func (st selftestStack) jobsOf(t *testing.T) []map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, st.api+"/v1/jobs?limit=100", nil)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", st.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var list struct {
		Jobs []map[string]any `json:"jobs"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	return list.Jobs
}

// checkLines are the PASS/FAIL lines of a text run, by check name.
func checkLines(t *testing.T, out string) (names []string, lines map[string]string) {
	t.Helper()
	lines = map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && (f[0] == "PASS" || f[0] == "FAIL") {
			names = append(names, f[1])
			lines[f[1]] = l
		}
	}
	return names, lines
}

var allChecks = []string{checkAPI, checkUpload, checkAsync, checkSync, checkWebhook, checkCleanup}

// On the local stack, with SpeechKit and the Bot API faked and the webhook
// the stack's, every check passes with its figure, each recognition is a
// real one, and the jobs are deleted; the token is never printed.
func TestSelftestPassesOnTheLocalStack(t *testing.T) {
	st := startSelftestStack(t)
	st.registerWebhook(t, st.api+"/telegram/webhook")
	st.tg.SetWebhookInfo(telegramtest.WebhookInfo{URL: st.api + "/telegram/webhook", PendingUpdateCount: 2})

	out, err := runSelftest(t, st.env(), "--api", st.api+"/", "--token", st.token, "--bot", "--timeout", "2m")
	require.NoError(t, err, out)
	t.Logf("the selftest's output:\n%s", out)
	names, lines := checkLines(t, out)
	require.Equal(t, allChecks, names, out)
	for _, name := range allChecks {
		l := lines[name]
		require.True(t, strings.HasPrefix(l, "PASS "), l)
		switch name {
		case checkWebhook:
			require.Contains(t, l, " 2 pending ", l)
		case checkCleanup:
			require.Contains(t, l, "2 jobs deleted", l)
		default:
			require.Regexp(t, regexp.MustCompile(`^PASS \S+ +\d+ ms  `), l)
		}
	}
	require.Contains(t, lines[checkAsync], "(async)")
	require.Contains(t, lines[checkSync], "(sync)")
	require.Contains(t, out, "selftest passed: 6 checks")
	require.NotContains(t, out, st.token)
	require.NotContains(t, out, telegramtest.Token)
	require.Equal(t, 1, st.sk.RecognizeCalls(), "the normal job was recognized asynchronously")
	require.Equal(t, 1, st.sk.SyncCallCount(), "the fast job was recognized synchronously")
	jobs := st.jobsOf(t)
	require.Len(t, jobs, 2)
	for _, j := range jobs {
		require.NotEmpty(t, j["deleted_at"], "job %v was not deleted", j["id"])
		require.Equal(t, "en-US", j["language"], "the bundled sample's language")
	}

	// The same as one JSON object.
	out, err = runSelftest(t, st.env(), "--api", st.api, "--token", st.token, "--bot", "--json")
	require.NoError(t, err, out)
	var rep struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Ms     *int64 `json:"ms"`
			Detail string `json:"detail"`
		} `json:"checks"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&rep), out)
	require.False(t, dec.More(), "one object and nothing else: %s", out)
	require.True(t, rep.OK)
	require.Len(t, rep.Checks, len(allChecks))
	for i, c := range rep.Checks {
		require.Equal(t, allChecks[i], c.Name)
		require.True(t, c.OK, c.Detail)
		require.NotNil(t, c.Ms)
		require.NotEmpty(t, c.Detail)
	}
	require.NotContains(t, out, st.token)
	require.Equal(t, 2, st.sk.RecognizeCalls())
	require.Equal(t, 2, st.sk.SyncCallCount())
}

// With SpeechKit refusing every request, asynchronous and synchronous,
// the run fails naming both recognition checks; the API, the upload, the
// webhook (though the recognitions took the run's time) and the cleanup
// pass.
func TestSelftestNamesTheRecognitionChecksWhenSpeechKitRefuses(t *testing.T) {
	st := startSelftestStack(t)
	st.registerWebhook(t, st.api+"/telegram/webhook")
	st.sk.Down(func() bool { return true })
	st.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Status: http.StatusForbidden, ErrorCode: "PERMISSION_DENIED"}
	})

	out, err := runSelftest(t, st.env(), "--api", st.api, "--token", st.token, "--bot", "--timeout", "15s")
	require.Error(t, err)
	t.Logf("the selftest's output:\n%s", out)
	require.Contains(t, err.Error(), "2 of 6 checks failed: recognition-async, recognition-sync")
	names, lines := checkLines(t, out)
	require.Equal(t, allChecks, names, out)
	for _, name := range []string{checkAPI, checkUpload, checkWebhook, checkCleanup} {
		require.True(t, strings.HasPrefix(lines[name], "PASS "), lines[name])
	}
	for _, name := range []string{checkAsync, checkSync} {
		l := lines[name]
		require.True(t, strings.HasPrefix(l, "FAIL "), l)
		require.Contains(t, l, "the run's time ran out", l)
		require.Contains(t, l, "logs", l, "a failure says where to look")
	}
	require.NotContains(t, out, "selftest passed")
	for _, j := range st.jobsOf(t) {
		require.NotEmpty(t, j["deleted_at"], "job %v was not deleted", j["id"])
	}
}

// A transcript without the expected words fails the recognition checks;
// --audio and --expect give the recording and its words instead of the
// bundled sample, --lang its language. A fast job recognized
// asynchronously, when the synchronous API refuses it, fails
// recognition-sync alone.
func TestSelftestJudgesEachRecognition(t *testing.T) {
	st := startSelftestStack(t)
	st.sk.Script(nil) // the fake's own "привет мир"
	st.sk.SyncScript(nil)

	_, err := runSelftest(t, st.env(), "--api", st.api, "--token", st.token, "--timeout", "1m")
	require.ErrorContains(t, err, "2 of 5 checks failed: recognition-async, recognition-sync")

	audio := filepath.Join(t.TempDir(), "greeting.ogg")
	require.NoError(t, os.WriteFile(audio, sampleAudio, 0o600))
	out, err := runSelftest(t, st.env(), "--api", st.api, "--token", st.token, "--timeout", "1m",
		"--audio", audio, "--expect", "Привет, мир!", "--lang", "ru-RU")
	require.NoError(t, err, out)
	var langs []any
	for _, j := range st.jobsOf(t)[:2] { // newest first: the second run's
		langs = append(langs, j["language"])
	}
	require.Equal(t, []any{"ru-RU", "ru-RU"}, langs)

	st.hearTheSample()
	st.sk.SyncScript(func(speechkittest.SyncCall) speechkittest.SyncPlan {
		return speechkittest.SyncPlan{Status: http.StatusForbidden, ErrorCode: "PERMISSION_DENIED"}
	})
	out, err = runSelftest(t, st.env(), "--api", st.api, "--token", st.token, "--timeout", "1m")
	require.ErrorContains(t, err, "1 of 5 checks failed: recognition-sync")
	_, lines := checkLines(t, out)
	require.Contains(t, lines[checkSync], `recognized "async", not synchronously`)
}

// With the bot's webhook registered elsewhere, or failing, the run fails
// naming telegram-webhook alone.
func TestSelftestNamesTheWebhook(t *testing.T) {
	st := startSelftestStack(t)
	own := st.api + "/telegram/webhook"
	for _, tc := range []struct {
		name string
		info telegramtest.WebhookInfo
		want string
	}{
		{"elsewhere", telegramtest.WebhookInfo{URL: "https://elsewhere.example/telegram/webhook"}, "not this installation's " + own},
		{"none", telegramtest.WebhookInfo{}, "the bot has no webhook"},
		{"failing", telegramtest.WebhookInfo{URL: own, PendingUpdateCount: 7, LastErrorDate: 1_800_000_000,
			LastErrorMessage: "Wrong response from the webhook: 502 Bad Gateway"}, "502 Bad Gateway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st.tg.SetWebhookInfo(tc.info)
			out, err := runSelftest(t, st.env(), "--api", st.api, "--token", st.token, "--bot", "--timeout", "1m")
			require.Error(t, err)
			require.Contains(t, err.Error(), "1 of 6 checks failed: telegram-webhook")
			_, lines := checkLines(t, out)
			require.True(t, strings.HasPrefix(lines[checkWebhook], "FAIL "), out)
			require.Contains(t, lines[checkWebhook], tc.want)
			require.NotContains(t, out, telegramtest.Token)
		})
	}
}

// A wrong token fails the api check and makes no job: the checks that
// need one say they were skipped.
func TestSelftestWithAWrongTokenMakesNoJob(t *testing.T) {
	st := startSelftestStack(t)
	wrong := "trk_" + strings.Repeat("A", len(st.token)-4)
	out, err := runSelftest(t, st.env(), "--api", st.api, "--token", wrong)
	require.Error(t, err)
	require.Contains(t, err.Error(), "4 of 5 checks failed: api, upload, recognition-async, recognition-sync")
	names, lines := checkLines(t, out)
	require.Equal(t, []string{checkAPI, checkUpload, checkAsync, checkSync, checkCleanup}, names)
	require.Contains(t, lines[checkAPI], "the token was refused (401)")
	for _, name := range []string{checkUpload, checkAsync, checkSync} {
		require.Contains(t, lines[name], "skipped: the api check failed")
	}
	require.Contains(t, lines[checkCleanup], "no job was made")
	require.NotContains(t, out, wrong)
	require.NotContains(t, err.Error(), wrong)
	require.Empty(t, st.jobsOf(t), "no job was made")
	require.Zero(t, st.sk.RecognizeCalls())
	require.Zero(t, st.sk.SyncCallCount())
}

// The selftest's jobs are made with "reuse": false, which the API takes:
// a second run reaches SpeechKit again rather than being answered from the
// first run's transcript of the same sample.
func TestSelftestJobsAreRecognizedAfresh(t *testing.T) {
	st := startSelftestStack(t)
	req, err := http.NewRequest(http.MethodPost, st.api+"/v1/jobs",
		strings.NewReader(`{"filename":"x.ogg","size_bytes":5,"reuse":false}`))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", st.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, `the API takes "reuse"`)
	s := &selftest{o: selftestOptions{filename: "sample.ogg", audioBytes: []byte("x")}}
	require.Equal(t, false, s.createRequest("fast")["reuse"])
}

// fakeAPI is a stand-in for an installation that answers /healthz and
// checks the token as the API does, then answers every other request as
// answer says; it records the X-Api-Key of every request.
type fakeAPI struct {
	*httptest.Server
	mu   sync.Mutex
	keys []string
}

func startFakeAPI(t *testing.T, token string, answer http.HandlerFunc) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.keys = append(f.keys, r.Header.Get("X-Api-Key"))
		f.mu.Unlock()
		switch {
		case r.URL.Path == "/healthz":
			_, _ = io.WriteString(w, `{"status":"ok"}`)
		case r.Header.Get("X-Api-Key") != token && !strings.HasSuffix(r.Header.Get("Authorization"), token):
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"code":"unauthorized","message":"a valid API token is required"}}`)
		default:
			answer(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// An answer that echoes the token does not put it on the output: neither
// in the lines nor in the JSON.
func TestSelftestNeverPrintsTheToken(t *testing.T) {
	const token = "trk_echoedEchoedEchoedEchoedEchoedEchoedEcho"
	api := startFakeAPI(t, token, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"code":"internal","message":"bad token `+token+`"}}`)
	})
	for _, args := range [][]string{{}, {"--json"}} {
		out, err := runSelftest(t, env(nil), append([]string{"--api", api.URL, "--token", token, "--timeout", "10s"}, args...)...)
		require.Error(t, err)
		require.Contains(t, out, "[redacted]", "the echo reached the detail, scrubbed")
		require.NotContains(t, out, token)
		require.NotContains(t, err.Error(), token)
	}
}

// A redirect is not followed: the token, sent as X-Api-Key, does not go
// to wherever it points.
func TestSelftestFollowsNoRedirect(t *testing.T) {
	const token = "trk_redirectRedirectRedirectRedirectRedirectR"
	var elsewhere fakeAPI
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.mu.Lock()
		elsewhere.keys = append(elsewhere.keys, r.Header.Get("X-Api-Key"))
		elsewhere.mu.Unlock()
	}))
	t.Cleanup(other.Close)
	api := startFakeAPI(t, token, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	out, err := runSelftest(t, env(nil), "--api", api.URL, "--token", token, "--timeout", "10s")
	require.Error(t, err)
	_, lines := checkLines(t, out)
	require.Contains(t, lines[checkAPI], "HTTP 307")
	require.Empty(t, elsewhere.keys, "the redirect was followed")
}

// An upload the storage refuses fails the upload check; the recognition
// checks say they were skipped, and the job made is deleted.
func TestSelftestSkipsTheRecognitionsAfterAFailedUpload(t *testing.T) {
	const token = "trk_uploadUploadUploadUploadUploadUploadUpl"
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(storage.Close)
	var mu sync.Mutex
	var deleted []string
	api := startFakeAPI(t, token, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/jobs":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"01jd0m3y8k9q2r5t7v4w6x8z0a","state":"awaiting_upload",`+
				`"upload":{"method":"PUT","url":"`+storage.URL+`/sources/01jd0m3y8k9q2r5t7v4w6x8z0a?X-Amz-Signature=abc","headers":{}}}`)
		case r.Method == http.MethodDelete:
			mu.Lock()
			deleted = append(deleted, r.URL.Path)
			mu.Unlock()
			_, _ = io.WriteString(w, `{}`)
		default:
			_, _ = io.WriteString(w, `{"day":{}}`)
		}
	})
	out, err := runSelftest(t, env(nil), "--api", api.URL, "--token", token, "--timeout", "10s")
	require.ErrorContains(t, err, "3 of 5 checks failed: upload, recognition-async, recognition-sync")
	_, lines := checkLines(t, out)
	require.Contains(t, lines[checkUpload], "refused the PUT to its upload URL (HTTP 403)")
	require.NotContains(t, out, "X-Amz-Signature", "the upload URL is not printed")
	require.Contains(t, lines[checkAsync], "skipped: the upload check failed")
	require.Contains(t, lines[checkSync], "skipped: the upload check failed")
	require.Contains(t, lines[checkCleanup], "1 jobs deleted")
	require.Equal(t, []string{"/v1/jobs/01jd0m3y8k9q2r5t7v4w6x8z0a"}, deleted)
}

func TestSelftestRefusesBadCommandLines(t *testing.T) {
	for _, args := range [][]string{
		{"selftest"},
		{"selftest", "--bogus"},
		{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "extra"},
		{"selftest", "--api", "http://127.0.0.1:1"},
		{"selftest", "--token", "t"},
		{"selftest", "--api", "ftp://127.0.0.1:1", "--token", "t"},
		{"selftest", "--api", "127.0.0.1:8080", "--token", "t"},
		{"selftest", "--api", "http://127.0.0.1:1?x=1", "--token", "t"},
		{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "--timeout", "0s"},
		{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "--timeout", "soon"},
		{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "--audio", "a.ogg"},
		{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "--expect", "hello"},
		{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "--lang", "ru-RU"},
		{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "--audio", "a.ogg", "--expect", "…"},
		{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "--json=maybe"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), args, env(nil), &out)
		require.ErrorIs(t, err, errUsage, "%q", args)
		require.Empty(t, out.String(), "%q", args)
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"selftest", "-h"}, env(nil), &out))
	require.Contains(t, out.String(), "usage: transcriber selftest --api URL --token TOKEN")
	out.Reset()
	err := run(context.Background(), []string{"selftest", "--store", "extra"}, env(map[string]string{"YDB_CONNECTION_STRING": "grpc://127.0.0.1:1/local"}), &out)
	require.ErrorIs(t, err, errUsage)
	err = run(context.Background(), []string{"selftest", "--store"}, env(nil), &out)
	require.ErrorContains(t, err, "YDB_CONNECTION_STRING")
	// --bot without the bot's token, or an --audio that is not there, is
	// refused before anything is sent.
	err = run(context.Background(), []string{"selftest", "--api", "http://127.0.0.1:1", "--token", "t", "--bot"}, env(nil), &out)
	require.ErrorContains(t, err, "TELEGRAM_BOT_TOKEN")
	err = run(context.Background(), []string{"selftest", "--api", "http://127.0.0.1:1", "--token", "t",
		"--audio", filepath.Join(t.TempDir(), "missing.ogg"), "--expect", "hello"}, env(nil), &out)
	require.ErrorContains(t, err, "missing.ogg")
	require.Empty(t, out.String())
}

// The bundled sample is what recognition-sync needs: one Ogg Opus stream
// of one channel, whole, of a few seconds, with its words.
func TestSelftestSampleIsAShortMonoVoiceNote(t *testing.T) {
	w, err := oggopus.Check(sampleAudio)
	require.NoError(t, err)
	require.Equal(t, 1, w.Channels)
	require.Greater(t, w.Ms(), int64(2000))
	require.Less(t, w.Ms(), int64(10_000))
	require.Less(t, len(sampleAudio), 32<<10)
	require.GreaterOrEqual(t, len(words(sampleText)), 8)
}

func TestHeardCountsEachExpectedWordOnce(t *testing.T) {
	for _, tc := range []struct {
		transcript, expected string
		got, want            int
	}{
		{"Hello, this is a short test.", "hello this is a short test", 6, 6},
		{"hello hello", "hello hello hello", 2, 3},
		{"Ёлка", "елка", 1, 1},
		{"", "one two", 0, 2},
		{"the the the the", "the cat sat on the mat", 2, 6},
	} {
		got, want := heard(tc.transcript, tc.expected)
		require.Equal(t, [2]int{tc.got, tc.want}, [2]int{got, want}, "%q in %q", tc.expected, tc.transcript)
	}
}
