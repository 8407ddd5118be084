package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"

	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/telegram"
	"transcriber/internal/telegram/telegramtest"
)

// localProc is a running `transcriber local`, started as its own process.
type localProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	api     string
	objects string // the object store's URL
	token   string
	resumed string // how many held jobs the start took back, when it said
	output  *syncBuffer
	exited  chan error
}

// syncBuffer is the process's stderr: written by exec's copier while the
// test reads it for failure messages.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// buildBinary builds the command from this package's source.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "transcriber")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

func startLocal(t *testing.T, bin string, env []string) *localProc {
	t.Helper()
	cmd := exec.Command(bin, "local")
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	p := &localProc{t: t, cmd: cmd, output: stderr, exited: make(chan error, 1)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range p.exited { // wait for the process to be reaped
		}
		// The process's log, every line of it, goes to the scan.
		_, _ = logs.Write([]byte(stderr.String()))
	})

	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		p.exited <- cmd.Wait()
		close(p.exited)
	}()
	deadline := time.After(30 * time.Second)
	for announced := false; !announced; {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "transcriber local exited early: %s", stderr.String())
			f := strings.Fields(l)
			switch {
			case len(f) >= 2 && f[0] == "api:":
				p.api = f[1]
			case len(f) >= 2 && f[0] == "objects:":
				p.objects = f[1]
			case len(f) >= 2 && f[0] == "resumed:":
				p.resumed = f[1]
			case len(f) >= 2 && f[0] == "token:":
				// The last line of the announcement: a secret, or how to make one.
				announced = true
				if strings.HasPrefix(f[1], "trk_") {
					p.token = f[1]
					logs.Secret("the stack's API token", p.token)
				}
			}
		case <-deadline:
			t.Fatalf("transcriber local did not start: %s", stderr.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	return p
}

func (p *localProc) call(method, path, token string, body io.Reader, out any) int {
	p.t.Helper()
	req, err := http.NewRequest(method, p.api+path, body)
	require.NoError(p.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(p.t, err)
	if out != nil {
		if s, ok := out.(*string); ok {
			*s = string(b)
		} else {
			require.NoError(p.t, json.Unmarshal(b, out), "%s", b)
		}
	}
	return resp.StatusCode
}

type procJob struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Upload struct {
		URL string `json:"url"`
	} `json:"upload"`
	Error *struct{ Code string } `json:"error"`
}

// submit creates a job for file and uploads it as curl --upload-file does.
func (p *localProc) submit(token, file string) procJob {
	p.t.Helper()
	body, err := os.ReadFile(file)
	require.NoError(p.t, err)
	var j procJob
	// "reuse": false: the same note is sent again and again, each to be
	// recognized, as the process's tests count recognitions.
	status := p.call(http.MethodPost, "/v1/jobs", token,
		strings.NewReader(fmt.Sprintf(`{"filename":%q,"size_bytes":%d,"reuse":false}`, filepath.Base(file), len(body))), &j)
	require.Equal(p.t, http.StatusCreated, status)
	req, err := http.NewRequest(http.MethodPut, j.Upload.URL, bytes.NewReader(body))
	require.NoError(p.t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	_ = resp.Body.Close()
	require.Equal(p.t, http.StatusOK, resp.StatusCode)
	return j
}

// put PUTs body to u as a plain HTTP client does and returns the status.
func (p *localProc) put(u, body string) int {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodPut, u, strings.NewReader(body))
	require.NoError(p.t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// waitState polls the job until it is in state, or fails after a while.
func (p *localProc) waitState(token, id, state string) procJob {
	p.t.Helper()
	deadline := time.Now().Add(45 * time.Second) //nolint:forbidigo // a real process runs on real time
	for {
		var j procJob
		require.Equal(p.t, http.StatusOK, p.call(http.MethodGet, "/v1/jobs/"+id, token, nil, &j))
		if j.State == state {
			return j
		}
		require.NotContains(p.t, []string{"failed", "dead"}, j.State, "job ended %s: %+v; log: %s", j.State, j.Error, p.output)
		require.True(p.t, time.Now().Before(deadline), "job %s still %s; log: %s", id, j.State, p.output) //nolint:forbidigo // as above
		time.Sleep(100 * time.Millisecond)
	}
}

func voiceNote(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed (apt-get install ffmpeg)")
	}
	f := filepath.Join(t.TempDir(), "note.ogg")
	out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=duration=3",
		"-c:a", "libopus", f).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return f
}

// The real `transcriber local` process, configured only through its
// environment, with a scripted SpeechKit: a client creates a job, uploads,
// sees it done and fetches every format; then a job interrupted by a
// shutdown is finished by the next start.
func TestLocalStackProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real process")
	}
	note := voiceNote(t)
	sk := speechkittest.Start(t)
	tg := telegramtest.Start(t)
	bin := buildBinary(t)
	data := t.TempDir()
	env := []string{
		"DATA_DIR=" + data, "HTTP_ADDR=127.0.0.1:0", "LOCAL_S3_ADDR=127.0.0.1:0", "POLL_INTERVAL=200ms",
		"SHUTDOWN_TIMEOUT=1s", "SPEECHKIT_ENDPOINT=" + sk.Addr(), "SPEECHKIT_OPERATION_ENDPOINT=" + sk.Addr(),
		"SPEECHKIT_INSECURE=true", "SPEECHKIT_API_KEY=" + speechkittest.TestKey, "LOG_LEVEL=debug",
		"TELEGRAM_BOT_TOKEN=" + telegramtest.Token, "TELEGRAM_API_URL=" + tg.URL,
		"TELEGRAM_WEBHOOK_SECRET=" + procWebhookSecret, "TELEGRAM_ALLOWED_USERS=*",
	}

	p := startLocal(t, bin, env)
	require.NotEmpty(t, p.token, "the first start hands out a token")
	token := p.token

	// The object store takes only what the stack signed: an upload URL with
	// another signature starts nothing, nor does a request without one.
	var forged procJob
	require.Equal(t, http.StatusCreated, p.call(http.MethodPost, "/v1/jobs", token, strings.NewReader(`{"filename":"x.ogg","size_bytes":5}`), &forged))
	require.Equal(t, http.StatusForbidden, p.put(forged.Upload.URL+"0", "hello"))
	require.Equal(t, http.StatusForbidden, p.put(p.objects+"/transcriber/sources/"+forged.ID, "hello"))

	j := p.submit(token, note)
	p.waitState(token, j.ID, "done")
	var still procJob
	require.Equal(t, http.StatusOK, p.call(http.MethodGet, "/v1/jobs/"+forged.ID, token, nil, &still))
	require.Equal(t, "awaiting_upload", still.State, "the refused uploads started nothing")
	resp, err := http.Get(p.objects + "/transcriber/results/" + j.ID + ".json")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "transcripts are not readable without a signature")

	for _, f := range []string{"txt", "srt", "vtt", "json"} {
		var body string
		require.Equal(t, http.StatusOK, p.call(http.MethodGet, "/v1/jobs/"+j.ID+"/transcript?format="+f, token, nil, &body), f)
		require.Contains(t, body, "ривет", f)
	}
	require.Equal(t, 1, sk.RecognizeCalls())

	// A voice note through the webhook route comes back in the chat.
	noteBytes, err := os.ReadFile(note)
	require.NoError(t, err)
	tg.AddFile("note-1", noteBytes)
	p.webhook(telegramtest.Voice(1, 601, 5, "note-1", len(noteBytes), "ru"))
	p.waitChat(tg, 1)
	require.Equal(t, 2, sk.RecognizeCalls())

	// A recognition that outlasts the process: stop it mid-job.
	sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
		plan := speechkittest.DefaultPlan()
		plan.PendingChecks = 1 << 30
		return plan
	})
	slow := p.submit(token, note)
	p.waitState(token, slow.ID, "transcribe")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.exited:
		require.NoError(t, err, "a clean exit on SIGTERM: %s", p.output)
	case <-time.After(15 * time.Second):
		t.Fatalf("transcriber local did not stop on SIGTERM: %s", p.output)
	}

	sk.FinishAll()
	// This time updates come by long polling.
	again := startLocal(t, bin, append(env, "TELEGRAM_POLL=true"))
	require.Empty(t, again.token, "a token is handed out only at the first start")
	again.waitState(token, slow.ID, "done")
	require.Equal(t, 3, sk.RecognizeCalls(), "the interrupted job was not submitted again")

	sk.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan { return speechkittest.DefaultPlan() })
	tg.AddFile("note-2", noteBytes)
	tg.Queue(telegramtest.Voice(2, 602, 6, "note-2", len(noteBytes), "en"))
	again.waitChat(tg, 2)
	require.NoError(t, again.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-again.exited, "a clean exit on SIGTERM: %s", again.output)
	for _, out := range []*syncBuffer{p.output, again.output} {
		require.NotContains(t, out.String(), telegramtest.Token, "the bot token reached the log")
		// The log is JSON lines, net/http's own complaints included.
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			require.True(t, json.Valid([]byte(line)), "a log line that is not JSON: %s", line)
		}
	}
}

const procWebhookSecret = "process-test-secret"

// webhook posts an update to the process's webhook route, as Telegram does.
func (p *localProc) webhook(update []byte) {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.api+telegram.WebhookPath, bytes.NewReader(update))
	require.NoError(p.t, err)
	req.Header.Set(telegram.SecretHeader, procWebhookSecret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	_ = resp.Body.Close()
	require.Equal(p.t, http.StatusOK, resp.StatusCode, "log: %s", p.output)
}

// waitChat waits until n transcripts have reached the fake Bot API as
// edits of status messages.
func (p *localProc) waitChat(tg *telegramtest.Server, n int) {
	p.t.Helper()
	deadline := time.Now().Add(45 * time.Second) //nolint:forbidigo // a real process runs on real time
	for {
		got := 0
		for _, c := range tg.Calls("editMessageText") {
			if strings.Contains(c.Params["text"], "ривет") {
				got++
			}
		}
		if got >= n {
			return
		}
		require.True(p.t, time.Now().Before(deadline), "%d of %d transcripts in the chat; calls: %+v; log: %s", got, n, tg.Calls(), p.output) //nolint:forbidigo // as above
		time.Sleep(100 * time.Millisecond)
	}
}

func TestCORSOrigins(t *testing.T) {
	got, err := corsOrigins(" https://app.example/, http://localhost:3000 ,,")
	require.NoError(t, err)
	require.Equal(t, []string{"https://app.example", "http://localhost:3000"}, got)
	got, err = corsOrigins("*")
	require.NoError(t, err)
	require.Equal(t, []string{"*"}, got)
	got, err = corsOrigins("")
	require.NoError(t, err)
	require.Empty(t, got)
	for _, bad := range []string{"app.example", "https://app.example/path", "ftp://app.example", "https://", "https://u@app.example"} {
		_, err := corsOrigins(bad)
		require.Error(t, err, bad)
		require.ErrorContains(t, err, "CORS_ALLOWED_ORIGINS")
	}
}
